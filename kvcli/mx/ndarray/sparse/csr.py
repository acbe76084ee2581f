"""``CSRNDArray``: MXNet's 2-D compressed sparse row NDArray.

Row ``i``'s values are ``data[indptr[i]:indptr[i+1]]`` in the columns
``indices[indptr[i]:indptr[i+1]]`` (sorted, unique); every other element is zero. Unlike
MXNet, which accepts them silently and computes with them wrongly, columns that are unsorted,
repeated or outside the shape, and an ``indptr`` that does not run from 0 to the number of
values, are refused when an array is made. Stores do not take CSR values (MXNet's KVStore
refuses them too); optimizers update CSR weights through MXNet's storage fallback.
"""

from __future__ import annotations

from typing import Any, Sequence, cast

import numpy as np

from kvcli.arrays.csr import check_csr
from kvcli.arrays.sparse import INDEX_DTYPE
from kvcli.errors import CSRError, SparseUnsupportedError
from kvcli.mx.ndarray.context import Context
from kvcli.mx.ndarray.ndarray import NDArray, as_context
from kvcli.mx.ndarray.sparse.base import CSR, DEFAULT, ROW_SPARSE, BaseSparseNDArray, axis_range, check_stype, is_sparse



class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row form (``mxnet.nd.sparse.CSRNDArray``)."""

    __slots__ = ("_values", "_columns", "_indptr", "_shape")
    #: How many index arrays the storage has (MXNet's ``_num_aux``, which its tests read): indptr and indices.
    _num_aux = 2

    def __init__(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int],
                 ctx: Context | None = None) -> None:  # noqa: D107 - arrays already checked (see checked())
        self._values, self._columns, self._indptr = data, indices, indptr
        self._shape = (int(shape[0]), int(shape[1]))
        self._ctx = as_context(ctx)

    @classmethod
    def checked(cls, data: Any, indices: Any, indptr: Any, shape: tuple[int, int], ctx: Context | None) -> "CSRNDArray":
        """A CSR array of these arrays (copied), refused unless they form a valid CSR matrix."""
        values = np.array(data, copy=True).reshape(-1)
        columns = np.array(indices, dtype=INDEX_DTYPE, copy=True).reshape(-1)
        pointers = np.array(indptr, dtype=INDEX_DTYPE, copy=True).reshape(-1)
        check_csr(values, columns, pointers, shape)
        return cls(values, columns, pointers, shape, ctx)

    @classmethod
    def from_dense(cls, dense: np.ndarray, ctx: Context | None) -> "CSRNDArray":
        """The non-zero values of a 2-D array (MXNet's ``cast_storage(x, 'csr')``)."""
        dense = np.asarray(dense)
        if dense.ndim != 2:
            raise SparseUnsupportedError(f"a csr array is 2-D: shape {dense.shape} cannot become csr (MXNet: "
                                         f"Check failed: dns.shape_.ndim() == 2)")
        rows, columns = np.nonzero(dense)
        indptr = np.zeros(dense.shape[0] + 1, INDEX_DTYPE)
        np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
        return cls(np.ascontiguousarray(dense[rows, columns]), columns.astype(INDEX_DTYPE), indptr,
                   (dense.shape[0], dense.shape[1]), ctx)

    @classmethod
    def empty(cls, shape: tuple[int, int], dtype: Any, ctx: Context | None) -> "CSRNDArray":
        """No value stored: all zeros."""
        return cls(np.zeros(0, dtype), np.zeros(0, INDEX_DTYPE), np.zeros(shape[0] + 1, INDEX_DTYPE), shape, ctx)

    # -- the storage -----------------------------------------------------------------------
    def _rows(self) -> np.ndarray:
        """The row of each stored value."""
        return np.repeat(np.arange(self._shape[0], dtype=INDEX_DTYPE), np.diff(self._indptr))

    def _dense(self) -> np.ndarray:
        out = np.zeros(self._shape, self._values.dtype)
        out[self._rows(), self._columns] = self._values
        return out

    def _assign_dense(self, dense: np.ndarray) -> None:
        other = CSRNDArray.from_dense(np.asarray(dense).astype(self._values.dtype, copy=False), self._ctx)
        self._values, self._columns, self._indptr = other._values, other._columns, other._indptr

    def _assign_sparse(self, other: BaseSparseNDArray) -> None:
        source = cast(CSRNDArray, other)  # the same storage type: copyto checked it
        self._values = source._values.astype(self._values.dtype, copy=True)
        self._columns, self._indptr = source._columns.copy(), source._indptr.copy()

    #: The optimizers' protocol for a CSR weight (kvcli.optim.base): become these dense values.
    _kvcli_assign_dense = _assign_dense

    def _with_context(self, ctx: Context) -> "CSRNDArray":
        return CSRNDArray(self._values.copy(), self._columns.copy(), self._indptr.copy(), self._shape, ctx)

    def _with_values(self, values: np.ndarray) -> "CSRNDArray":
        """The same structure holding ``values`` (one per stored element)."""
        return CSRNDArray(np.ascontiguousarray(values), self._columns.copy(), self._indptr.copy(), self._shape,
                          self._ctx)

    # -- attributes --------------------------------------------------------------------
    @property
    def stype(self) -> str:
        return CSR

    @property
    def shape(self) -> tuple[int, int]:
        return self._shape

    @property
    def dtype(self) -> type:
        return self._values.dtype.type

    @property
    def data(self) -> NDArray:
        """A copy of the stored values, row by row."""
        return NDArray(self._values.copy(), self._ctx)

    @data.setter
    def data(self, value: Any) -> None:
        raise SparseUnsupportedError("data of a csr array cannot be set (MXNet neither): use nd.sparse.csr_matrix")

    @property
    def indices(self) -> NDArray:
        """A copy of the column of each stored value (int64)."""
        return NDArray(self._columns.copy(), self._ctx)

    @indices.setter
    def indices(self, value: Any) -> None:
        raise SparseUnsupportedError("indices of a csr array cannot be set (MXNet neither): use nd.sparse.csr_matrix")

    @property
    def indptr(self) -> NDArray:
        """A copy of where each row's values start in ``data`` (int64, ``rows + 1`` entries)."""
        return NDArray(self._indptr.copy(), self._ctx)

    @indptr.setter
    def indptr(self, value: Any) -> None:
        raise SparseUnsupportedError("indptr of a csr array cannot be set (MXNet neither): use nd.sparse.csr_matrix")

    # -- conversion --------------------------------------------------------------------
    def tostype(self, stype: str) -> NDArray:
        """``'default'``: a dense copy; ``'csr'``: a copy (``'row_sparse'`` is refused, as in MXNet)."""
        check_stype(stype, "tostype")
        if stype == ROW_SPARSE:
            raise SparseUnsupportedError("cast_storage from csr to row_sparse is not supported (by MXNet either): "
                                         "use .tostype('default').tostype('row_sparse')")
        if stype == DEFAULT:
            return NDArray(self._dense(), self._ctx)
        return self.copy()

    def astype(self, dtype: Any, copy: bool = True) -> "CSRNDArray":
        """A copy with values of ``dtype`` (``self`` when ``copy=False`` and it has that dtype)."""
        if not copy and np.dtype(dtype) == self._values.dtype:
            return self
        with np.errstate(invalid="ignore"):  # nan to integers: C's conversion, silent as in MXNet
            return self._with_values(self._values.astype(dtype))

    def copy(self) -> "CSRNDArray":
        return self._with_context(self._ctx)

    def check_format(self, full_check: bool = True) -> None:
        """Raise :class:`~kvcli.errors.CSRError` if data, indices and indptr disagree."""
        check_csr(self._values, self._columns, self._indptr, self._shape)

    def asscipy(self) -> Any:
        """A ``scipy.sparse.csr_matrix`` copy (scipy must be installed, as for MXNet)."""
        try:
            import scipy.sparse as spsp
        except ImportError:
            raise ImportError("scipy could not be imported. Please make sure that the scipy is installed.") from None
        return spsp.csr_matrix((self._values.copy(), self._columns.copy(), self._indptr.copy()), shape=self._shape,
                               dtype=self._values.dtype)

    # -- indexing: rows, as MXNet's ``x[i]`` and ``x[a:b]`` (nd.sparse.slice on axis 0) --------
    def rows(self, begin: int | None, end: int | None) -> "CSRNDArray":
        """Rows ``begin:end`` (MXNet's slice: negative counts from the end, an end past the last
        row stops there; nothing selected is refused, as MXNet makes no empty array)."""
        start, stop = axis_range(self._shape[0], begin, end)
        lo, hi = self._indptr[start], self._indptr[stop]
        return CSRNDArray(self._values[lo:hi].copy(), self._columns[lo:hi].copy(), self._indptr[start:stop + 1] - lo,
                          (stop - start, self._shape[1]), self._ctx)

    def __getitem__(self, key: Any) -> "CSRNDArray":
        """``x[i]`` (the row, as a 1-row csr array) and ``x[a:b]`` (rows), as in MXNet."""
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            begin = self._shape[0] - 1 if key == -1 else int(key)
            return self.rows(begin, begin + 1)
        if isinstance(key, slice):
            if key.step is not None:
                raise SparseUnsupportedError("CSRNDArray only supports continuous slicing on axis 0 (as in MXNet): "
                                             "use .tostype('default') for steps")
            if key.start is None and key.stop is None:
                return self
            return self.rows(key.start, key.stop)
        if isinstance(key, tuple):
            raise SparseUnsupportedError("Multi-dimension indexing is not supported on a csr array (by MXNet either): "
                                         "use .tostype('default') first")
        raise SparseUnsupportedError(f"a csr array takes x[i] and x[a:b] (rows), not x[{key!r}] (as in MXNet)")

    def __iter__(self):  # type: ignore[no-untyped-def]
        """Its rows, each a 1-row csr array (MXNet's iteration never ends: it slices past the end)."""
        return (self.rows(i, i + 1) for i in range(self._shape[0]))

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[:] = value``: a csr or dense array, or a numpy array (numbers are refused, as in MXNet)."""
        if not (isinstance(key, slice) and key == slice(None)):
            raise SparseUnsupportedError(f"a csr array supports only x[:] = value, not x[{key!r}] = ... (as in "
                                         "MXNet): make a new array with nd.sparse.csr_matrix")
        if value is self:
            return
        if is_sparse(value):
            value.copyto(self)
            return
        if isinstance(value, NDArray):
            if value.shape != self._shape:
                raise CSRError(f"x[:] = value: shape {value.shape} cannot be copied into shape {self._shape}")
            self._assign_dense(value._kvcli_buffer())
            return
        if isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) > 0:
            dense = np.asarray(value)
            if dense.shape != self._shape:
                raise CSRError(f"x[:] = value: shape {dense.shape} cannot be copied into shape {self._shape}")
            self._assign_dense(dense)
            return
        raise SparseUnsupportedError("Assigning numeric types to CSRNDArray is not implemented (by MXNet either): "
                                     "assign an array of the shape")


def csr_shape(shape: Sequence[int]) -> tuple[int, int]:
    """``shape`` as (rows, cols), refused unless 2-D and non-negative."""
    dims = tuple(int(d) for d in shape)
    if len(dims) != 2 or min(dims) < 0:
        raise CSRError(f"a csr array is 2-D: shape {dims} is not (rows, cols)")
    return (dims[0], dims[1])


def is_csr(value: Any) -> bool:
    return is_sparse(value) and value.stype == CSR


__all__ = ["CSRNDArray", "INDEX_DTYPE", "check_csr", "csr_shape", "is_csr"]
