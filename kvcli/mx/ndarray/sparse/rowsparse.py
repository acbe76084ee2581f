"""``RowSparseNDArray``: MXNet's row-sparse NDArray over :class:`kvcli.arrays.sparse.RowSparse`.

A store reads and writes the :class:`RowSparse` behind the array directly
(``_kvcli_row_sparse``), so ``kv.row_sparse_pull(key, out=x, row_ids=...)`` changes ``x`` in
place. Unlike MXNet, which accepts them silently and computes with them wrongly, row ids that
are unsorted, repeated or outside the shape are refused when an array is made.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kvcli.arrays.sparse import RowSparse, as_row_sparse
from kvcli.errors import SparseUnsupportedError
from kvcli.mx.ndarray.context import Context
from kvcli.mx.ndarray.ndarray import NDArray, as_context
from kvcli.mx.ndarray.sparse.base import CSR, DEFAULT, ROW_SPARSE, BaseSparseNDArray, check_stype, is_sparse


class RowSparseNDArray(BaseSparseNDArray):
    """A row-sparse array with a context (``mxnet.nd.sparse.RowSparseNDArray``): the rows
    ``indices`` (int64, sorted) hold ``data``; every other row is zero."""

    __slots__ = ("_value",)
    #: How many index arrays the storage has (MXNet's ``_num_aux``, which its tests read): indices.
    _num_aux = 1

    def __init__(self, value: RowSparse, ctx: Context | None = None) -> None:  # noqa: D107 - no NDArray.__init__: no dense buffer
        self._value = value
        self._ctx = as_context(ctx)

    # -- what kvcli.store reads and writes --------------------------------------------
    def _kvcli_row_sparse(self) -> RowSparse:
        return self._value

    def _dense(self) -> np.ndarray:
        return self._value.to_dense()

    def _assign_dense(self, dense: np.ndarray) -> None:
        self._value.assign(RowSparse.from_dense(np.asarray(dense).astype(self._value.dtype, copy=False)))

    def _assign_sparse(self, other: BaseSparseNDArray) -> None:
        value = other._kvcli_row_sparse()  # type: ignore[attr-defined]  # a RowSparseNDArray (same stype)
        self._value.assign(value if value.dtype == self._value.dtype else value.astype(self._value.dtype))

    def _with_context(self, ctx: Context) -> "RowSparseNDArray":
        return RowSparseNDArray(self._value.copy(), ctx)

    # -- attributes --------------------------------------------------------------------
    @property
    def stype(self) -> str:
        return ROW_SPARSE

    @property
    def shape(self) -> tuple[int, ...]:
        return self._value.shape

    @property
    def dtype(self) -> type:
        return self._value.dtype.type

    @property
    def indices(self) -> NDArray:
        """A copy of the row ids of the stored rows (int64, sorted)."""
        return NDArray(self._value.indices.copy(), self._ctx)

    @indices.setter
    def indices(self, value: Any) -> None:
        raise SparseUnsupportedError("indices of a row_sparse array cannot be set (MXNet neither): "
                                     "make a new one with nd.sparse.row_sparse_array")

    @property
    def data(self) -> NDArray:
        """A copy of the stored rows, shape ``(len(indices),) + shape[1:]``."""
        return NDArray(self._value.data.copy(), self._ctx)

    @data.setter
    def data(self, value: Any) -> None:
        raise SparseUnsupportedError("data of a row_sparse array cannot be set (MXNet neither): "
                                     "make a new one with nd.sparse.row_sparse_array")

    # -- conversion --------------------------------------------------------------------
    def tostype(self, stype: str) -> NDArray:
        """``'default'``: a dense copy; ``'row_sparse'``: a copy (``'csr'`` is refused, as in MXNet)."""
        check_stype(stype, "tostype")
        if stype == CSR:
            raise SparseUnsupportedError("cast_storage from row_sparse to csr is not supported (by MXNet either): "
                                         "use .tostype('default').tostype('csr')")
        if stype == DEFAULT:
            return NDArray(self._value.to_dense(), self._ctx)
        return RowSparseNDArray(self._value.copy(), self._ctx)

    def astype(self, dtype: Any, copy: bool = True) -> "RowSparseNDArray":
        """A copy with values of ``dtype`` (``self`` when ``copy=False`` and it has that dtype)."""
        if not copy and np.dtype(dtype) == self._value.dtype:
            return self
        return RowSparseNDArray(self._value.astype(dtype), self._ctx)

    def copy(self) -> "RowSparseNDArray":
        return RowSparseNDArray(self._value.copy(), self._ctx)

    def check_format(self, full_check: bool = True) -> None:
        """Raise :class:`~kvcli.errors.RowSparseError` if indices or data are malformed."""
        self._value.validate()

    def retain(self, indices: Any) -> "RowSparseNDArray":
        """``nd.sparse.retain(self, indices)``: exactly the rows ``indices`` (zero where this
        array holds none). The ids must be sorted, unique and inside the shape: MXNet keeps
        others as given, making an array it then computes with wrongly."""
        values = np.asarray(indices._kvcli_buffer() if isinstance(indices, NDArray) else indices).reshape(-1)
        # the checks of a row-sparse array's row ids (whole numbers, sorted, unique, in range)
        ids = RowSparse(np.zeros((values.size, *self.shape[1:]), self._value.dtype), values, self.shape).indices
        return RowSparseNDArray(self._value.rows(ids), self._ctx)

    # -- indexing (MXNet allows only the whole array) -------------------------------------
    def __getitem__(self, index: Any) -> "RowSparseNDArray":
        if isinstance(index, slice) and index == slice(None):
            return self
        if isinstance(index, tuple):
            raise SparseUnsupportedError("Multi-dimension indexing is not supported (by MXNet either) on a row_sparse "
                                         "array: use .tostype('default') first")
        raise SparseUnsupportedError(f"a row_sparse array supports only x[:], not x[{index!r}] (as in MXNet): "
                                     "use .tostype('default') first")

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise SparseUnsupportedError("a row_sparse array cannot be iterated (MXNet's x[i] is not implemented for it): "
                                     "iterate over .tostype('default')")

    def __setitem__(self, index: Any, value: Any) -> None:
        """``x[:] = value``: a row-sparse or dense array, a numpy array or a number."""
        if not (isinstance(index, slice) and index == slice(None)):
            raise SparseUnsupportedError(f"a row_sparse array supports only x[:] = value, not x[{index!r}] = ... "
                                         "(as in MXNet): make a new array with nd.sparse.row_sparse_array")
        if value is self:
            return
        if is_sparse(value) and value.stype != ROW_SPARSE:
            raise SparseUnsupportedError(f"copyto does not support destination NDArray stype row_sparse from a "
                                         f"{value.stype} array (MXNet neither)")
        sparse = as_row_sparse(value)
        if sparse is None:
            source = value._kvcli_buffer() if isinstance(value, NDArray) else value
            dense = np.broadcast_to(np.asarray(source, self._value.dtype), self.shape)
            sparse = RowSparse.from_dense(dense)
        if tuple(sparse.shape) != self.shape:
            raise SparseUnsupportedError(f"x[:] = value: shape {sparse.shape} cannot be copied into shape {self.shape}")
        self._value.assign(sparse.astype(self._value.dtype) if sparse.dtype != self._value.dtype else sparse)


__all__ = ["RowSparseNDArray"]
