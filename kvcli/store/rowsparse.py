"""MXNet's rules for row-sparse values: a component every :class:`~kvcli.store.api.KVStore` holds.

Written once for every backend: which pushes are summed by row, how such a push changes a
value kept in this process (the updater's arguments, what is assigned without one), which
outputs a pull writes, and what ``row_sparse_pull`` checks. Where row-sparse values live is
the backend's business (:meth:`~kvcli.store.backend.Backend.write`, ``read``, ``read_rows``,
``stored``); a :attr:`~kvcli.store.backend.Backend.remote` backend applies these pushes on
its servers.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from kvcli.arrays.core import ArrayInfo, Key
from kvcli.arrays.sparse import DEFAULT, ROW_SPARSE, RowSparse, as_row_sparse, check_row_ids
from kvcli.errors import ArityError, RowSparseError, ShapeMismatchError
from kvcli.store.backend import UpdaterFn, Value
from kvcli.store.checks import check_array, out_buffers


class RowSparseRules:
    """The row-sparse half of a store's semantics, and the one fact it keeps: which rows a
    row-sparse push wrote to a dense key (MXNet's key then holds the row-sparse sum)."""

    def __init__(self) -> None:
        #: Dense keys whose value is a row-sparse push's sum (no updater): the rows pushed.
        self.pushed_rows: dict[Key, np.ndarray] = {}

    def forget(self, key: Key) -> None:
        """``key`` was initialised again, pushed densely or deleted."""
        self.pushed_rows.pop(key, None)

    @staticmethod
    def govern(info: ArrayInfo, values: Sequence[Value]) -> bool:
        """Whether a push follows the row-sparse rules: it has row-sparse values, or its key
        holds one. Such a push is summed by row (:func:`kvcli.arrays.sparse.merge`, whose cost
        follows the rows pushed), never by the backend."""
        return info.stype == ROW_SPARSE or any(isinstance(v, RowSparse) for v in values)

    def apply_here(self, key: Key, info: ArrayInfo, merged: Value, updater: UpdaterFn | None, stored: Value) -> None:
        """Apply a row-sparse push to a value kept in this process (``stored``, writable).

        The updater gets the row-sparse sum (a dense one when only dense values were pushed)
        and the stored value: a :class:`RowSparse` for a row-sparse key, the dense array
        otherwise. With no updater the sum replaces the stored value, which keeps its
        storage type.
        """
        if info.stype == DEFAULT:
            assert isinstance(stored, np.ndarray)  # a dense key
            self.pushed_rows.pop(key, None)
            if updater is None:
                merged.to_dense(out=stored)  # type: ignore[union-attr]
                # MXNet's key holds the row-sparse sum now: a row-sparse pull lists the rows
                # pushed, zero ones included (Gluon pulls sparse gradients back this way)
                self.pushed_rows[key] = merged.indices  # type: ignore[union-attr]
            else:
                updater(key, merged, stored)
            return
        assert isinstance(stored, RowSparse)  # the key is row-sparse
        if updater is None:
            stored.assign(merged if isinstance(merged, RowSparse) else RowSparse.from_dense(merged))
            return
        indices = stored.indices
        updater(key, merged, stored)
        try:
            if stored.indices is indices and stored.data.shape == (len(indices), *stored.shape[1:]):
                return  # the rows were updated in place (an optimizer): nothing to re-check
            stored.validate()
        except (RowSparseError, ShapeMismatchError) as error:
            raise RowSparseError(f"the updater left key {key!r} malformed: {error}") from None

    @staticmethod
    def row_ids(key: Key, info: ArrayInfo, row_ids: Any, count: int) -> list[np.ndarray]:
        """One checked id array per output: ``row_ids`` is one array for all outputs or a
        list of ``count`` arrays (a list of plain numbers is one array)."""
        per_output = (
            list(row_ids)
            if isinstance(row_ids, (list, tuple)) and row_ids and not np.isscalar(row_ids[0])
            else [row_ids]
        )
        if len(per_output) == 1:
            per_output *= count
        if len(per_output) != count:
            raise ArityError(
                f"row_sparse_pull of key {key!r}: {count} outputs but {len(per_output)} row_ids; "
                "pass one row_ids for all outputs or one per output"
            )
        what = f"row_sparse_pull of key {key!r}"
        return [check_row_ids(ids, info.shape[0], what) for ids in per_output]

    @staticmethod
    def outputs(key: Key, info: ArrayInfo, out: Any, ignore_sparse: bool) -> tuple[list[np.ndarray], list[RowSparse]]:
        """The dense buffers and row-sparse outputs a pull writes (checked); row-sparse
        outputs are left out while ``ignore_sparse``."""
        if type(out) is np.ndarray and out.shape == info.shape and out.dtype == info.dtype and out.flags.writeable:
            return [out], []  # the usual case: one array that fits (checked below otherwise)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if not outs:
            raise ArityError(f"pull of key {key!r} got an empty list of outputs: pass at least one")
        sparse = [as_row_sparse(o) for o in outs]
        for index, target in enumerate(sparse):
            if target is not None:
                where = f" (output {index} of {len(outs)})" if len(outs) > 1 else ""
                check_array(key, target, info, f"pull{where}")
        dense = [o for o, t in zip(outs, sparse) if t is None]
        buffers = out_buffers(key, info, dense) if dense else []
        targets = [t for t in sparse if t is not None]
        if targets and ignore_sparse:
            warnings.warn(
                f"pull of key {key!r} skipped {len(targets)} row-sparse output(s) (ignore_sparse=True, "
                "MXNet's default): use row_sparse_pull(..., row_ids=...) or pull(..., ignore_sparse=False)",
                stacklevel=3,
            )
            targets = []
        return buffers, targets

    def copy_out(self, key: Key, value: Value, buffers: list[np.ndarray], targets: list[RowSparse]) -> None:
        """Write ``key``'s value (as the backend read it) into a pull's outputs."""
        if isinstance(value, RowSparse):
            for buffer in buffers:
                value.to_dense(out=buffer)
        else:
            for buffer in buffers:
                np.copyto(buffer, value)
            if not targets:
                return
            rows = self.pushed_rows.get(key)
            value = RowSparse._trusted(value[rows], rows, value.shape) if rows is not None else RowSparse.from_dense(value)
        for target in targets:
            target.assign(value)

    @staticmethod
    def targets(key: Key, info: ArrayInfo, out: Any) -> list[RowSparse]:
        """The row-sparse outputs of a row_sparse_pull (checked; a dense one is an error)."""
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if not outs:
            raise ArityError(f"row_sparse_pull of key {key!r} got an empty list of outputs: pass at least one")
        targets = []
        for index, o in enumerate(outs):
            where = f" (output {index} of {len(outs)})" if len(outs) > 1 else ""
            target = as_row_sparse(o)
            if target is None:
                raise RowSparseError(
                    f"row_sparse_pull of key {key!r}{where}: the output is dense ({type(o).__name__}); "
                    "pass row-sparse outputs, e.g. nd.sparse.zeros('row_sparse', shape), or use pull"
                )
            targets.append(target)
        if info.stype != ROW_SPARSE:
            raise RowSparseError(
                f"row_sparse_pull of key {key!r}: the key holds a dense value; row_sparse_pull reads "
                "keys initialised with a row-sparse value (use pull for this one)"
            )
        for index, target in enumerate(targets):
            where = f" (output {index} of {len(outs)})" if len(outs) > 1 else ""
            check_array(key, target, info, f"row_sparse_pull{where}")
        return targets


def rows_of(value: Value, rows: Sequence[np.ndarray]) -> list[RowSparse]:
    """For each checked id array, those rows of a row-sparse value kept in this process."""
    assert isinstance(value, RowSparse)  # the store checked that the key is row-sparse
    return [value.rows(ids) for ids in rows]
