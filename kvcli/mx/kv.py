"""``mx.kv``: ``create(type)`` returns a store that speaks NDArray.

It is the kvcli store itself with two MXNet courtesies: updaters receive NDArrays (so code
that calls ``.asnumpy()`` on them works), and ``pull`` without ``out`` returns NDArrays.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kvcli.nd_sparse import wrap as _as_nd
from kvcli.store.base import Key
from kvcli.store.base import KVStore as _CoreStore


class KVStore:
    """An MXNet-flavoured view of a :class:`kvcli.store.base.KVStore`."""

    def __init__(self, store: _CoreStore) -> None:
        self._store = store

    @property
    def store(self) -> _CoreStore:
        """The underlying kvcli store."""
        return self._store

    def set_updater(self, updater: Callable[[Key, Any, Any], None] | str | None) -> None:
        """Set the updater; a callable receives ``(key, input, stored)`` as NDArrays."""
        if callable(updater) and not hasattr(updater, "spec"):
            user_updater = updater

            def updater(key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
                user_updater(key, _as_nd(merged), _as_nd(stored))  # row-sparse stays row-sparse

        self._store.set_updater(updater)

    _set_updater = set_updater

    def pull(self, key: Any, out: Any = None, priority: int = 0, ignore_sparse: bool = True) -> Any:
        result = self._store.pull(key, out=out, priority=priority, ignore_sparse=ignore_sparse)
        return _wrap(result) if out is None else out

    def row_sparse_pull(self, key: Any, out: Any = None, priority: int = 0, row_ids: Any = None) -> Any:
        result = self._store.row_sparse_pull(key, out=out, priority=priority, row_ids=row_ids)
        return _wrap(result) if out is None else out

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> Any:
        result = self._store.pushpull(key, value, out=out, priority=priority)
        return _wrap(result) if out is None else out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def __enter__(self) -> "KVStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self._store.close()

    def __repr__(self) -> str:
        return f"<mx.kv.KVStore type={self._store.type!r}>"


def _wrap(result: Any) -> Any:
    if isinstance(result, list):
        return [_wrap(r) for r in result]
    return _as_nd(result)


def create(name: str = "local", **options: Any) -> KVStore:
    """``mx.kv.create('local' | 'device' | 'dist_sync' | 'dist_async')``."""
    from kvcli.store import create as create_store

    return KVStore(create_store(name, **options))


__all__ = ["KVStore", "create"]
