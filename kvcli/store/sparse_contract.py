"""The row-sparse half of the KVStore contract (a mixin of :class:`kvcli.store.base.KVStore`).

MXNet's rules for row-sparse values, written once for every backend: how a push with
row-sparse values (or to a row-sparse key) is summed and applied, which outputs a pull
writes, and what ``row_sparse_pull`` checks and copies. Backends that keep their values in
this process (``local``, ``device``) store row-sparse ones in ``self._sparse``; the
distributed store overrides the storage hooks (``_write_sparse``, ``_read_sparse``,
``_read_rows``, ``_apply_sparse``) to keep them on its servers.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from kvcli.errors import ArityError, RowSparseError, ShapeMismatchError
from kvcli.arrays.sparse import DEFAULT, ROW_SPARSE, RowSparse, as_row_sparse, check_row_ids, merge
from kvcli.arrays.core import Key



class RowSparseContract:
    """Row-sparse methods of a KVStore; they use its ``_info``, ``_updater``, ``_sparse``
    and dense hooks (``_stored``, ``_read``, ``_reduce``, ``_apply``, ``_forget``)."""

    _info: dict[Key, Any]
    _updater: Any
    _sparse: dict[Key, RowSparse]
    _pushed_rows: dict[Key, np.ndarray]

    if TYPE_CHECKING:  # the dense hooks, defined by KVStore (declared for the type checker only)
        def _forget(self, key: Key) -> None: ...
        def _reduce(self, key: Key, arrays: Sequence[np.ndarray]) -> np.ndarray: ...
        def _apply(self, key: Key, merged: np.ndarray) -> None: ...
        def _stored(self, key: Key) -> np.ndarray: ...
        def _read(self, key: Key) -> np.ndarray: ...
        def _info_of(self, key: Key) -> Any: ...
        def _check_array(self, key: Key, array: Any, info: Any, verb: str) -> None: ...
        def _out_buffers(self, key: Key, out: Any) -> list[np.ndarray]: ...

    def _row_ids_for(self, key: Key, row_ids: Any, count: int) -> list[np.ndarray]:
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
        rows_total = self._info[key].shape[0]
        what = f"row_sparse_pull of key {key!r}"
        return [check_row_ids(ids, rows_total, what) for ids in per_output]

    def _write_sparse(self, key: Key, value: RowSparse) -> None:
        """Store ``value`` (a copy the store owns) as the row-sparse value of ``key``."""
        self._sparse[key] = value

    def _stored_sparse(self, key: Key) -> RowSparse:
        """The stored row-sparse value of ``key``, changed in place by the updater."""
        return self._sparse[key]

    def _read_sparse(self, key: Key) -> RowSparse:
        """The whole row-sparse value a pull copies out (read-only use)."""
        return self._stored_sparse(key)

    def _read_rows(self, key: Key, rows: list[np.ndarray]) -> list[RowSparse]:
        """For each checked id array, those rows of ``key`` (new arrays)."""
        stored = self._read_sparse(key)
        return [stored.rows(ids) for ids in rows]

    def _forget_storage(self, key: Key) -> None:
        self._forget(key)
        self._sparse.pop(key, None)
        self._pushed_rows.pop(key, None)

    def _reduce_push(self, key: Key, values: Sequence[np.ndarray | RowSparse]) -> tuple[bool, Any]:
        """``(row-sparse rules?, the sum)`` of one key's pushed values.

        A push with row-sparse values, or to a row-sparse key, is summed by row with
        :func:`~kvcli.arrays.sparse.merge` (no backend buffer: its cost follows the rows
        pushed); every other push by the backend's :meth:`_reduce`.
        """
        if self._info[key].stype == ROW_SPARSE or any(isinstance(v, RowSparse) for v in values):
            return True, merge(values)
        return False, self._reduce(key, values)  # type: ignore[arg-type]

    def _apply_push(self, key: Key, reduced: tuple[bool, Any]) -> None:
        sparse, merged = reduced
        if sparse:
            self._apply_sparse(key, merged)
        else:
            self._pushed_rows.pop(key, None)
            self._apply(key, merged)

    def _apply_sparse(self, key: Key, merged: np.ndarray | RowSparse) -> None:
        """Apply a push under MXNet's row-sparse rules.

        The updater gets the row-sparse sum (a dense one when only dense values were pushed)
        and the stored value: a :class:`RowSparse` for a row-sparse key, the dense array
        otherwise. With no updater the sum replaces the stored value, which keeps its
        storage type.
        """
        if self._info[key].stype == DEFAULT:
            stored_dense = self._stored(key)
            self._pushed_rows.pop(key, None)
            if self._updater is None:
                merged.to_dense(out=stored_dense)  # type: ignore[union-attr]
                # MXNet's key holds the row-sparse sum now: a row-sparse pull lists the rows
                # pushed, zero ones included (Gluon pulls sparse gradients back this way)
                self._pushed_rows[key] = merged.indices  # type: ignore[union-attr]
            else:
                self._updater(key, merged, stored_dense)
            return
        stored = self._stored_sparse(key)
        if self._updater is None:
            stored.assign(merged if isinstance(merged, RowSparse) else RowSparse.from_dense(merged))
            return
        indices = stored.indices
        self._updater(key, merged, stored)
        try:
            if stored.indices is indices and stored.data.shape == (len(indices), *stored.shape[1:]):
                return  # the rows were updated in place (an optimizer): nothing to re-check
            stored.validate()
        except (RowSparseError, ShapeMismatchError) as error:
            raise RowSparseError(f"the updater left key {key!r} malformed: {error}") from None

    def _pull_copy(self, key: Key) -> np.ndarray | RowSparse:
        if self._info[key].stype == ROW_SPARSE:
            return self._read_sparse(key).copy()
        return np.array(self._read(key), copy=True)

    def _pull_targets(self, key: Key, out: Any, ignore_sparse: bool) -> tuple[list[np.ndarray], list[RowSparse]]:
        """The dense buffers and row-sparse outputs a pull writes (checked); row-sparse
        outputs are left out while ``ignore_sparse``."""
        info = self._info_of(key)
        if type(out) is np.ndarray and out.shape == info.shape and out.dtype == info.dtype and out.flags.writeable:
            return [out], []  # the usual case: one array that fits (checked below otherwise)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if not outs:
            raise ArityError(f"pull of key {key!r} got an empty list of outputs: pass at least one")
        sparse = [as_row_sparse(o) for o in outs]
        for index, target in enumerate(sparse):
            if target is not None:
                where = f" (output {index} of {len(outs)})" if len(outs) > 1 else ""
                self._check_array(key, target, info, f"pull{where}")
        buffers = self._out_buffers(key, [o for o, t in zip(outs, sparse) if t is None]) if None in sparse else []
        targets = [t for t in sparse if t is not None]
        if targets and ignore_sparse:
            warnings.warn(
                f"pull of key {key!r} skipped {len(targets)} row-sparse output(s) (ignore_sparse=True, "
                "MXNet's default): use row_sparse_pull(..., row_ids=...) or pull(..., ignore_sparse=False)",
                stacklevel=3,
            )
            targets = []
        return buffers, targets

    def _copy_out(self, key: Key, buffers: list[np.ndarray], targets: list[RowSparse]) -> None:
        if self._info[key].stype == ROW_SPARSE:
            value = self._read_sparse(key)
            for buffer in buffers:
                value.to_dense(out=buffer)
        else:
            dense = self._read(key)
            for buffer in buffers:
                np.copyto(buffer, dense)
            if not targets:
                return
            rows = self._pushed_rows.get(key)
            value = RowSparse._trusted(dense[rows], rows, dense.shape) if rows is not None else RowSparse.from_dense(dense)
        for target in targets:
            target.assign(value)

    def _sparse_targets(self, key: Key, out: Any) -> list[RowSparse]:
        """The row-sparse outputs of a row_sparse_pull (checked; a dense one is an error)."""
        info = self._info_of(key)
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
            self._check_array(key, target, info, f"row_sparse_pull{where}")
        return targets
