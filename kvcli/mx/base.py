"""``mx.base``: ``MXNetError``, the base of every kvcli error (:class:`kvcli.errors.KVCliError`
derives from it), so ``except mx.base.MXNetError`` catches what kvcli raises; and ``py_str``."""

from __future__ import annotations

from kvcli.errors import MXNetError


def py_str(value: bytes | str) -> str:
    """A C string from MXNet's library as a Python str (kvcli's are str already)."""
    return value.decode("utf-8") if isinstance(value, bytes) else value


__all__ = ["MXNetError", "py_str"]
