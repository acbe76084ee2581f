"""``nd.sparse``: MXNet's row-sparse NDArray over :class:`kvcli.store.sparse.RowSparse`.

``nd.sparse.row_sparse_array((data, indices), shape=...)``, ``nd.sparse.zeros('row_sparse',
shape)`` (also ``nd.zeros(shape, stype='row_sparse')``), ``x.tostype('row_sparse' |
'default')``, and on a :class:`RowSparseNDArray`: ``.stype``, ``.indices``, ``.data``,
``.shape``, ``.dtype``, ``.context``, ``.asnumpy()``, ``copyto``, ``+ - * /`` and the in-place
forms. A store reads and writes the :class:`RowSparse` behind the array directly, so
``kv.row_sparse_pull(key, out=x, row_ids=...)`` changes ``x`` in place.

Unlike MXNet, which accepts them silently and computes with them wrongly, indices that are
unsorted, repeated or outside the shape are refused when the array is made.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kvcli.errors import RowSparseError
from kvcli.nd import DEFAULT_DTYPE, Context, NDArray, _context
from kvcli.nd import zeros as _dense_zeros
from kvcli.store.sparse import DEFAULT, ROW_SPARSE, RowSparse, as_row_sparse

#: Storage types MXNet knows; kvcli has no ``csr``.
STYPES = (DEFAULT, ROW_SPARSE, "csr")


class RowSparseNDArray:
    """A row-sparse array with a context (``mxnet.nd.sparse.RowSparseNDArray``)."""

    __slots__ = ("_value", "_ctx")
    __array_priority__ = 1001.0  # above NDArray: dense + row-sparse comes here

    def __init__(self, value: RowSparse, ctx: Context | None = None) -> None:
        self._value = value
        self._ctx = _context(ctx)

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
        """``'default'``: a dense copy; ``'row_sparse'``: a copy."""
        _check_stype(stype, "tostype")
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
    if stype == "csr":
        raise RowSparseError(f"{where}: kvcli has no csr storage; use 'row_sparse' or 'default'")
    if stype not in STYPES:
        raise RowSparseError(f"{where}: unknown storage type {stype!r}; use 'row_sparse' or 'default'")


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
    """All zeros of storage type ``stype`` (``'row_sparse'``: no rows stored)."""
    _check_stype(stype, "zeros")
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if stype == DEFAULT:
        return _dense_zeros(dims, ctx, _dtype_of(dtype, DEFAULT_DTYPE))
    return RowSparseNDArray(RowSparse.zeros(dims, _dtype_of(dtype, DEFAULT_DTYPE)), ctx)


def empty(stype: str, shape: int | Sequence[int], ctx: Context | None = None, dtype: Any = None) -> Any:
    """As :func:`zeros` (a row-sparse array with no rows is empty and zero at once)."""
    return zeros(stype, shape, ctx, dtype)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> RowSparseNDArray:
    """A row-sparse copy of a row-sparse array (``mxnet.nd.sparse.array``)."""
    sparse = as_row_sparse(source_array)
    if sparse is None:
        raise RowSparseError("nd.sparse.array takes a row-sparse array; use row_sparse_array for dense input")
    return RowSparseNDArray(sparse.astype(_dtype_of(dtype, sparse.dtype)), ctx)


def tostype(array: NDArray, stype: str) -> Any:
    """``NDArray.tostype``: ``'row_sparse'`` keeps the non-zero rows; ``'default'`` a copy."""
    _check_stype(stype, "tostype")
    if stype == DEFAULT:
        return array.copy()
    return RowSparseNDArray(RowSparse.from_dense(array._kvcli_buffer()), array.context)


def wrap(value: Any, ctx: Context | None = None) -> Any:
    """A store value as an NDArray: RowSparse -> RowSparseNDArray (sharing it), numpy -> NDArray."""
    if isinstance(value, RowSparse):
        return RowSparseNDArray(value, ctx)
    return NDArray(value, ctx)


__all__ = ["RowSparseNDArray", "array", "empty", "row_sparse_array", "tostype", "wrap", "zeros"]
