"""The computations MXNet does on sparse storage itself (its sparse kernels), on numpy.

Each works on the stored values only, as MXNet's kernel does: an element that is not stored
never enters the arithmetic (``csr * dense`` is 0 where the csr stores nothing, even where
the dense array holds ``nan``), and sums run over the stored values in storage order, as
MXNet's CPU kernels accumulate them (in the dtype of the data). :mod:`.functions` decides
when a kernel applies (MXNet's storage-type inference); everything else is MXNet's storage
fallback, computed densely.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kvcli.arrays.sparse import INDEX_DTYPE, RowSparse, sum_rows
from kvcli.errors import SparseUnsupportedError
from kvcli.mx.ndarray import ops as nd_ops
from kvcli.mx.ndarray.sparse.csr import CSRNDArray
from kvcli.mx.ndarray.sparse.rowsparse import RowSparseNDArray

Values = Callable[[np.ndarray], np.ndarray]


def map_values(x: Any, func: Values) -> Any:
    """The same structure with ``func`` of the stored values (a zero-preserving operator)."""
    if isinstance(x, CSRNDArray):
        return x._with_values(np.asarray(func(x._values)))
    value = x._kvcli_row_sparse()
    return RowSparseNDArray(RowSparse._trusted(np.asarray(func(value.data)), value.indices.copy(), value.shape),
                            x.context)


def _csr_entries(x: CSRNDArray) -> tuple[np.ndarray, np.ndarray]:
    return x._rows(), x._columns


def with_dense(x: Any, dense: np.ndarray, op: str, sparse_first: bool = True) -> Any:
    """``x <op> dense`` on ``x``'s stored elements only (``dense`` broadcasts to ``x``'s shape)."""
    full = np.broadcast_to(dense, x.shape)
    if isinstance(x, CSRNDArray):
        other = full[_csr_entries(x)]
        return x._with_values(nd_ops.binary(op, x._values, other, reflected=not sparse_first))
    value = x._kvcli_row_sparse()
    other = np.ascontiguousarray(full[value.indices])
    return RowSparseNDArray(RowSparse._trusted(nd_ops.binary(op, value.data, other, reflected=not sparse_first),
                                               value.indices.copy(), value.shape), x.context)


def dense_with_stored(x: Any, dense: np.ndarray, op: str, sparse_first: bool) -> np.ndarray:
    """``x ± dense`` (or ``dense - x``) as MXNet's kernel gives it, dense: the dense operand
    (negated for ``x - dense``) where ``x`` stores nothing, the sum or difference where it does."""
    out = -dense if (op == "sub" and sparse_first) else dense.copy()
    if isinstance(x, CSRNDArray):
        at: Any = _csr_entries(x)
        stored = x._values
    else:
        value = x._kvcli_row_sparse()
        at, stored = value.indices, value.data
    out[at] = nd_ops.binary(op, stored, dense[at], reflected=not sparse_first)
    return out


# ---------------------------------------------------------------------- sparse with sparse
def rsp_binary(a: RowSparseNDArray, b: RowSparseNDArray, op: str) -> RowSparseNDArray:
    """``a <op> b`` of two row-sparse arrays over the union of their rows (a row one of them
    lacks counts as zeros, so ``inf * missing`` is nan); every union row is stored, zero or not."""
    nd_ops.check_same_dtype(f"elemwise_{op}", a._value.data, b._value.data)
    x, y = a._kvcli_row_sparse(), b._kvcli_row_sparse()
    rows = np.union1d(x.indices, y.indices).astype(INDEX_DTYPE)
    data = nd_ops.binary(op, x.rows(rows).data, y.rows(rows).data)
    return RowSparseNDArray(RowSparse._trusted(data, rows, x.shape), a.context)


def csr_binary(a: CSRNDArray, b: CSRNDArray, op: str) -> CSRNDArray:
    """``a <op> b`` of two csr arrays over the union of their entries (an entry one of them
    lacks counts as zero, so ``inf * missing`` is nan); a result equal to zero is not stored."""
    nd_ops.check_same_dtype(f"elemwise_{op}", a._values, b._values)
    cols = a.shape[1]
    keys_a = a._rows() * cols + a._columns
    keys_b = b._rows() * cols + b._columns
    keys = np.union1d(keys_a, keys_b)
    left = np.zeros(keys.size, a._values.dtype)
    right = np.zeros(keys.size, b._values.dtype)
    left[np.searchsorted(keys, keys_a)] = a._values
    right[np.searchsorted(keys, keys_b)] = b._values
    values = nd_ops.binary(op, left, right)
    keep = values != 0
    keys, values = keys[keep], values[keep]
    return _csr_from_keys(keys, values, a.shape, a.context)


def _csr_from_keys(keys: np.ndarray, values: np.ndarray, shape: tuple[int, int], ctx: Any) -> CSRNDArray:
    rows, columns = np.divmod(keys.astype(INDEX_DTYPE), shape[1]) if shape[1] else (keys, keys)
    indptr = np.zeros(shape[0] + 1, INDEX_DTYPE)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    return CSRNDArray(np.ascontiguousarray(values), columns.astype(INDEX_DTYPE), indptr, shape, ctx)


def add_rows(arrays: list[RowSparseNDArray]) -> RowSparseNDArray:
    """``add_n`` of row-sparse arrays: the union of their rows, summed left to right."""
    nd_ops.check_same_dtype("add_n", *(a._value.data for a in arrays))
    return RowSparseNDArray(sum_rows([a._kvcli_row_sparse() for a in arrays]), arrays[0].context)


# ---------------------------------------------------------------------- L2 norms
def l2_norm_all(x: Any) -> np.ndarray:
    """The L2 norm of a whole sparse array: the root of the stored values' sum of squares, in
    their dtype. (MXNet takes BLAS's dot product of the stored values with themselves, whose
    summation order can round the last bit differently on long arrays.)"""
    values = x._values if isinstance(x, CSRNDArray) else x._kvcli_row_sparse().data.reshape(-1)
    with np.errstate(all="ignore"):
        return np.sqrt(np.square(values).sum(dtype=values.dtype))


def csr_l2_norm_axis(x: CSRNDArray, axis: int) -> np.ndarray:
    """MXNet's L2 norm of a csr array along axis 0 (per column) or 1 (per row): a Kahan sum of
    the squares of the stored values in storage order, in their dtype (half too), then the
    root. As in MXNet, the compensation is not reset at an infinity: a value after one gives nan."""
    squares = x._values * x._values
    owners = x._columns if axis == 0 else x._rows()
    total = np.zeros(x.shape[1 - axis], squares.dtype)
    residual = np.zeros_like(total)
    # each stored value's rank among those of its output, in storage (row-major) order
    order = np.argsort(owners, kind="stable")
    starts = np.searchsorted(owners[order], owners[order])
    rank = np.empty(owners.size, INDEX_DTYPE)
    rank[order] = np.arange(owners.size) - starts
    with np.errstate(all="ignore"):
        for j in range(int(rank.max()) + 1 if rank.size else 0):
            at = np.flatnonzero(rank == j)
            out = owners[at]
            y = squares[at] - residual[out]
            t = total[out] + y
            residual[out] = (t - total[out]) - y
            total[out] = t
        return np.sqrt(total)


# ---------------------------------------------------------------------- dtypes
def check_float(what: str, dtype: Any) -> None:
    """MXNet's csr kernels (dot, csr with dense of one shape) take float32 and float64 only."""
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise SparseUnsupportedError(f"{what} of a csr array: this operation only supports 32-bit and 64-bit floating "
                                     f"point (MXNet neither), not {np.dtype(dtype)}: use .astype('float32')")


def check_dot_dtype(*dtypes: np.dtype) -> None:
    if len(set(dtypes)) != 1:
        raise SparseUnsupportedError(f"dot: operands have dtypes {', '.join(map(str, dtypes))}; MXNet needs equal dtypes")
    check_float("dot", dtypes[0])


# ---------------------------------------------------------------------- dot


def csr_dot_dense(x: CSRNDArray, rhs: np.ndarray) -> np.ndarray:
    """``dot(csr, dense)``: each output row sums its stored values times ``rhs``'s rows, in order."""
    out = np.zeros((x.shape[0], rhs.shape[1]), rhs.dtype)
    counts = np.diff(x._indptr)
    for j in range(int(counts.max()) if counts.size else 0):
        rows = np.flatnonzero(counts > j)
        at = x._indptr[rows] + j
        out[rows] += x._values[at, None] * rhs[x._columns[at]]
    return out


def csr_t_dot_dense(x: CSRNDArray, rhs: np.ndarray) -> RowSparseNDArray:
    """``dot(csr.T, dense)``: a row-sparse array of the csr's columns that hold values."""
    out = np.zeros((x.shape[1], rhs.shape[1]), rhs.dtype)
    with np.errstate(all="ignore"):  # inf * 0 is nan, silently, as in MXNet
        np.add.at(out, x._columns, x._values[:, None] * rhs[x._rows()])
    rows = np.unique(x._columns).astype(INDEX_DTYPE)
    return RowSparseNDArray(RowSparse._trusted(np.ascontiguousarray(out[rows]), rows, (x.shape[1], rhs.shape[1])),
                            x.context)


def dense_dot_csr(lhs: np.ndarray, x: CSRNDArray) -> CSRNDArray:
    """``dot(dense, csr)``: a csr array with every lhs row holding each column the csr uses."""
    out = np.zeros((lhs.shape[0], x.shape[1]), lhs.dtype)
    with np.errstate(all="ignore"):  # inf * 0 is nan, silently, as in MXNet
        np.add.at(out.T, x._columns, (lhs[:, x._rows()] * x._values[None, :]).T)  # out.T: a view
    columns = np.unique(x._columns).astype(INDEX_DTYPE)
    count = columns.size
    indptr = np.arange(lhs.shape[0] + 1, dtype=INDEX_DTYPE) * count
    return CSRNDArray(np.ascontiguousarray(out[:, columns]).reshape(-1), np.tile(columns, lhs.shape[0]), indptr,
                      (lhs.shape[0], x.shape[1]), x.context)


# ---------------------------------------------------------------------- rows and slices
def csr_slice(x: CSRNDArray, begin: int, end: int, col_begin: int, col_end: int) -> CSRNDArray:
    """Rows ``begin:end`` and columns ``col_begin:col_end`` (already normalised) of ``x``."""
    rows = x.rows(begin, end)
    if (col_begin, col_end) == (0, x.shape[1]):
        return rows
    keep = (rows._columns >= col_begin) & (rows._columns < col_end)
    counts = np.bincount(rows._rows()[keep], minlength=rows.shape[0])
    indptr = np.zeros(rows.shape[0] + 1, INDEX_DTYPE)
    np.cumsum(counts, out=indptr[1:])
    return CSRNDArray(rows._values[keep].copy(), rows._columns[keep] - col_begin, indptr,
                      (rows.shape[0], col_end - col_begin), x.context)


def csr_concat_rows(arrays: list[CSRNDArray]) -> CSRNDArray:
    """csr arrays stacked along axis 0."""
    nd_ops.check_same_dtype("concat", *(a._values for a in arrays))
    cols = {a.shape[1] for a in arrays}
    if len(cols) != 1:
        raise SparseUnsupportedError(f"concat: csr arrays of {sorted(cols)} columns cannot be joined along axis 0")
    offsets = np.cumsum([0] + [a._values.size for a in arrays])
    indptr = np.concatenate([[0]] + [a._indptr[1:] + off for a, off in zip(arrays, offsets)]).astype(INDEX_DTYPE)
    return CSRNDArray(np.concatenate([a._values for a in arrays]), np.concatenate([a._columns for a in arrays]),
                      indptr, (sum(a.shape[0] for a in arrays), cols.pop()), arrays[0].context)


def csr_take_rows(x: CSRNDArray, positions: np.ndarray) -> CSRNDArray:
    """The rows at ``positions`` (already clipped or wrapped), in that order."""
    starts, stops = x._indptr[positions], x._indptr[positions + 1]
    counts = stops - starts
    indptr = np.zeros(positions.size + 1, INDEX_DTYPE)
    np.cumsum(counts, out=indptr[1:])
    at = np.concatenate([np.arange(s, e) for s, e in zip(starts, stops)]).astype(INDEX_DTYPE) if positions.size \
        else np.zeros(0, INDEX_DTYPE)
    return CSRNDArray(x._values[at], x._columns[at], indptr, (positions.size, x.shape[1]), x.context)


__all__ = ["add_rows", "check_dot_dtype", "check_float", "csr_binary", "csr_concat_rows", "csr_dot_dense",
           "csr_l2_norm_axis", "csr_slice", "csr_t_dot_dense", "csr_take_rows", "dense_dot_csr", "dense_with_stored",
           "l2_norm_all", "map_values", "rsp_binary", "with_dense"]
