"""``mx.attribute``: ``AttrScope`` (also ``mx.AttrScope``), the attributes every symbol made in
its ``with`` block gets (see :class:`kvcli.symbol.attrs.AttrScope`)."""

from kvcli.symbol.attrs import AttrScope

__all__ = ["AttrScope"]
