"""Row-sparse keys on ``dist_sync`` / ``dist_async`` (a mixin of :class:`~kvcli.store.dist.store.DistStore`).

A row-sparse key is laid out by rows like a dense one (:func:`~kvcli.store.dist.store.layout_of`);
each server holds a :class:`~kvcli.arrays.sparse.RowSparse` of its row range, with row ids
counted from the range's start. A push sends each server only the rows of its range (every
server still gets the step, maybe with no rows, so dist_sync's counters stay in step);
``row_sparse_pull`` asks each server for only the requested rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kvcli.store.ray.group import Layout
from kvcli.arrays.sparse import RowSparse
from kvcli.arrays.core import Key



class DistRowSparse:
    """The row-sparse storage hooks of a DistStore (it provides ``_layouts``, ``_servers``,
    ``_seq``, ``_inflight``, ``_outbox``, ``_call``, ``_read`` and ``_write``)."""

    _layouts: dict[Key, Layout]
    _servers: list[Any]
    _seq: dict[Key, int]
    _inflight: list[tuple[Any, str, int]]
    _outbox: dict[int, list[tuple[Key, int, Any, Any]]]
    _info: dict[Key, Any]
    _ray: Any
    _rank: int
    _timeout: float

    if TYPE_CHECKING:  # defined by DistStore (declared for the type checker only)
        def _write(self, key: Key, value: Any) -> None: ...
        def _read(self, key: Key) -> Any: ...
        def _call(self, ref: Any, what: str, lost: str = ...) -> Any: ...
        def _invoke(self, server: int, method: str, *args: Any) -> Any: ...
        def _settle_pushes(self) -> None: ...

    def _write_sparse(self, key: Key, value: RowSparse) -> None:
        self._write(key, value)  # the layout and init calls are the same as a dense key's

    def _stored_sparse(self, key: Key) -> RowSparse:
        """A *copy* of the value: dist values live on the servers, not here."""
        return self._read_sparse(key).copy()

    def _read_sparse(self, key: Key) -> RowSparse:
        return self._read(key)  # _fetch joins the RowSparse parts

    def _apply_sparse(self, key: Key, merged: np.ndarray | RowSparse) -> None:
        """Send this worker's row sum (of its devices) to the servers, each only its rows."""
        seq = self._seq[key] = self._seq.get(key, 0) + 1
        for server, rows in self._layouts[key]:
            # every server of the key gets this step's push (maybe with no rows), so that
            # dist_sync's per-step counters stay in step
            part = merged if rows is None else rows_part(merged, rows)
            # queued with the dense keys of this push: one call per server carries them all
            self._outbox.setdefault(server, []).append((key, seq, [self._ray.put(part)], None))

    def _read_rows(self, key: Key, rows: list[np.ndarray]) -> list[RowSparse]:
        self._settle_pushes()  # this worker's pushes to other nodes are answered first
        need = self._seq.get(key, 0)
        shape = self._info[key].shape
        calls = []
        for ids in rows:
            for server, part in self._layouts[key]:
                if part is None:
                    local = ids
                else:
                    lo, hi = np.searchsorted(ids, [part.start, part.stop])
                    local = ids[lo:hi] - part.start
                    if not len(local):
                        continue
                calls.append(self._invoke(server, "pull_rows", key, self._rank, need, self._timeout, local))
        got = iter(self._call(calls, f"row_sparse_pull of key {key!r}") if calls else [])
        result = []
        for ids in rows:
            parts = [
                next(got).data
                for _, part in self._layouts[key]
                if part is None or np.searchsorted(ids, part.stop) > np.searchsorted(ids, part.start)
            ]
            data = parts[0] if len(parts) == 1 else np.concatenate(
                parts or [np.zeros((0, *shape[1:]), self._info[key].dtype)], axis=0
            )
            result.append(RowSparse._trusted(np.array(data, copy=True), ids, shape))
        return result


def rows_part(value: np.ndarray | RowSparse, rows: slice) -> np.ndarray | RowSparse:
    """The rows ``rows`` of a value, as the server holding them stores it."""
    if not isinstance(value, RowSparse):
        return value[rows]
    lo, hi = np.searchsorted(value.indices, [rows.start, rows.stop])
    shape = (rows.stop - rows.start, *value.shape[1:])
    return RowSparse._trusted(value.data[lo:hi], value.indices[lo:hi] - rows.start, shape)


def join_parts(parts: list[Any], layout: Layout) -> np.ndarray | RowSparse:
    """A value from its servers' row ranges (dense arrays or RowSparse parts)."""
    if not isinstance(parts[0], RowSparse):
        return np.concatenate(parts, axis=0)
    shape = (sum(p.shape[0] for p in parts), *parts[0].shape[1:])
    starts = [0 if rows is None else rows.start for _, rows in layout]
    indices = np.concatenate([p.indices + start for p, start in zip(parts, starts)])
    return RowSparse._trusted(np.concatenate([p.data for p in parts], axis=0), indices, shape)
