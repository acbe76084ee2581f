"""Row-sparse keys on ``dist_sync`` / ``dist_async``: the row ranges of a value.

A row-sparse key is laid out by rows like a dense one (:func:`~kvcli.store.ray.group.layout_of`);
each server holds a :class:`~kvcli.arrays.sparse.RowSparse` of its row range, with row ids
counted from the range's start. A push sends each server only the rows of its range (every
server still gets the step, maybe with no rows, so dist_sync's counters stay in step);
``row_sparse_pull`` asks each server for only the requested rows
(:meth:`~kvcli.store.ray.store.RayBackend.read_rows`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kvcli.arrays.core import ArrayInfo
from kvcli.arrays.sparse import RowSparse
from kvcli.store.ray.group import Layout


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


def rows_by_server(ids: np.ndarray, layout: Layout) -> list[tuple[int, np.ndarray]]:
    """The servers holding any of the sorted row ids ``ids``, with those ids counted from
    each server's range start (a server holding the whole key is always asked)."""
    asked = []
    for server, part in layout:
        if part is None:
            asked.append((server, ids))
            continue
        lo, hi = np.searchsorted(ids, [part.start, part.stop])
        if hi > lo:
            asked.append((server, ids[lo:hi] - part.start))
    return asked


def joined_rows(ids: np.ndarray, parts: list[np.ndarray], info: ArrayInfo) -> RowSparse:
    """The rows ``ids`` of a key from the data its servers sent for them, in server order."""
    data = parts[0] if len(parts) == 1 else np.concatenate(
        parts or [np.zeros((0, *info.shape[1:]), info.dtype)], axis=0
    )
    return RowSparse._trusted(np.array(data, copy=True), ids, info.shape)
