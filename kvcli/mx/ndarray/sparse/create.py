"""Making sparse arrays, every form MXNet 1.9.1's ``nd.sparse`` takes, with its checks.

``row_sparse_array``, ``csr_matrix``, ``zeros``, ``empty``, ``array``, ``cast_storage`` and
``NDArray.tostype`` follow MXNet's Python code case by case (recorded in
tests/data/mxnet_sparse_ops_reference.json): the same default dtypes (the data's for numpy and
NDArray data, float32 otherwise), the same ``ValueError('invalid shape')``, ``Shape mismatch
detected`` and ``Unexpected length of input tuple`` errors. Where MXNet silently builds an
array it then computes with wrongly (row ids or columns unsorted, repeated or outside
``shape``, an ``indptr`` that does not fit, fractional ids it truncates), kvcli refuses it.
``csr_matrix((data, (row, col)))`` works without scipy (MXNet needs scipy for it) and, like
scipy, sums repeated coordinates.
"""

from __future__ import annotations

from typing import Any, Sequence, cast

import numpy as np

from kvcli.arrays.sparse import RowSparse
from kvcli.errors import CSRError, RowSparseError, ShapeMismatchError, SparseUnsupportedError
from kvcli.mx.ndarray.context import Context
from kvcli.mx.ndarray.ndarray import DEFAULT_DTYPE, NDArray, as_context, as_shape
from kvcli.mx.ndarray.ndarray import zeros as dense_zeros
from kvcli.mx.ndarray.sparse.base import CSR, DEFAULT, ROW_SPARSE, STYPES, BaseSparseNDArray, check_stype, is_sparse
from kvcli.mx.ndarray.sparse.csr import INDEX_DTYPE, CSRNDArray, csr_shape
from kvcli.mx.ndarray.sparse.rowsparse import RowSparseNDArray


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _default_dtype(source: Any, dtype: Any) -> np.dtype:
    """MXNet's ``_prepare_default_dtype``: ``dtype``, else the source's for an NDArray, numpy
    array or scipy matrix, else float32."""
    if dtype is not None:
        return np.dtype(dtype)
    if isinstance(source, (NDArray, np.ndarray)) or is_scipy_csr(source):
        return np.dtype(source.dtype)
    return np.dtype(DEFAULT_DTYPE)


def _values(source: Any, dtype: Any = None) -> np.ndarray:
    """A numpy copy of an NDArray (sparse: its dense values), numpy array or nested list."""
    if isinstance(source, NDArray):
        source = source.asnumpy()
    try:
        return np.array(source, dtype=dtype, copy=True)
    except (TypeError, ValueError):
        raise TypeError(f"values must be array like object, not {type(source).__name__}") from None


def _ids(source: Any, what: str) -> np.ndarray:
    """Row ids / columns / indptr as int64: whole numbers only (MXNet truncates fractions silently)."""
    ids = _values(source)
    if ids.dtype.kind == "f":
        if ids.size and not (np.all(np.isfinite(ids)) and np.all(ids == np.trunc(ids))):
            raise RowSparseError(f"{what} must be whole numbers, got {ids.reshape(-1)[:5].tolist()}")
    elif ids.dtype.kind not in "iub" and ids.size:
        raise RowSparseError(f"{what} must be whole numbers, got dtype {ids.dtype}")
    return ids.astype(INDEX_DTYPE)


def check_shape(given: Sequence[int] | None, wanted: Sequence[int] | None) -> None:
    """MXNet's ``_check_shape``: both given and different is ``Shape mismatch detected``."""
    if given and wanted and tuple(given) != tuple(wanted):
        raise ShapeMismatchError(f"Shape mismatch detected. {tuple(given)} v.s. {tuple(wanted)}")


def _nonempty(shape: tuple[int, ...], what: str) -> tuple[int, ...]:
    if not shape or min(shape) <= 0:
        raise SparseUnsupportedError(f"{what}: shape {shape} has a zero-size dimension: MXNet makes no sparse array "
                                     "of it (its shape inference fails), nor does kvcli")
    return shape


# ---------------------------------------------------------------------- row_sparse_array
def row_sparse_array(arg1: Any, shape: Sequence[int] | None = None, ctx: Context | None = None,
                     dtype: Any = None) -> RowSparseNDArray:
    """A ``RowSparseNDArray``, as ``mxnet.nd.sparse.row_sparse_array``.

    ``arg1`` is ``(data, indices)`` (``shape`` defaults to ``(indices[-1] + 1,) +
    data.shape[1:]``; given, it must agree with ``data``), a shape ``(d0, d1, ...)`` (all
    zeros), a ``RowSparseNDArray`` (copied) or anything dense (its non-zero rows).
    """
    if isinstance(arg1, tuple):
        if len(arg1) < 2:
            raise ValueError(f"Unexpected length of input tuple: {len(arg1)}")
        if len(arg1) > 2 or (_is_int(arg1[0]) and _is_int(arg1[1])):
            check_shape(arg1, shape)
            return cast(RowSparseNDArray, zeros(ROW_SPARSE, tuple(int(d) for d in arg1), ctx=ctx, dtype=dtype))
        return _row_sparse_from_definition(arg1[0], arg1[1], shape, ctx, dtype)
    if isinstance(arg1, RowSparseNDArray):
        check_shape(arg1.shape, shape)
        return cast(RowSparseNDArray, array(arg1, ctx=ctx, dtype=dtype))
    if isinstance(arg1, CSRNDArray):
        raise ValueError("Unexpected input type: CSRNDArray (a csr array cannot become row_sparse, in MXNet neither)")
    dense = _values(arg1, _default_dtype(arg1, dtype))
    check_shape(dense.shape, shape)
    return cast(RowSparseNDArray, tostype_dense(dense, ROW_SPARSE, as_context(ctx)))


def _row_sparse_from_definition(data: Any, indices: Any, shape: Sequence[int] | None, ctx: Context | None,
                                dtype: Any) -> RowSparseNDArray:
    values = _values(data, _default_dtype(data, dtype))
    ids = _ids(indices, "row_sparse_array indices")
    if shape is None:
        if ids.ndim != 1 or ids.shape[0] == 0:
            raise ValueError("invalid shape: row_sparse_array with no indices needs shape=(rows, ...)")
        shape = (int(ids[-1]) + 1, *values.shape[1:])
    dims = tuple(int(d) for d in shape)
    if values.ndim != len(dims) or ids.ndim != 1 or int(np.prod(dims[1:])) == 0:
        raise ValueError(f"invalid shape: data of shape {values.shape} and {ids.ndim}-d indices cannot make a "
                         f"row_sparse array of shape {dims}")
    if values.shape[1:] != dims[1:] or values.shape[0] != ids.shape[0]:
        raise ShapeMismatchError(f"row_sparse_array: data of shape {values.shape} does not fit {ids.shape[0]} indices "
                                 f"and shape {dims}: it needs shape {(ids.shape[0], *dims[1:])}")
    return RowSparseNDArray(RowSparse(values, ids, dims, copy=False), ctx)


# ---------------------------------------------------------------------- csr_matrix
def csr_matrix(arg1: Any, shape: Sequence[int] | None = None, ctx: Context | None = None,
               dtype: Any = None) -> CSRNDArray:
    """A ``CSRNDArray``, as ``mxnet.nd.sparse.csr_matrix``.

    ``arg1`` is ``(data, indices, indptr)`` (``shape`` defaults to ``(len(indptr) - 1,
    max(indices) + 1)``), ``(data, (row, col))`` (coordinates; repeated ones are summed, as
    scipy does for MXNet), a shape ``(rows, cols)`` (all zeros), a ``CSRNDArray`` or scipy CSR
    matrix (copied), or a dense 2-D array (its non-zero values).
    """
    if isinstance(arg1, tuple):
        if len(arg1) == 2:
            if isinstance(arg1[1], tuple) and len(arg1[1]) == 2:
                data, (row, col) = arg1
                return _from_coordinates(data, row, col, shape, ctx, dtype)
            check_shape(arg1, shape)
            return cast(CSRNDArray, zeros(CSR, arg1, ctx=ctx, dtype=dtype))
        if len(arg1) == 3:
            return _csr_from_definition(arg1[0], arg1[1], arg1[2], shape, ctx, dtype)
        raise ValueError(f"Unexpected length of input tuple: {len(arg1)}")
    if isinstance(arg1, CSRNDArray) or is_scipy_csr(arg1):
        check_shape(arg1.shape, shape)
        return cast(CSRNDArray, array(arg1, ctx=ctx, dtype=dtype))
    if isinstance(arg1, RowSparseNDArray):
        raise ValueError("Unexpected input type: RowSparseNDArray (a row_sparse array cannot become csr, in MXNet "
                         "neither)")
    dense = _values(arg1, _default_dtype(arg1, dtype))
    check_shape(dense.shape, shape)
    return cast(CSRNDArray, tostype_dense(dense, CSR, as_context(ctx)))


def _csr_from_definition(data: Any, indices: Any, indptr: Any, shape: Sequence[int] | None, ctx: Context | None,
                         dtype: Any) -> CSRNDArray:
    values = _values(data, _default_dtype(data, dtype))
    columns, pointers = _ids(indices, "csr_matrix indices"), _ids(indptr, "csr_matrix indptr")
    if shape is None:
        if columns.ndim != 1 or columns.shape[0] == 0:
            raise ValueError("invalid shape: csr_matrix with no indices needs shape=(rows, cols)")
        shape = (pointers.shape[0] - 1, int(columns.max()) + 1)
    if values.ndim != 1 or pointers.ndim != 1 or columns.ndim != 1 or pointers.shape[0] == 0 or len(shape) != 2:
        raise ValueError(f"invalid shape: csr_matrix needs 1-d data, indices and indptr and a 2-d shape, not "
                         f"{values.ndim}-d data, {columns.ndim}-d indices, {pointers.shape[0]} indptr entries and "
                         f"shape {tuple(shape)}")
    return CSRNDArray.checked(values, columns, pointers, csr_shape(shape), ctx)


def _from_coordinates(data: Any, row: Any, col: Any, shape: Sequence[int] | None, ctx: Context | None,
                      dtype: Any) -> CSRNDArray:
    """As scipy's ``coo_matrix((data, (row, col)), shape).tocsr()`` that MXNet calls: duplicates
    summed in coordinate order, columns sorted; the dtype is scipy's (the data's numpy dtype)."""
    values = _values(data).reshape(-1)
    rows, cols = _ids(row, "csr_matrix row").reshape(-1), _ids(col, "csr_matrix col").reshape(-1)
    if not rows.size == cols.size == values.size:
        raise CSRError(f"csr_matrix: {values.size} values, {rows.size} rows and {cols.size} columns: give one of each "
                       "per value")
    if shape is None:
        if not rows.size:
            raise ValueError("cannot infer dimensions from zero sized index arrays: give shape=(rows, cols)")
        shape = (int(rows.max()) + 1, int(cols.max()) + 1)
    dims = csr_shape(shape)
    if rows.size and (rows.min() < 0 or rows.max() >= dims[0] or cols.min() < 0 or cols.max() >= dims[1]):
        raise CSRError(f"csr_matrix: a coordinate lies outside shape {dims}")
    order = np.lexsort((cols, rows))  # stable: repeated coordinates keep their order when summed
    rows, cols, values = rows[order], cols[order], values[order]
    first = np.ones(rows.size, bool)
    first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    summed = np.add.reduceat(values, np.flatnonzero(first)) if values.size else values
    rows, cols = rows[first], cols[first]
    indptr = np.zeros(dims[0] + 1, INDEX_DTYPE)
    np.cumsum(np.bincount(rows, minlength=dims[0]), out=indptr[1:])
    result = CSRNDArray(np.asarray(summed, values.dtype), cols, indptr, dims, ctx)
    return result if dtype is None else result.astype(dtype)


# ---------------------------------------------------------------------- zeros, empty, array
def zeros(stype: str, shape: Any, ctx: Context | None = None, dtype: Any = None, **kwargs: Any) -> NDArray:
    """All zeros of storage type ``stype`` (``'row_sparse'``: no row stored; ``'csr'``: no value
    stored; ``'default'``: a dense array). ``shape`` is a tuple, as MXNet requires."""
    if stype == DEFAULT:
        return dense_zeros(shape, ctx, dtype, **kwargs)
    if stype not in STYPES:
        raise ValueError(f"unknown storage type {stype!r}: use 'default', 'row_sparse' or 'csr'")
    if _is_int(shape):
        raise TypeError(f"nd.sparse.zeros takes a shape tuple, not the int {shape} (as MXNet): use ({shape},)")
    dims = _nonempty(tuple(int(d) for d in shape), f"zeros({stype!r})")
    kind = np.dtype(DEFAULT_DTYPE if dtype is None else dtype)
    if stype == CSR:
        return CSRNDArray.empty(csr_shape(dims), kind, ctx)
    return RowSparseNDArray(RowSparse.zeros(dims, kind), ctx)


def empty(stype: str, shape: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """As :func:`zeros` for ``'row_sparse'`` and ``'csr'`` (an int shape is one dimension)."""
    if stype not in (CSR, ROW_SPARSE):
        raise SparseUnsupportedError(f"unknown stype : {stype} (nd.sparse.empty makes 'csr' or 'row_sparse' arrays)")
    return zeros(stype, (shape,) if _is_int(shape) else shape, ctx, dtype)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """A copy of a sparse array (or a scipy CSR matrix) on ``ctx`` (default: the current
    context) of ``dtype`` (default: the source's), as ``mxnet.nd.sparse.array``."""
    if isinstance(source_array, NDArray):
        if not is_sparse(source_array):
            raise AssertionError("Please use `tostype` to create RowSparseNDArray or CSRNDArray from an NDArray")
        kind = _default_dtype(source_array, dtype)
        copy = cast(BaseSparseNDArray, source_array.astype(kind))._with_context(as_context(ctx))
        return copy
    if is_scipy_csr(source_array):
        canonical = source_array.sorted_indices()
        canonical.sum_duplicates()
        return csr_matrix((canonical.data, canonical.indices, canonical.indptr), shape=canonical.shape,
                          dtype=_default_dtype(source_array, dtype), ctx=ctx)
    if isinstance(source_array, (np.ndarray, np.generic)):
        raise ValueError("Please use mx.nd.array to create an NDArray with source_array of type numpy.ndarray")
    raise ValueError(f"Unexpected source_array type: {type(source_array).__name__} (nd.sparse.array copies a sparse "
                     "array)")


def is_scipy_csr(value: Any) -> bool:
    """Whether ``value`` is a scipy.sparse csr matrix (scipy is not imported for it)."""
    module = type(value).__module__
    return module.startswith("scipy.sparse") and getattr(value, "format", None) == "csr"


# ---------------------------------------------------------------------- storage conversion
def tostype_dense(dense: np.ndarray, stype: str, ctx: Context) -> NDArray:
    """The ``stype`` form of dense values (MXNet's ``cast_storage`` of a dense array)."""
    if stype == DEFAULT:
        return NDArray(np.array(dense, copy=True), ctx)
    if stype == CSR and dense.ndim != 2:
        raise SparseUnsupportedError(f"To convert to a CSR, the NDArray should be 2 Dimensional. Current shape is "
                                     f"{dense.shape}")
    _nonempty(dense.shape, f"tostype({stype!r})")
    if stype == CSR:
        return CSRNDArray.from_dense(dense, ctx)
    return RowSparseNDArray(RowSparse.from_dense(dense), ctx)


def cast_storage(data: NDArray, stype: str, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """``data`` in storage type ``stype`` (MXNet's ``cast_storage``): dense <-> csr (2-D) and
    dense <-> row_sparse; csr <-> row_sparse is refused, as in MXNet."""
    check_stype(stype, "cast_storage")
    if not isinstance(data, NDArray):
        raise TypeError(f"cast_storage takes an NDArray, not {type(data).__name__}")
    if is_sparse(data):
        result = cast(BaseSparseNDArray, data).tostype(stype)
    else:
        result = tostype_dense(data._kvcli_buffer(), stype, data.context)
    if out is None:
        return result
    if out.stype != result.stype:
        raise SparseUnsupportedError(f"cast_storage: out is {out.stype}, not {result.stype}")
    result.copyto(out)
    return out


def tostype(array: NDArray, stype: str) -> NDArray:
    """``NDArray.tostype``: a copy in ``stype`` storage."""
    return cast_storage(array, stype)


def wrap(value: Any, ctx: Context | None = None) -> NDArray:
    """A store value as an NDArray: RowSparse -> RowSparseNDArray (sharing it), numpy -> NDArray."""
    if isinstance(value, RowSparse):
        return RowSparseNDArray(value, ctx)
    return NDArray(value, ctx)


# ---------------------------------------------------------------------- what dense nd gains
# The package kvcli.mx.ndarray installs these (nd.zeros, NDArray.tostype, NDArray.copyto):
# the dense module knows nothing of sparse arrays.
def nd_zeros(shape: Any, ctx: Context | None = None, dtype: Any = None, stype: str | None = None,
             **kwargs: Any) -> NDArray:
    """An array of zeros (float32 unless ``dtype`` says otherwise); ``stype='row_sparse'``
    (``'csr'``) gives a :class:`RowSparseNDArray` (:class:`CSRNDArray`) storing nothing, and so
    does a sparse ``out=``."""
    if stype is not None and stype != DEFAULT:
        return zeros(stype, shape, ctx, dtype)
    if is_sparse(kwargs.get("out")):
        return filled_into("zeros", shape, dtype, kwargs["out"])
    return dense_zeros(shape, ctx, dtype, **kwargs)


def filled_into(name: str, shape: Any, dtype: Any, out: Any) -> NDArray:
    """``nd.zeros`` / ``nd.ones`` with a sparse ``out``: ``out`` holding zeros (nothing stored)
    or ones (everything stored), keeping its storage type; the shape and the dtype (float32
    unless given) must be ``out``'s, as MXNet checks."""
    wanted = np.dtype(DEFAULT_DTYPE if dtype is None else dtype)
    if np.dtype(out.dtype) != wanted:
        raise SparseUnsupportedError(f"{name}: Type inconsistent, Provided = {np.dtype(out.dtype)}, inferred type = "
                                     f"{wanted}: give dtype={np.dtype(out.dtype).name!r} or an out of {wanted}")
    if tuple(out.shape) != as_shape(shape):
        raise SparseUnsupportedError(f"{name}: Shape inconsistent, Provided = {tuple(out.shape)}, inferred shape = "
                                     f"{as_shape(shape)}")
    out._assign_dense(np.full(out.shape, 0 if name == "zeros" else 1, wanted))
    return out


nd_zeros.__name__ = nd_zeros.__qualname__ = "zeros"


def tostype_method(self: NDArray, stype: str) -> NDArray:
    """A copy in ``stype`` storage: ``'row_sparse'`` keeps the non-zero rows, ``'csr'`` (2-D)
    the non-zero values, ``'default'`` is a dense copy."""
    return cast_storage(self, stype)


tostype_method.__name__ = tostype_method.__qualname__ = "tostype"


def copyto_method(dense_copyto: Any) -> Any:
    """NDArray's ``copyto`` (``dense_copyto``), which into a sparse array stores the non-zero
    rows (row_sparse) or values (csr), keeping the target's storage type, as MXNet does."""

    def copyto(self: NDArray, other: Any) -> Any:
        """Copy into ``other`` (an NDArray of the same shape, or a context for a new array);
        into a sparse array the target keeps its storage type."""
        if is_sparse(other):
            if tuple(other.shape) != tuple(self.shape):
                raise ShapeMismatchError(f"copyto: shape {self.shape} cannot be copied into shape {other.shape}")
            other._assign_dense(self._kvcli_buffer())
            return other
        return dense_copyto(self, other)

    copyto.__doc__ = dense_copyto.__doc__
    return copyto


__all__ = ["array", "cast_storage", "check_shape", "copyto_method", "csr_matrix", "empty", "filled_into",
           "is_scipy_csr", "nd_zeros",
           "row_sparse_array", "tostype", "tostype_dense", "tostype_method", "wrap", "zeros"]
