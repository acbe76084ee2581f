"""``mx.attribute``: ``AttrScope`` (also ``mx.AttrScope``), the attributes every symbol made in
its ``with`` block gets (see :class:`kvcli.symbol.attrs.AttrScope`)."""

from kvcli.symbol.attrs import AttrScope
from kvcli.mx.scope import guard as _scope_guard

__all__ = ["AttrScope"]


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
