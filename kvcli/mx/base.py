"""``mx.base``: ``MXNetError``, the base of every kvcli error (:class:`kvcli.errors.KVCliError`
derives from it), so ``except mx.base.MXNetError`` catches what kvcli raises."""

from kvcli.errors import MXNetError

__all__ = ["MXNetError"]
