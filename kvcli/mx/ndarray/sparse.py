"""``nd.sparse``: MXNet's row-sparse NDArray over :class:`kvcli.arrays.sparse.RowSparse`.

``nd.sparse.row_sparse_array((data, indices), shape=...)``, ``nd.sparse.zeros('row_sparse',
shape)`` (also ``nd.zeros(shape, stype='row_sparse')``), ``x.tostype('row_sparse' |
'default')``, and on a :class:`RowSparseNDArray`: ``.stype``, ``.indices``, ``.data``,
``.shape``, ``.dtype``, ``.context``, ``.asnumpy()``, ``copyto``, ``+ - * /`` and the in-place
forms. A store reads and writes the :class:`RowSparse` behind the array directly, so
``kv.row_sparse_pull(key, out=x, row_ids=...)`` changes ``x`` in place.

CSR arrays (``stype='csr'``, 2-D) are MXNet's compressed sparse rows: ``nd.sparse.csr_matrix``
(from ``(data, indices, indptr)``, ``(data, (row, col))``, a shape, a dense array or another
CSR array), ``x.tostype('csr')``, ``nd.sparse.zeros('csr', shape)``, and on a
:class:`CSRNDArray`: ``.data``, ``.indices``, ``.indptr``, ``.asnumpy()``, ``tostype``,
``copyto``, ``astype``, row slicing, ``+ - * /``. An operation without a CSR form computes on
the dense array and stores the non-zero values again, as MXNet's storage fallback does (the
optimizers do so on CSR weights and gradients); stores do not take CSR values (MXNet's
KVStore refuses them too).

Unlike MXNet, which accepts them silently and computes with them wrongly, indices that are
unsorted, repeated or outside the shape are refused when the array is made.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kvcli.errors import CSRError, RowSparseError
from kvcli.mx.ndarray.ndarray import DEFAULT_DTYPE, Context, NDArray, as_context
from kvcli.mx.ndarray.ndarray import zeros as _dense_zeros
from kvcli.arrays.sparse import DEFAULT, ROW_SPARSE, RowSparse, as_row_sparse

CSR = "csr"
#: Storage types MXNet knows.
STYPES = (DEFAULT, ROW_SPARSE, CSR)


class RowSparseNDArray:
    """A row-sparse array with a context (``mxnet.nd.sparse.RowSparseNDArray``)."""

    __slots__ = ("_value", "_ctx")
    __array_priority__ = 1001.0  # above NDArray: dense + row-sparse comes here

    def __init__(self, value: RowSparse, ctx: Context | None = None) -> None:
        self._value = value
        self._ctx = as_context(ctx)

    # -- what kvcli.store reads and writes --------------------------------------------
    def _kvcli_row_sparse(self) -> RowSparse:
        return self._value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._value.__array__(dtype)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        # numpy meets this array in ``dense += x`` (NDArray's in-place operators run numpy's):
        # hand it the RowSparse behind, whose ufunc rules keep the update in place
        inputs = tuple(_operand(i) for i in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(_operand(o) for o in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

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
    def ndim(self) -> int:
        return len(self._value.shape)

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def indices(self) -> NDArray:
        """The row ids of the present rows (int64, sorted)."""
        return NDArray(self._value.indices, self._ctx)

    @property
    def data(self) -> NDArray:
        """The present rows, shape ``(len(indices),) + shape[1:]``."""
        return NDArray(self._value.data, self._ctx)

    def __len__(self) -> int:
        return self._value.shape[0]

    # -- conversion --------------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """The dense values as a new numpy array."""
        return self._value.to_dense()

    def tostype(self, stype: str) -> "NDArray | RowSparseNDArray":
        """``'default'``: a dense copy; ``'row_sparse'``: a copy (``'csr'`` is refused, as
        in MXNet)."""
        _check_stype(stype, "tostype")
        if stype == CSR:
            raise CSRError("tostype: a row-sparse array cannot become csr (MXNet cannot either): "
                           "use .tostype('default').tostype('csr')")
        if stype == DEFAULT:
            return NDArray(self._value.to_dense(), self._ctx)
        return RowSparseNDArray(self._value.copy(), self._ctx)

    def astype(self, dtype: Any, copy: bool = True) -> "RowSparseNDArray":
        if not copy and np.dtype(dtype) == self._value.dtype:
            return self
        return RowSparseNDArray(self._value.astype(dtype), self._ctx)

    def copy(self) -> "RowSparseNDArray":
        return RowSparseNDArray(self._value.copy(), self._ctx)

    def copyto(self, other: "NDArray | RowSparseNDArray | Context") -> "NDArray | RowSparseNDArray":
        """Copy onto a context (a new array), into a row-sparse array, or into a dense one."""
        if isinstance(other, Context):
            return RowSparseNDArray(self._value.copy(), other)
        target = as_row_sparse(other)
        if target is not None:
            target.assign(self._value)
            return other
        if isinstance(other, NDArray):
            self._value.to_dense(out=other._kvcli_buffer())
            return other
        raise TypeError(f"copyto needs an NDArray or a Context, not {type(other).__name__}")

    def as_in_context(self, ctx: Context) -> "RowSparseNDArray":
        return self if ctx == self._ctx else RowSparseNDArray(self._value.copy(), ctx)

    def check_format(self, full_check: bool = True) -> None:
        """Raise :class:`~kvcli.errors.RowSparseError` if indices or data are malformed."""
        self._value.validate()

    def wait_to_read(self) -> None:
        """Nothing to wait for: operations here are synchronous."""

    # -- indexing (MXNet allows only the whole array) -------------------------------------
    def __getitem__(self, index: Any) -> "RowSparseNDArray":
        if isinstance(index, slice) and index == slice(None):
            return self
        raise RowSparseError(
            f"a row-sparse array supports only x[:], not x[{index!r}]: use .tostype('default') first"
        )

    def __setitem__(self, index: Any, value: Any) -> None:
        if not (isinstance(index, slice) and index == slice(None)):
            raise RowSparseError(
                f"a row-sparse array supports only x[:] = value, not x[{index!r}] = ...: "
                "build a new array with nd.sparse.row_sparse_array"
            )
        sparse = as_row_sparse(value)
        if sparse is None:
            dense = np.broadcast_to(np.asarray(value, self._value.dtype), self.shape)
            sparse = RowSparse.from_dense(dense)
        self._value.assign(sparse.astype(self._value.dtype) if sparse.dtype != self._value.dtype else sparse)

    # -- arithmetic: row-sparse +- row-sparse and * / scalar stay row-sparse ------------
    def _result(self, value: Any) -> "NDArray | RowSparseNDArray":
        if isinstance(value, RowSparse):
            return RowSparseNDArray(value, self._ctx)
        return NDArray(np.asarray(value), self._ctx)

    def __add__(self, other: Any) -> Any:
        return self._result(self._value + _operand(other))

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return self._result(self._value - _operand(other))

    def __rsub__(self, other: Any) -> Any:
        return self._result(_operand(other) - self._value)

    def __mul__(self, other: Any) -> Any:
        if np.ndim(_operand(other)) == 0:
            return self._result(self._value * _operand(other))
        return NDArray(self._value.to_dense() * _operand(other), self._ctx)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        if np.ndim(_operand(other)) == 0:
            return self._result(self._value / _operand(other))
        return NDArray(self._value.to_dense() / _operand(other), self._ctx)

    def __neg__(self) -> "RowSparseNDArray":
        return RowSparseNDArray(-self._value, self._ctx)

    def __iadd__(self, other: Any) -> "RowSparseNDArray":
        self._value += _operand(other)
        return self

    def __isub__(self, other: Any) -> "RowSparseNDArray":
        self._value -= _operand(other)
        return self

    def __imul__(self, other: Any) -> "RowSparseNDArray":
        self._value.assign(self._value * _operand(other))
        return self

    def __itruediv__(self, other: Any) -> "RowSparseNDArray":
        self._value.assign(self._value / _operand(other))
        return self

    def __repr__(self) -> str:
        shape = "x".join(str(d) for d in self.shape)
        return f"\n<RowSparseNDArray {shape} @{self._ctx}>"

    __hash__ = None  # type: ignore[assignment]


def _operand(value: Any) -> Any:
    """The RowSparse or numpy value behind an operand."""
    sparse = as_row_sparse(value)
    if sparse is not None:
        return sparse
    return value._kvcli_buffer() if isinstance(value, NDArray) else value


def _check_stype(stype: str, where: str) -> None:
    if stype not in STYPES:
        raise RowSparseError(f"{where}: unknown storage type {stype!r}; use 'default', 'row_sparse' or 'csr'")


def _dtype_of(dtype: Any, fallback: Any) -> np.dtype:
    return np.dtype(fallback if dtype is None else dtype)


def _numpy(value: Any) -> np.ndarray:
    if isinstance(value, NDArray):
        return value._kvcli_buffer()
    return np.asarray(value)


# ---------------------------------------------------------------------- creation
def row_sparse_array(
    arg1: Any, shape: Sequence[int] | None = None, ctx: Context | None = None, dtype: Any = None
) -> RowSparseNDArray:
    """A row-sparse array, as ``mxnet.nd.sparse.row_sparse_array``.

    ``arg1`` is ``(data, indices)`` (``shape`` defaults to ``(max(indices) + 1,) +
    data.shape[1:]``), a row-sparse array (copied), a dense array (its non-zero rows), or a
    shape (all zeros). ``dtype`` defaults to the data's dtype for numpy/NDArray data and to
    float32 otherwise, as in MXNet.
    """
    if isinstance(arg1, tuple) and len(arg1) == 2 and not all(isinstance(d, (int, np.integer)) for d in arg1):
        data, indices = arg1
        default = data.dtype if isinstance(data, (np.ndarray, NDArray)) else DEFAULT_DTYPE
        data = np.asarray(_numpy(data), dtype=_dtype_of(dtype, default))
        ids = _numpy(indices)
        if shape is None:
            if np.size(ids) == 0:
                raise RowSparseError("row_sparse_array with no indices needs shape=(rows, ...)")
            shape = (int(np.max(ids)) + 1, *data.shape[1:])
        return RowSparseNDArray(RowSparse(data, ids, tuple(shape)), ctx)
    sparse = as_row_sparse(arg1)
    if sparse is not None:
        return RowSparseNDArray(sparse.astype(_dtype_of(dtype, sparse.dtype)), ctx)
    if isinstance(arg1, (tuple, list)) and arg1 and all(isinstance(d, (int, np.integer)) for d in arg1):
        return zeros(ROW_SPARSE, tuple(arg1), ctx=ctx, dtype=dtype)
    dense = _numpy(arg1)
    dense = dense.astype(_dtype_of(dtype, dense.dtype if isinstance(arg1, (np.ndarray, NDArray)) else DEFAULT_DTYPE))
    if shape is not None and tuple(shape) != dense.shape:
        raise RowSparseError(f"row_sparse_array: the array has shape {dense.shape}, not shape={tuple(shape)}")
    return RowSparseNDArray(RowSparse.from_dense(dense), ctx)


def zeros(stype: str, shape: int | Sequence[int], ctx: Context | None = None, dtype: Any = None, **_: Any) -> Any:
    """All zeros of storage type ``stype`` (``'row_sparse'``: no rows stored; ``'csr'``: no
    values stored)."""
    _check_stype(stype, "zeros")
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if stype == DEFAULT:
        return _dense_zeros(dims, ctx, _dtype_of(dtype, DEFAULT_DTYPE))
    if stype == CSR:
        return csr_matrix(dims, ctx=ctx, dtype=dtype)
    return RowSparseNDArray(RowSparse.zeros(dims, _dtype_of(dtype, DEFAULT_DTYPE)), ctx)


def empty(stype: str, shape: int | Sequence[int], ctx: Context | None = None, dtype: Any = None) -> Any:
    """As :func:`zeros` (a row-sparse array with no rows is empty and zero at once)."""
    return zeros(stype, shape, ctx, dtype)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> "RowSparseNDArray | CSRNDArray":
    """A copy of a row-sparse or CSR array (``mxnet.nd.sparse.array``)."""
    if isinstance(source_array, CSRNDArray):
        return csr_matrix(source_array, ctx=ctx or source_array.context, dtype=dtype)
    sparse = as_row_sparse(source_array)
    if sparse is None:
        raise RowSparseError("nd.sparse.array takes a row-sparse or csr array; use row_sparse_array or "
                             "csr_matrix for dense input")
    return RowSparseNDArray(sparse.astype(_dtype_of(dtype, sparse.dtype)), ctx)


def tostype(array: NDArray, stype: str) -> Any:
    """``NDArray.tostype``: ``'row_sparse'`` keeps the non-zero rows, ``'csr'`` the non-zero
    values; ``'default'`` a copy."""
    _check_stype(stype, "tostype")
    if stype == DEFAULT:
        return array.copy()
    if stype == CSR:
        return CSRNDArray._from_dense(array._kvcli_buffer(), array.context)
    return RowSparseNDArray(RowSparse.from_dense(array._kvcli_buffer()), array.context)


def wrap(value: Any, ctx: Context | None = None) -> Any:
    """A store value as an NDArray: RowSparse -> RowSparseNDArray (sharing it), numpy -> NDArray."""
    if isinstance(value, RowSparse):
        return RowSparseNDArray(value, ctx)
    return NDArray(value, ctx)


# ---------------------------------------------------------------------- CSR
class CSRNDArray:
    """A 2-D array in compressed sparse row form (``mxnet.nd.sparse.CSRNDArray``).

    Row ``i``'s values are ``data[indptr[i]:indptr[i+1]]`` in the columns
    ``indices[indptr[i]:indptr[i+1]]`` (sorted, unique); every other element is zero.
    """

    __slots__ = ("_values", "_columns", "_indptr", "_shape", "_ctx")
    __array_priority__ = 1001.0  # above NDArray: dense + csr comes here

    def __init__(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int],
                 ctx: Context | None = None) -> None:
        self._values, self._columns, self._indptr = data, indices, indptr
        self._shape = shape
        self._ctx = as_context(ctx)

    @classmethod
    def _checked(cls, data: Any, indices: Any, indptr: Any, shape: Sequence[int] | None, ctx: Context | None,
                 dtype: Any) -> "CSRNDArray":
        values = np.array(data, dtype=dtype, copy=True).reshape(-1)
        columns = _csr_ids(indices, "indices")
        pointers = _csr_ids(indptr, "indptr")
        if shape is None:
            if pointers.size == 0:
                raise CSRError("csr_matrix: indptr is empty; give indptr of length rows + 1 or shape=(rows, cols)")
            shape = (pointers.size - 1, int(columns.max()) + 1 if columns.size else 0)
        dims = _csr_shape(shape)
        _check_csr(values, columns, pointers, dims)
        return cls(values, columns, pointers, dims, ctx)

    @classmethod
    def _from_dense(cls, dense: np.ndarray, ctx: Context | None) -> "CSRNDArray":
        dense = np.asarray(dense)
        dims = _csr_shape(dense.shape)
        rows, columns = np.nonzero(dense)
        indptr = np.zeros(dims[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=dims[0]), out=indptr[1:])
        return cls(np.ascontiguousarray(dense[rows, columns]), columns.astype(np.int64), indptr, dims, ctx)

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
    def ndim(self) -> int:
        return 2

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def data(self) -> NDArray:
        """The stored values, row by row."""
        return NDArray(self._values, self._ctx)

    @property
    def indices(self) -> NDArray:
        """The column of each stored value (int64)."""
        return NDArray(self._columns, self._ctx)

    @property
    def indptr(self) -> NDArray:
        """Where each row's values start in ``data`` (int64, ``rows + 1`` entries)."""
        return NDArray(self._indptr, self._ctx)

    def __len__(self) -> int:
        return self._shape[0]

    # -- conversion --------------------------------------------------------------------
    def _dense(self) -> np.ndarray:
        out = np.zeros(self._shape, self._values.dtype)
        rows = np.repeat(np.arange(self._shape[0]), np.diff(self._indptr))
        out[rows, self._columns] = self._values
        return out

    def asnumpy(self) -> np.ndarray:
        """The dense values as a new numpy array."""
        return self._dense()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        dense = self._dense()
        return dense if dtype is None else dense.astype(dtype)

    def _kvcli_assign_dense(self, dense: np.ndarray) -> None:
        """Become the non-zero values of ``dense`` (same shape): the write-back of an
        operation computed densely, as MXNet's storage fallback casts its result to csr."""
        other = CSRNDArray._from_dense(np.asarray(dense, self._values.dtype), self._ctx)
        self._values, self._columns, self._indptr = other._values, other._columns, other._indptr

    def tostype(self, stype: str) -> "NDArray | CSRNDArray":
        """``'default'``: a dense copy; ``'csr'``: a copy (``'row_sparse'`` is refused, as in MXNet)."""
        _check_stype(stype, "tostype")
        if stype == ROW_SPARSE:
            raise CSRError("tostype: a csr array cannot become row_sparse (MXNet cannot either): "
                           "use .tostype('default').tostype('row_sparse')")
        if stype == DEFAULT:
            return NDArray(self._dense(), self._ctx)
        return self.copy()

    def astype(self, dtype: Any, copy: bool = True) -> "CSRNDArray":
        if not copy and np.dtype(dtype) == self._values.dtype:
            return self
        return CSRNDArray(self._values.astype(dtype), self._columns.copy(), self._indptr.copy(), self._shape,
                          self._ctx)

    def copy(self) -> "CSRNDArray":
        return self.astype(self._values.dtype)

    def copyto(self, other: "NDArray | CSRNDArray | Context") -> "NDArray | CSRNDArray":
        """Copy onto a context (a new array), into a CSR array, or into a dense one."""
        if isinstance(other, Context):
            result = self.copy()
            result._ctx = other
            return result
        if tuple(other.shape) != self._shape:
            raise CSRError(f"copyto: shape {self._shape} cannot be copied into shape {tuple(other.shape)}")
        if isinstance(other, CSRNDArray):
            other._kvcli_assign_dense(self._dense())
            return other
        if isinstance(other, NDArray):
            np.copyto(other._kvcli_buffer(), self._dense(), casting="unsafe")
            return other
        raise TypeError(f"copyto needs an NDArray or a Context, not {type(other).__name__}")

    def as_in_context(self, ctx: Context) -> "CSRNDArray":
        return self if ctx == self._ctx else self.copyto(ctx)  # type: ignore[return-value]

    def check_format(self, full_check: bool = True) -> None:
        """Raise :class:`~kvcli.errors.CSRError` if data, indices and indptr disagree."""
        _check_csr(self._values, self._columns, self._indptr, self._shape)

    def wait_to_read(self) -> None:
        """Nothing to wait for: operations here are synchronous."""

    # -- indexing: rows ------------------------------------------------------------------
    def __getitem__(self, index: Any) -> "CSRNDArray":
        """Rows ``x[i]`` or ``x[a:b]`` (step 1), as a CSR array of those rows."""
        if isinstance(index, (int, np.integer)):
            row = int(index) + (self._shape[0] if index < 0 else 0)
            if not 0 <= row < self._shape[0]:
                raise CSRError(f"row {index} is out of range for {self._shape[0]} rows")
            index = slice(row, row + 1)
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise CSRError(f"a csr array supports x[i] and x[a:b] (rows), not x[{index!r}]: "
                           "use .tostype('default') first")
        start, stop, _ = index.indices(self._shape[0])
        stop = max(stop, start)
        lo, hi = self._indptr[start], self._indptr[stop]
        return CSRNDArray(self._values[lo:hi].copy(), self._columns[lo:hi].copy(),
                          self._indptr[start:stop + 1] - lo, (stop - start, self._shape[1]), self._ctx)

    def __setitem__(self, index: Any, value: Any) -> None:
        if not (isinstance(index, slice) and index == slice(None)):
            raise CSRError(f"a csr array supports only x[:] = value, not x[{index!r}] = ...: "
                           "build a new array with nd.sparse.csr_matrix")
        dense = np.broadcast_to(np.asarray(_numpy_of(value), self._values.dtype), self._shape)
        self._kvcli_assign_dense(dense)

    # -- arithmetic: csr +- csr and * / scalar stay csr; with dense arrays, dense ----------
    def _other(self, other: Any) -> Any:
        return other._dense() if isinstance(other, CSRNDArray) else _numpy_of(other)

    def _combined(self, dense: np.ndarray, other: Any) -> "NDArray | CSRNDArray":
        """csr with csr stays csr (its non-zero values, as MXNet's result holds); with a
        dense operand the result is dense."""
        return CSRNDArray._from_dense(dense, self._ctx) if isinstance(other, CSRNDArray) else NDArray(dense, self._ctx)

    def __add__(self, other: Any) -> Any:
        return self._combined(self._dense() + self._other(other), other)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return self._combined(self._dense() - self._other(other), other)

    def __rsub__(self, other: Any) -> Any:
        return self._combined(self._other(other) - self._dense(), other)

    def __mul__(self, other: Any) -> Any:
        if np.ndim(self._other(other)) == 0:
            factor = np.asarray(self._other(other)).astype(self._values.dtype)
            return CSRNDArray(self._values * factor, self._columns.copy(), self._indptr.copy(), self._shape,
                              self._ctx)
        return self._combined(self._dense() * self._other(other), other)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        if np.ndim(self._other(other)) == 0:
            factor = np.asarray(self._other(other)).astype(self._values.dtype)
            return CSRNDArray(self._values / factor, self._columns.copy(), self._indptr.copy(), self._shape,
                              self._ctx)
        return NDArray(self._dense() / self._other(other), self._ctx)

    def __neg__(self) -> "CSRNDArray":
        return self * -1

    def __iadd__(self, other: Any) -> "CSRNDArray":
        self._kvcli_assign_dense(self._dense() + self._other(other))
        return self

    def __isub__(self, other: Any) -> "CSRNDArray":
        self._kvcli_assign_dense(self._dense() - self._other(other))
        return self

    def __imul__(self, other: Any) -> "CSRNDArray":
        self._kvcli_assign_dense(self._dense() * self._other(other))
        return self

    def __itruediv__(self, other: Any) -> "CSRNDArray":
        self._kvcli_assign_dense(self._dense() / self._other(other))
        return self

    def __repr__(self) -> str:
        return f"\n<CSRNDArray {self._shape[0]}x{self._shape[1]} @{self._ctx}>"

    __hash__ = None  # type: ignore[assignment]


def csr_matrix(arg1: Any, shape: Sequence[int] | None = None, ctx: Context | None = None,
               dtype: Any = None) -> CSRNDArray:
    """A CSR array, as ``mxnet.nd.sparse.csr_matrix``.

    ``arg1`` is ``(data, indices, indptr)`` (``shape`` defaults to ``(len(indptr) - 1,
    max(indices) + 1)``), ``(data, (row, col))`` (coordinates; repeated ones are summed, as
    scipy does for MXNet), a shape ``(rows, cols)`` (all zeros), a dense 2-D array (its non-zero
    values) or a CSR array (copied). ``dtype`` defaults to the data's dtype for numpy/NDArray
    data and to float32 otherwise, as in MXNet.
    """
    if isinstance(arg1, CSRNDArray):
        result = arg1.astype(_dtype_of(dtype, arg1._values.dtype))
        result._ctx = as_context(ctx) if ctx is not None else arg1.context
        if shape is not None and tuple(shape) != result.shape:
            raise CSRError(f"csr_matrix: the array has shape {result.shape}, not shape={tuple(shape)}")
        return result
    if isinstance(arg1, tuple) and len(arg1) == 2 and all(isinstance(d, (int, np.integer)) for d in arg1):
        dims = _csr_shape(arg1)
        values = np.zeros(0, _dtype_of(dtype, DEFAULT_DTYPE))
        return CSRNDArray(values, np.zeros(0, np.int64), np.zeros(dims[0] + 1, np.int64), dims, ctx)
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = arg1
        return CSRNDArray._checked(_numpy_of(data), indices, indptr, shape, ctx, _data_dtype(data, dtype))
    if isinstance(arg1, tuple) and len(arg1) == 2 and isinstance(arg1[1], (tuple, list)) and len(arg1[1]) == 2:
        data, (row, col) = arg1
        return _from_coordinates(_numpy_of(data), row, col, shape, ctx, _data_dtype(data, dtype))
    if isinstance(arg1, RowSparseNDArray):
        raise CSRError("csr_matrix: a row-sparse array cannot become csr (MXNet cannot either): "
                       "use .tostype('default') first")
    dense = _numpy_of(arg1)
    dense = dense.astype(_dtype_of(dtype, dense.dtype if isinstance(arg1, (np.ndarray, NDArray)) else DEFAULT_DTYPE))
    if shape is not None and tuple(shape) != dense.shape:
        raise CSRError(f"csr_matrix: the array has shape {dense.shape}, not shape={tuple(shape)}")
    return CSRNDArray._from_dense(dense, ctx)


def _from_coordinates(data: np.ndarray, row: Any, col: Any, shape: Sequence[int] | None, ctx: Context | None,
                      dtype: np.dtype) -> CSRNDArray:
    rows, cols = _csr_ids(row, "row"), _csr_ids(col, "col")
    values = np.asarray(data, dtype).reshape(-1)
    if not rows.size == cols.size == values.size:
        raise CSRError(f"csr_matrix: {values.size} values, {rows.size} rows and {cols.size} columns: give one of each "
                       "per value")
    if shape is None:
        shape = (int(rows.max()) + 1 if rows.size else 0, int(cols.max()) + 1 if cols.size else 0)
    dims = _csr_shape(shape)
    if rows.size and (rows.min() < 0 or rows.max() >= dims[0] or cols.min() < 0 or cols.max() >= dims[1]):
        raise CSRError(f"csr_matrix: a coordinate lies outside shape {dims}")
    dense = np.zeros(dims, dtype)
    np.add.at(dense, (rows, cols), values)
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    keep = np.ones(rows.size, bool)
    keep[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    rows, cols = rows[keep], cols[keep]
    indptr = np.zeros(dims[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=dims[0]), out=indptr[1:])
    return CSRNDArray(dense[rows, cols], cols, indptr, dims, ctx)


def _data_dtype(data: Any, dtype: Any) -> np.dtype:
    return _dtype_of(dtype, data.dtype if isinstance(data, (np.ndarray, NDArray)) else DEFAULT_DTYPE)


def _numpy_of(value: Any) -> Any:
    if isinstance(value, NDArray):
        return value._kvcli_buffer()
    if isinstance(value, (CSRNDArray, RowSparseNDArray)):
        return value.asnumpy()
    return np.asarray(value) if isinstance(value, (list, tuple)) else value


def _csr_shape(shape: Sequence[int]) -> tuple[int, int]:
    dims = tuple(int(d) for d in shape)
    if len(dims) != 2 or min(dims) < 0:
        raise CSRError(f"a csr array is 2-D: shape {dims} is not (rows, cols)")
    return dims


def _csr_ids(ids: Any, what: str) -> np.ndarray:
    array = np.asarray(_numpy_of(ids)).reshape(-1)
    if array.size == 0:
        return array.astype(np.int64)
    if array.dtype.kind not in "iu" and not (array.dtype.kind == "f" and np.all(array == np.round(array))):
        raise CSRError(f"csr {what} must be whole numbers, got {array[:5].tolist()}")
    return array.astype(np.int64)


def _check_csr(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]) -> None:
    """Refuse what MXNet would compute with wrongly: indptr not running from 0 to the number
    of values without decreasing, columns outside the shape, unsorted or repeated in a row."""
    rows, cols = shape
    if indptr.size != rows + 1:
        raise CSRError(f"csr indptr has {indptr.size} entries but {rows} rows need {rows + 1}")
    if indptr[0] != 0 or indptr[-1] != indices.size or np.any(np.diff(indptr) < 0):
        raise CSRError(f"csr indptr must start at 0, never decrease and end at the number of values "
                       f"({indices.size}), got {indptr[:6].tolist()}{' ...' if indptr.size > 6 else ''}")
    if data.size != indices.size:
        raise CSRError(f"csr data has {data.size} values but indices has {indices.size}: give one column per value")
    if indices.size and (indices.min() < 0 or indices.max() >= cols):
        bad = indices.min() if indices.min() < 0 else indices.max()
        raise CSRError(f"csr column {bad} is out of range for {cols} columns")
    same_row = np.ones(max(indices.size - 1, 0), bool)
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < indices.size)]
    same_row[starts - 1] = False
    steps = np.diff(indices)
    if np.any(steps[same_row] <= 0):
        at = int(np.flatnonzero(same_row & (steps <= 0))[0])
        row = int(np.searchsorted(indptr, at, side="right")) - 1
        kind = "repeated" if steps[at] == 0 else "not sorted"
        raise CSRError(f"csr columns of row {row} are {kind} ({indices[at]} then {indices[at + 1]}): "
                       "give each column once per row, in increasing order")



# ---------------------------------------------------------------------- what nd itself gains
# The package kvcli.mx.ndarray installs these (nd.zeros, NDArray.tostype, NDArray.copyto):
# the dense module knows nothing of sparse arrays.
def nd_zeros(shape: int | Sequence[int], ctx: Context | None = None, dtype: Any = DEFAULT_DTYPE,
             stype: str | None = None, **kwargs: Any) -> Any:
    """An array of zeros (float32 unless ``dtype`` says otherwise); ``stype='row_sparse'``
    (``'csr'``) gives a :class:`RowSparseNDArray` (:class:`CSRNDArray`) storing nothing."""
    if stype is not None and stype != "default":
        return zeros(stype, shape, ctx, dtype)
    return _dense_zeros(shape, ctx, dtype, **kwargs)


nd_zeros.__name__ = nd_zeros.__qualname__ = "zeros"


def tostype_method(self: NDArray, stype: str) -> Any:
    """``'row_sparse'``: the non-zero rows as a RowSparseNDArray; ``'csr'``: the non-zero
    values as a CSRNDArray; ``'default'``: a copy."""
    return tostype(self, stype)


tostype_method.__name__ = tostype_method.__qualname__ = "tostype"


def copyto_method(dense_copyto: Any) -> Any:
    """NDArray's ``copyto`` (``dense_copyto``), which into a row-sparse (csr) array stores the
    non-zero rows (values)."""
    def copyto(self: NDArray, other: Any) -> Any:
        """Copy into ``other`` (an NDArray, or a context for a new one); into a row-sparse
        (csr) array it stores the non-zero rows (values)."""
        if isinstance(other, (RowSparseNDArray, CSRNDArray)):
            other[:] = self._data
            return other
        return dense_copyto(self, other)

    return copyto

__all__ = ["CSRNDArray", "RowSparseNDArray", "array", "csr_matrix", "empty", "row_sparse_array", "tostype", "wrap",
           "zeros"]
