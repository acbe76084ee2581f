"""Row-sparse values: the rows of an array that are present, and their row ids.

A :class:`RowSparse` is MXNet's ``row_sparse`` storage without MXNet: ``data`` holds the
present rows (shape ``(len(indices),) + shape[1:]``), ``indices`` their row ids (1-D int64,
sorted, unique, inside ``[0, shape[0])``) and ``shape`` the full dense shape. Rows that are
not listed are zero. Operations on it cost in proportion to the rows involved, never to
``shape[0]``: that is what makes a row-sparse pull of a few rows of a huge table cheap.

The attributes ``data``, ``indices`` and ``shape`` are the protocol the rest of kvcli (the
stores, the optimizers' lazy updates, the ``nd.sparse`` layer) relies on; anything with
those three attributes and ``stype == "row_sparse"`` is accepted where a value is expected.

A value is mutable in place (``assign``, ``add_``): a store hands the stored object to the
updater, and whatever the updater does to it is the new stored value.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kvcli.arrays.summation import sum_into
from kvcli.errors import DTypeMismatchError, RowSparseError, ShapeMismatchError

#: The storage-type names MXNet uses; kvcli stores the first two.
DEFAULT = "default"
ROW_SPARSE = "row_sparse"
INDEX_DTYPE = np.dtype(np.int64)


class RowSparse:
    """A row-sparse array (see the module docstring).

    Args:
        data: the present rows, shape ``(len(indices),) + shape[1:]``.
        indices: their row ids; must be sorted, unique and inside ``[0, shape[0])``.
        shape: the full dense shape (at least one dimension).
        copy: copy ``data`` and ``indices`` (default) instead of keeping the arrays given.

    Raises:
        RowSparseError: the indices are not integers, not sorted, repeated or out of range.
        ShapeMismatchError: ``data`` does not fit ``indices`` and ``shape``.
    """

    __slots__ = ("data", "indices", "shape")
    #: numpy defers to our operators and ufunc handling (``ndarray + RowSparse``).
    __array_priority__ = 1000.0

    def __init__(self, data: Any, indices: Any, shape: Sequence[int], copy: bool = True) -> None:
        self.shape: tuple[int, ...] = _check_shape(shape)
        self.indices: np.ndarray = _as_indices(indices, copy=copy)
        self.data: np.ndarray = np.array(data, copy=True, order="C") if copy else np.asarray(data)
        self.validate()

    # ------------------------------------------------------------------ construction
    @classmethod
    def zeros(cls, shape: Sequence[int], dtype: Any = np.float32) -> "RowSparse":
        """No rows present: all zeros, costing no memory for the rows."""
        shape = _check_shape(shape)
        return cls._trusted(np.zeros((0, *shape[1:]), dtype), np.zeros(0, INDEX_DTYPE), shape)

    @classmethod
    def from_dense(cls, array: Any) -> "RowSparse":
        """The non-zero rows of a dense array (MXNet's ``tostype('row_sparse')``)."""
        array = np.asarray(array)
        shape = _check_shape(array.shape)
        nonzero = array.reshape(shape[0], -1).any(axis=1) if array.size else np.zeros(shape[0], bool)
        rows = np.flatnonzero(nonzero).astype(INDEX_DTYPE, copy=False)
        return cls._trusted(np.ascontiguousarray(array[rows]), rows, shape)

    @classmethod
    def all_rows(cls, array: Any) -> "RowSparse":
        """Every row of a dense array, zero or not (a copy)."""
        array = np.array(array, copy=True, order="C")
        shape = _check_shape(array.shape)
        return cls._trusted(array, np.arange(shape[0], dtype=INDEX_DTYPE), shape)

    @classmethod
    def _trusted(cls, data: np.ndarray, indices: np.ndarray, shape: tuple[int, ...]) -> "RowSparse":
        """Wrap arrays already known to be valid (no check, no copy)."""
        value = cls.__new__(cls)
        value.data, value.indices, value.shape = data, indices, shape
        return value

    # ------------------------------------------------------------------ attributes
    @property
    def dtype(self) -> np.dtype:
        """The dtype of the values."""
        return self.data.dtype

    @property
    def stype(self) -> str:
        """``"row_sparse"`` (MXNet's name for this storage)."""
        return ROW_SPARSE

    @property
    def nbytes(self) -> int:
        """Bytes held by the present rows and their ids."""
        return int(self.data.nbytes + self.indices.nbytes)

    def validate(self) -> None:
        """Check that ``data``, ``indices`` and ``shape`` agree (after an in-place change)."""
        _check_sorted_in_range(self.indices, self.shape[0], "row-sparse indices")
        want = (len(self.indices), *self.shape[1:])
        if self.data.shape != want:
            raise ShapeMismatchError(
                f"row-sparse data has shape {self.data.shape} but {len(self.indices)} indices and "
                f"shape {self.shape} need data of shape {want}"
            )

    # ------------------------------------------------------------------ conversion
    def to_dense(self, out: np.ndarray | None = None) -> np.ndarray:
        """The dense array (into ``out`` when given: it is zeroed, then the rows written)."""
        if out is None:
            out = np.zeros(self.shape, self.dtype)
        else:
            out[...] = 0
        out[self.indices] = self.data
        return out

    def copy(self) -> "RowSparse":
        """An independent copy."""
        return RowSparse._trusted(self.data.copy(), self.indices.copy(), self.shape)

    def astype(self, dtype: Any) -> "RowSparse":
        """A copy with values of ``dtype`` (nan or out of range to integers: what C's conversion
        gives, without a warning, as in MXNet)."""
        with np.errstate(invalid="ignore"):
            return RowSparse._trusted(self.data.astype(dtype), self.indices.copy(), self.shape)

    def rows(self, row_ids: np.ndarray) -> "RowSparse":
        """The rows ``row_ids`` (checked: sorted, unique, in range), zero where not present.

        The result lists every requested row, as MXNet's row-sparse pull does. Cost: a
        binary search per requested row plus copying the rows, independent of ``shape[0]``.
        """
        if len(self.indices) == self.shape[0]:
            # every row present (an embedding table): sorted unique ids in range are then
            # exactly 0..n-1, so an id is its own position and no search is needed
            return RowSparse._trusted(self.data[row_ids], row_ids, self.shape)
        data = np.zeros((len(row_ids), *self.shape[1:]), self.dtype)
        if len(row_ids) and len(self.indices):
            at = np.searchsorted(self.indices, row_ids)
            inside = at < len(self.indices)
            found = np.zeros(len(row_ids), bool)
            found[inside] = self.indices[at[inside]] == row_ids[inside]
            data[found] = self.data[at[found]]
        return RowSparse._trusted(data, row_ids, self.shape)

    # ------------------------------------------------------------------ in place
    def assign(self, other: "RowSparse") -> None:
        """Become a copy of ``other`` (same shape and dtype)."""
        _check_like(self, other, "assign")
        self.data, self.indices = other.data.copy(), other.indices.copy()

    def add_(self, other: "RowSparse | np.ndarray", sign: int = 1) -> None:
        """``self += other`` (``-=`` with ``sign=-1``) by rows: the union of both rows."""
        _check_like(self, other, "add")
        other = other if isinstance(other, RowSparse) else RowSparse.all_rows(other)
        if sign < 0:
            other = RowSparse._trusted(-other.data, other.indices, other.shape)
        summed = sum_rows([self, other])
        self.data, self.indices = summed.data, summed.indices

    # ------------------------------------------------------------------ numpy interplay
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        dense = self.to_dense()
        return dense if dtype is None else dense.astype(dtype)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """``np.add`` / ``np.subtract`` of row-sparse values (``out=`` a row-sparse value
        updates it in place) and ``np.multiply`` / ``np.divide`` by a scalar; other ufuncs
        are refused, so no operation silently densifies a huge table."""
        out = kwargs.pop("out", None)
        kwargs.pop("casting", None)
        if method != "__call__" or kwargs or ufunc not in _UFUNCS:
            raise RowSparseError(
                f"numpy {ufunc.__name__} is not defined on row-sparse values: use +, -, * or / by "
                "a scalar, or convert with .to_dense()"
            )
        result = _UFUNCS[ufunc](*inputs)  # type: ignore[no-untyped-call]  # the table holds lambdas
        if out is None:
            return result
        target = out[0] if isinstance(out, tuple) else out
        if isinstance(target, RowSparse):
            target.assign(result if isinstance(result, RowSparse) else RowSparse.from_dense(result))
        else:
            np.copyto(target, np.asarray(result), casting="same_kind")
        return target

    def __add__(self, other: Any) -> Any:
        return _add(self, other)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return _add(self, other, sign=-1)

    def __rsub__(self, other: Any) -> Any:
        return _add(-self, other)

    def __mul__(self, other: Any) -> "RowSparse":
        return _scale(self, other, np.multiply)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> "RowSparse":
        return _scale(self, other, np.true_divide)

    def __neg__(self) -> "RowSparse":
        return RowSparse._trusted(-self.data, self.indices.copy(), self.shape)

    def __iadd__(self, other: Any) -> "RowSparse":
        self.add_(_as_operand(other, self))
        return self

    def __isub__(self, other: Any) -> "RowSparse":
        self.add_(_as_operand(other, self), sign=-1)
        return self

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RowSparse)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and np.array_equal(self.indices, other.indices)
            and np.array_equal(self.data, other.data)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RowSparse(shape={self.shape}, dtype={self.dtype}, rows={len(self.indices)})"


# ---------------------------------------------------------------------- summing
def sum_rows(values: Sequence[RowSparse]) -> RowSparse:
    """The row-wise sum of ``values`` (a multi-device push), in the given order.

    The result holds the union of the values' rows. On those rows it is bit-for-bit the
    dense left-to-right sum of :func:`kvcli.arrays.summation.sum_into` (missing rows count as
    zeros, so even the sign of a zero matches); the other rows are zero in both.
    """

    first = values[0]
    if len(values) == 1:
        return first.copy()
    union = first.indices
    for value in values[1:]:
        if not np.array_equal(value.indices, union):
            union = np.union1d(union, value.indices).astype(INDEX_DTYPE, copy=False)
    # Each value laid out on the union rows (zeros where absent), then summed exactly as
    # the dense arrays would be: cost grows with the rows pushed, not with the table.
    aligned = [v.data if len(v.indices) == len(union) else v.rows(union).data for v in values]
    out = np.empty((len(union), *first.shape[1:]), first.dtype)
    return RowSparse._trusted(sum_into(out, aligned), union, first.shape)


def merge(values: Sequence["RowSparse | np.ndarray"]) -> "RowSparse | np.ndarray":
    """The sum of a push's per-device values, some of them row-sparse.

    All row-sparse: their row-wise sum. All dense (a dense push to a row-sparse key): the
    dense sum. Mixed: the dense sum with every row present, as MXNet's CPU reduce returns
    for mixed storage types.
    """

    sparse = [isinstance(v, RowSparse) for v in values]
    if all(sparse):
        return sum_rows(values)  # type: ignore[arg-type]
    dense = [v.to_dense() if isinstance(v, RowSparse) else v for v in values]
    total = sum_into(np.empty(dense[0].shape, dense[0].dtype), dense)
    return RowSparse.all_rows(total) if any(sparse) else total


# ---------------------------------------------------------------------- row ids
def check_row_ids(row_ids: Any, num_rows: int, what: str) -> np.ndarray:
    """``row_ids`` as sorted unique int64 row ids inside ``[0, num_rows)``.

    Unsorted and repeated ids are sorted and made unique (MXNet's row-sparse pull does the
    same); ids that are not whole numbers or lie outside the table are an error.
    """
    ids = np.asarray(_as_numpy(row_ids)).ravel()
    ids = np.unique(_integral(ids, what))
    if ids.size and (ids[0] < 0 or ids[-1] >= num_rows):
        bad = ids[0] if ids[0] < 0 else ids[-1]
        raise RowSparseError(
            f"{what}: row id {bad} is out of range for {num_rows} rows: use ids in [0, {num_rows})"
        )
    return ids


def as_row_sparse(value: Any) -> RowSparse | None:
    """The :class:`RowSparse` behind ``value``, or None when it is not row-sparse.

    Accepts a :class:`RowSparse`, a ``kvcli.mx.ndarray.sparse.RowSparseNDArray`` (the same object,
    not a copy) and any object with ``stype == "row_sparse"`` and ``data``/``indices``/
    ``shape`` attributes (checked, copied).
    """
    if isinstance(value, RowSparse):
        return value
    inner = getattr(value, "_kvcli_row_sparse", None)
    if inner is not None:
        return inner()
    if getattr(value, "stype", None) == ROW_SPARSE:
        return RowSparse(_as_numpy(value.data), _as_numpy(value.indices), tuple(value.shape))
    return None


def stype_of(value: Any) -> str:
    """``"row_sparse"`` for a row-sparse value, ``"default"`` otherwise."""
    return ROW_SPARSE if as_row_sparse(value) is not None else DEFAULT


# ---------------------------------------------------------------------- helpers
def _as_numpy(value: Any) -> np.ndarray:
    asnumpy = getattr(value, "asnumpy", None)
    return np.asarray(asnumpy() if asnumpy is not None else value)


def _check_shape(shape: Sequence[int]) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in shape)
    except TypeError:
        raise ShapeMismatchError(f"row-sparse shape {shape!r} is not a tuple of sizes, e.g. (1000, 64)") from None
    if not dims or any(d < 0 for d in dims):
        raise ShapeMismatchError(
            f"row-sparse shape {dims} needs at least one dimension and no negative size, e.g. (1000, 64)"
        )
    return dims


def _integral(ids: np.ndarray, what: str) -> np.ndarray:
    if ids.dtype.kind in "iu":
        return ids.astype(INDEX_DTYPE, copy=False)
    if ids.dtype.kind == "f" and ids.size == 0:
        return ids.astype(INDEX_DTYPE)
    if ids.dtype.kind != "f" or not np.all(np.isfinite(ids)) or not np.all(ids == np.round(ids)):
        raise RowSparseError(f"{what}: row ids must be whole numbers, got {ids[:5].tolist()} (dtype {ids.dtype})")
    return ids.astype(INDEX_DTYPE)


def _as_indices(indices: Any, copy: bool) -> np.ndarray:
    ids = np.asarray(_as_numpy(indices))
    if ids.ndim != 1:
        raise RowSparseError(f"row-sparse indices must be 1-D, got shape {ids.shape}")
    ids = _integral(ids, "row-sparse indices")
    return ids.copy() if copy else ids


def _check_sorted_in_range(ids: np.ndarray, num_rows: int, what: str) -> None:
    if ids.dtype != INDEX_DTYPE or ids.ndim != 1:
        raise RowSparseError(f"{what} must be a 1-D int64 array, got {ids.dtype} of shape {ids.shape}")
    if ids.size == 0:
        return
    steps = np.diff(ids)
    if steps.size and not np.all(steps > 0):
        at = int(np.flatnonzero(steps <= 0)[0])
        kind = "repeated" if steps[at] == 0 else "not sorted"
        raise RowSparseError(
            f"{what} are {kind} (row {ids[at]} then {ids[at + 1]}): give each row once, in "
            "increasing order (np.unique sorts and de-duplicates)"
        )
    if ids[0] < 0 or ids[-1] >= num_rows:
        bad = ids[0] if ids[0] < 0 else ids[-1]
        raise RowSparseError(f"{what}: row {bad} is out of range for {num_rows} rows: use rows in [0, {num_rows})")


def _check_like(value: RowSparse, other: Any, verb: str) -> None:
    if tuple(other.shape) != value.shape:
        raise ShapeMismatchError(
            f"row-sparse {verb}: shape {tuple(other.shape)} does not match {value.shape}"
        )
    if other.dtype != value.dtype:
        raise DTypeMismatchError(
            f"row-sparse {verb}: dtype {other.dtype} does not match {value.dtype}; convert with .astype()"
        )


def _as_operand(other: Any, like: RowSparse) -> "RowSparse | np.ndarray":
    sparse = as_row_sparse(other)
    return sparse if sparse is not None else np.asarray(_as_numpy(other), like.dtype)


def _add(value: RowSparse, other: Any, sign: int = 1) -> Any:
    """row-sparse ± row-sparse stays row-sparse; with anything else the result is dense."""
    sparse = as_row_sparse(other)
    if sparse is not None:
        result = value.copy()
        result.add_(sparse, sign=sign)
        return result
    dense = value.to_dense()
    return dense + other if sign > 0 else dense - other


def _scale(value: RowSparse, factor: Any, op: np.ufunc) -> RowSparse:
    if not np.isscalar(factor) and np.ndim(factor) != 0:
        raise RowSparseError(
            f"a row-sparse value can be multiplied or divided by a scalar only, not by an array "
            f"of shape {np.shape(factor)}: convert with .to_dense() first"
        )
    return RowSparse._trusted(op(value.data, factor), value.indices.copy(), value.shape)


def _no_divide() -> Any:
    raise RowSparseError("dividing by a row-sparse value is not defined (its missing rows are zero)")


_UFUNCS = {
    np.add: lambda a, b: _add(a, b) if isinstance(a, RowSparse) else _add(b, a),
    np.subtract: lambda a, b: _add(a, b, -1) if isinstance(a, RowSparse) else _add(-b, a),
    np.multiply: lambda a, b: _scale(a, b, np.multiply) if isinstance(a, RowSparse) else _scale(b, a, np.multiply),
    np.true_divide: lambda a, b: _scale(a, b, np.true_divide) if isinstance(a, RowSparse) else _no_divide(),
}


__all__ = [
    "DEFAULT", "INDEX_DTYPE", "ROW_SPARSE", "RowSparse", "as_row_sparse", "check_row_ids", "merge",
    "stype_of", "sum_rows",
]
