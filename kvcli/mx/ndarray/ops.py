"""MXNet 1.9.1's dtype rules for ``nd`` arithmetic, on plain numpy arrays.

``kvcli.mx.ndarray`` wraps these; they know nothing of NDArray. The rules, recorded from real MXNet
(``tests/data/mxnet_nd_reference.json``):

* array op array: both dtypes must be equal (MXNet refuses float32 + int32, float64 +
  float32); shapes broadcast as in numpy.
* array op scalar: the scalar is first cast to the array's dtype, so ``int32 + 1.5`` adds 1
  and ``int32 * 0.5`` multiplies by 0; the result keeps the array's dtype.
* integer division truncates toward zero (C), while ``%`` follows Python's sign rule.
* comparisons give 0/1 in the operand's dtype, not bool.
* ``sqrt`` of an integer array truncates; integer overflow wraps.
* element-wise maths and ``**`` are MXNet's kernels, value for value (:mod:`~kvcli.mx.ndarray.umath`).
"""

from __future__ import annotations

import numbers
import operator
from typing import Any, Callable

import numpy as np

from kvcli.arrays.reshape import reshape_target
from kvcli.errors import NDArrayError
from kvcli.mx.ndarray import reductions, umath


def _divide(x: Any, y: Any) -> Any:
    if np.issubdtype(np.result_type(x, y), np.integer):
        return umath.truncating_divide(x, y)
    return np.true_divide(x, y)


def cast(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """MXNet's ``Cast`` (``astype``, ``copyto``): a C conversion (float to integer toward zero;
    NaN or out of range: the type's minimum, narrower types keep the low bits; float64 to
    float16 through float32, as mshadow's ``half_t`` takes a float)."""
    if values.dtype.kind == "f" and dtype.kind in "iu":
        return umath.c_cast(values, dtype)
    if values.dtype == np.float64 and dtype == np.float16:
        values = values.astype(np.float32)
    with np.errstate(all="ignore"):
        return values.astype(dtype)


def _mod(x: Any, y: Any) -> Any:
    """MXNet's ``mod``, branch for branch: in double, C's ``fmod`` of the operands made
    positive, the divisor added (``r != 0 ? b : 0``) where the signs differ; ``x % 0`` is 0.
    Zeros keep MXNet's signs: -0.0 % 3 is -0.0, -2.5 % 0.5 and -0.0 % -3 are +0.0."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if np.result_type(x, y).kind == "u":
        return np.where(b == 0, 0.0, np.fmod(a, np.where(b == 0, 1.0, b)))
    kept = np.fmod(a, np.abs(b))  # fmod(a, +-b): a >= 0 (also -0.0)
    flipped = np.fmod(-a, np.abs(b))  # fmod(-a, +-b): a < 0
    negative_a = a < 0
    same_signs = np.where(negative_a, -flipped, kept)  # b < 0 and a < 0, or b > 0 and a >= 0
    differ = np.where(negative_a, -flipped + np.where(flipped != 0, b, 0.0), kept + np.where(kept != 0, b, 0.0))
    result = np.where(negative_a == (b < 0), same_signs, differ)
    return np.where(b == 0, 0.0, result)


def _maximum(x: Any, y: Any) -> Any:
    """MXNet's ``maximum``: ``x`` if it is NaN, else ``x > y ? x : y`` -- numpy's maximum,
    but of equal values (0.0 and -0.0) the second."""
    return np.where(np.equal(x, y), y, np.maximum(x, y))


def _minimum(x: Any, y: Any) -> Any:
    """MXNet's ``minimum``: ``x`` if it is NaN, else ``x < y ? x : y`` -- numpy's minimum,
    but of equal values (0.0 and -0.0) the second."""
    return np.where(np.equal(x, y), y, np.minimum(x, y))


#: Binary operations by the name of their Python operator (``__add__`` -> "add").
ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": _divide,
    "floordiv": np.floor_divide,  # not in MXNet's nd; kept for kvcli code, same dtype rules
    "mod": _mod,
    "pow": np.power,  # numbers only: arrays go through umath.power (MXNet's powf / pow)
    "maximum": _maximum,
    "minimum": _minimum,
}
#: Operations whose scalar form keeps the array as the first operand even when the number
#: is written first (MXNet's ``_maximum_scalar``: ``maximum(2, a)`` is ``maximum(a, 2)``).
_SCALAR_ARRAY_FIRST = frozenset({"maximum", "minimum"})
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}

#: ``nd.add(2, 3)`` and the like with two numbers: MXNet computes them in Python, so the
#: result is a Python number (``nd.divide(1, 4)`` is 0.25; comparisons give 1 or 0).
NUMBERS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "mod": operator.mod,
    "pow": operator.pow,
    "maximum": lambda x, y: x if x > y else y,
    "minimum": lambda x, y: x if x < y else y,
    "eq": lambda x, y: 1 if x == y else 0,
    "ne": lambda x, y: 1 if x != y else 0,
    "lt": lambda x, y: 1 if x < y else 0,
    "le": lambda x, y: 1 if x <= y else 0,
    "gt": lambda x, y: 1 if x > y else 0,
    "ge": lambda x, y: 1 if x >= y else 0,
}


def is_scalar(value: Any) -> bool:
    """A Python or numpy number (not a bool array, not a string)."""
    return isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, (str, bytes))


def cast_scalar(value: Any, dtype: np.dtype) -> Any:
    """``value`` converted to ``dtype`` as MXNet does before a scalar op, a fill or a scalar
    assignment: MXNet passes the number as a double (an int64 beyond 2**53 loses its low
    bits), makes a float16 of it through float32 (mshadow's ``half_t``: rounded twice) and an
    integer as C does (toward zero; out of range as :func:`~kvcli.mx.ndarray.umath.c_cast`)."""
    wide = np.float64(value)
    if dtype.kind in "iub":
        return umath.c_cast(np.asarray(wide), dtype)[()]
    if dtype == np.float16:
        return np.float32(wide).astype(np.float16)
    return np.asarray(wide).astype(dtype)[()]


def check_same_dtype(what: str, *arrays: np.ndarray) -> np.dtype:
    """The common dtype of ``arrays``, or an error naming the two that differ."""
    first = arrays[0].dtype
    for other in arrays[1:]:
        if other.dtype != first:
            raise NDArrayError(
                f"{what}: operands have dtypes {first} and {other.dtype}; MXNet needs equal "
                f"dtypes: convert one with .astype('{first}')"
            )
    return first


def _operand(name: str, lhs: np.ndarray, rhs: Any) -> Any:
    """``rhs`` checked against ``lhs`` and ready for numpy: an equal-dtype array that
    broadcasts with ``lhs``, or a scalar cast to ``lhs``'s dtype. A row-sparse operand
    counts as its dense form (dense <op> row-sparse is dense in MXNet)."""
    row_sparse = getattr(rhs, "_kvcli_row_sparse", None)
    if row_sparse is not None:
        rhs = np.asarray(row_sparse())
    if isinstance(rhs, np.ndarray):
        check_same_dtype(name, lhs, rhs)
        try:
            np.broadcast_shapes(lhs.shape, rhs.shape)
        except ValueError:
            raise NDArrayError(
                f"{name}: shapes {lhs.shape} and {rhs.shape} do not broadcast; reshape one "
                f"so that each axis is equal or 1"
            ) from None
        return rhs
    if is_scalar(rhs):
        return cast_scalar(rhs, lhs.dtype)
    raise TypeError(f"type {type(rhs).__name__} not supported: use an NDArray or a number")


def binary(name: str, lhs: np.ndarray, rhs: Any, reflected: bool = False) -> np.ndarray:
    """``lhs <op> rhs`` (or ``rhs <op> lhs`` when ``reflected``) by MXNet's rules; ``rhs`` is
    a numpy array or a scalar."""
    func = ARITHMETIC.get(name) or COMPARISONS[name]
    other = _operand(name, lhs, rhs)
    if reflected and name in _SCALAR_ARRAY_FIRST and not isinstance(other, np.ndarray):
        reflected = False
    x, y = (other, lhs) if reflected else (lhs, other)
    with np.errstate(all="ignore"):  # MXNet gives inf/nan (or wraps) without a warning
        if name == "pow":
            return np.asarray(umath.power(x, y, lhs.dtype))
        if name == "mod" and lhs.dtype.kind in "iu":
            return umath.c_cast(func(x, y), lhs.dtype)
        if name == "mod" and lhs.dtype == np.float16:  # half_t from a double goes through float
            return np.asarray(func(x, y)).astype(np.float32).astype(np.float16)
        result = func(x, y)
    return np.asarray(result).astype(lhs.dtype, copy=False)


def binary_inplace(name: str, lhs: np.ndarray, rhs: Any) -> None:
    """``lhs <op>= rhs``: the result of :func:`binary`, written into ``lhs``.

    Operands are of ``lhs``'s dtype by then, so a numpy ufunc writing straight into ``lhs``
    gives the same values without a temporary (``stored += grad`` on big arrays)."""
    other = _operand(name, lhs, rhs)
    shape = np.broadcast_shapes(lhs.shape, np.shape(other))
    if shape != lhs.shape:
        raise NDArrayError(f"in-place {name}: the result has shape {shape}, not this array's {lhs.shape}")
    func = ARITHMETIC[name]
    with np.errstate(all="ignore"):
        if isinstance(func, np.ufunc) and name != "pow":
            func(lhs, other, out=lhs)
        else:  # MXNet's own kernels (power, mod, division truncating toward zero ...)
            lhs[...] = binary(name, lhs, other)


#: The element-wise functions NDArray's own module defines (``nd.sqrt``, ``abs(x)``, ``-x``).
UNARY = ("sqrt", "square", "sign", "abs", "negative")


def unary(name: str, data: np.ndarray) -> np.ndarray:
    """MXNet's ``name`` (a key of :data:`kvcli.mx.ndarray.umath.UNARY`) of ``data``, keeping its dtype."""
    return umath.unary(name, data)


def dot(lhs: np.ndarray, rhs: np.ndarray, transpose_a: bool = False, transpose_b: bool = False) -> np.ndarray:
    """MXNet's ``dot``: the last axis of ``lhs`` with the first of ``rhs``; floats only;
    two vectors give shape ``(1,)``."""
    dtype = check_same_dtype("dot", lhs, rhs)
    if dtype not in (np.float32, np.float64):
        raise NDArrayError(f"dot: dtype {dtype} is not supported (MXNet's dot on CPU takes float32 and float64): "
                           f"use .astype('float32')")
    x = lhs.T if transpose_a else lhs
    y = rhs.T if transpose_b else rhs
    if x.ndim == 0 or y.ndim == 0 or x.shape[-1] != y.shape[0]:
        raise NDArrayError(
            f"dot: shapes {x.shape} and {y.shape} (after transpose_a={transpose_a}, "
            f"transpose_b={transpose_b}) do not match: the last axis of the first must equal "
            f"the first axis of the second"
        )
    result = np.tensordot(x, y, axes=1)
    return result.reshape(1) if result.ndim == 0 else result


def join(what: str, arrays: list[np.ndarray], axis: int, new_axis: bool) -> np.ndarray:
    """``concat`` (``new_axis=False``) or ``stack`` of same-dtype arrays."""
    if not arrays:
        raise NDArrayError(f"{what}: give at least one array")
    check_same_dtype(what, *arrays)
    try:
        return np.stack(arrays, axis=axis) if new_axis else np.concatenate(arrays, axis=axis)
    except (ValueError, IndexError) as error:  # AxisError is both
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise NDArrayError(f"{what}: cannot join shapes {shapes} on axis {axis}: {error}") from None


def reduced(result: Any, dtype: Any = None) -> np.ndarray:
    """A full reduction (or one element) is shape ``(1,)`` in MXNet's nd, not 0-d; a
    reduction keeps the input's ``dtype`` (numpy would widen int32 sums to int64)."""
    result = np.asarray(result) if dtype is None else np.asarray(result).astype(dtype, copy=False)
    return result.reshape(1) if result.ndim == 0 else result


def norm(data: np.ndarray, ord: int = 2, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    """MXNet's ``norm``: the L1 or L2 norm over ``axis`` (all axes: shape ``(1,)``), in the
    input's float dtype, computed as MXNet's kernel computes it
    (:mod:`~kvcli.mx.ndarray.reductions`: a Kahan sum of ``|x|``, BLAS's scaled sum of squares)."""
    if ord not in (1, 2):
        raise NDArrayError(f"norm: ord={ord!r} is not supported: MXNet's norm takes ord=1 or ord=2")
    chosen = axes(data.ndim, axis, "norm")
    if ord == 1 and data.dtype.kind in "iu":  # MXNet: |x| summed in the integer type (wrapping)
        return _reduce_rows(data, chosen, keepdims, lambda rows: reductions.kahan_sum(np.abs(rows)))
    if not np.issubdtype(data.dtype, np.floating):
        raise NDArrayError(f"norm: the L2 norm of dtype {data.dtype} is not supported by kvcli (MXNet's is wrong: it "
                           f"divides in integers): use .astype('float32') first")
    if ord == 1:
        return _reduce_rows(data, chosen, keepdims, lambda rows: reductions.kahan_sum(np.abs(rows), inf_reset=False))
    return _reduce_rows(data, chosen, keepdims, reductions.nrm2)


def _reduce_rows(data: np.ndarray, chosen: tuple[int, ...], keepdims: bool,
                 reducer: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``reducer`` (outputs x reduced values -> outputs) over the axes ``chosen``."""
    with np.errstate(all="ignore"):
        values = reducer(reductions.as_rows(data, chosen))
    if keepdims:
        shape = tuple(1 if a in chosen else d for a, d in enumerate(data.shape))
    else:
        shape = tuple(d for a, d in enumerate(data.shape) if a not in chosen)
    return reduced(values.reshape(shape), data.dtype)


# ---------------------------------------------------------------------- element-wise maths
#: MXNet's element-wise maths functions besides :data:`UNARY` (``nd.exp``, ``nd.sigmoid`` ...).
MATH = tuple(name for name in umath.UNARY if name not in UNARY)
#: The same computation: :func:`unary` serves both tables.
math = unary


# ---------------------------------------------------------------------- reductions
#: MXNet's reductions by name, each on (outputs x reduced values) rows (``mean`` divides the sum).
REDUCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    **reductions.REDUCERS,
    "mean": lambda rows: reductions.divide_count(reductions.kahan_sum(rows), rows.shape[1]),
}


def axes(ndim: int, axis: Any, what: str) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence; negative counts from the end) as sorted
    non-negative axes, every one checked; None and ``()`` mean every axis (MXNet)."""
    if axis is None:
        return tuple(range(ndim))
    given = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if not given:
        return tuple(range(ndim))
    found = []
    for a in given:
        if not isinstance(a, (int, np.integer)) or not -ndim <= a < ndim:
            raise NDArrayError(f"{what}: axis {a!r} is out of range for a {ndim}-d array: use -{ndim} .. {ndim - 1}")
        found.append(int(a) % ndim)
    if len(set(found)) != len(found):
        raise NDArrayError(f"{what}: axis {given} names an axis twice")
    return tuple(sorted(found))


def reduce(name: str, data: np.ndarray, axis: Any = None, keepdims: bool = False, exclude: bool = False) -> np.ndarray:
    """MXNet's ``sum`` / ``mean`` / ``max`` / ``min`` / ``prod`` / ``nansum`` / ``nanprod``,
    in MXNet's order of operations (:mod:`~kvcli.mx.ndarray.reductions`): the result keeps
    ``data``'s dtype (integer sums wrap, an integer mean truncates, float16 sums in float16);
    a full reduction is shape ``(1,)``; ``exclude=True`` reduces every axis except ``axis``."""
    chosen = axes(data.ndim, axis, name)
    if exclude:
        chosen = tuple(a for a in range(data.ndim) if a not in chosen)
        if not chosen:  # nothing left to reduce: MXNet gives the values unchanged
            return data.copy()
    return _reduce_rows(data, chosen, keepdims, REDUCTIONS[name])


def arg_reduce(name: str, data: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    """MXNet's ``argmax`` / ``argmin``: indices in ``data``'s dtype; no axis: of the
    flattened array, shape ``(1,)``."""
    func = np.argmax if name == "argmax" else np.argmin
    if axis is None:
        return reduced(func(data)).astype(data.dtype)
    (chosen,) = axes(data.ndim, axis, name)
    return reduced(func(data, axis=chosen, keepdims=bool(keepdims))).astype(data.dtype)


# ---------------------------------------------------------------------- shapes
def reshape_shape(shape: tuple[int, ...], spec: Any, reverse: bool = False) -> tuple[int, ...]:
    """The shape MXNet's ``reshape`` makes of ``shape`` for ``spec``, with its special values
    (:func:`kvcli.arrays.reshape.reshape_target`); the element count must not change."""
    try:
        return reshape_target(shape, spec, reverse)
    except ValueError as error:
        raise NDArrayError(f"reshape: {error}") from None


def expanded_shape(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """``shape`` with a 1 inserted at ``axis`` (``-ndim-1 <= axis <= ndim``)."""
    ndim = len(shape)
    if not isinstance(axis, (int, np.integer)) or not -ndim - 1 <= axis <= ndim:
        raise NDArrayError(f"expand_dims: axis {axis!r} is out of range for a {ndim}-d array: use {-ndim - 1} .. {ndim}")
    position = int(axis) + ndim + 1 if axis < 0 else int(axis)
    return shape[:position] + (1,) + shape[position:]


def squeezed_shape(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    """``shape`` without its size-1 axes (all of them, or those of ``axis``, which must be 1);
    nothing left gives ``(1,)``, as in MXNet."""
    if axis is None:
        kept = [d for d in shape if d != 1]
    else:
        chosen = axes(len(shape), axis, "squeeze")
        for a in chosen:
            if shape[a] != 1:
                raise NDArrayError(f"squeeze: axis {a} has size {shape[a]}, not 1")
        kept = [d for a, d in enumerate(shape) if a not in chosen]
    return tuple(kept) or (1,)


def flattened_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """MXNet's ``flatten``: ``(d0, d1 * ... * dk)``; a 1-d array becomes ``(n, 1)``."""
    if not shape:
        return (1, 1)
    return (shape[0], int(np.prod(shape[1:], dtype=np.int64)))


def broadcast_shape(shape: tuple[int, ...], target: Any) -> tuple[int, ...]:
    """MXNet's ``broadcast_to`` target: same number of axes, 0 keeps an axis, and an axis
    that changes must be 1 in ``shape``."""
    wanted = tuple(int(d) for d in target)
    if len(wanted) != len(shape):
        raise NDArrayError(f"broadcast_to: shape {wanted} has {len(wanted)} axes, the array {len(shape)}: "
                           f"they must be equal (reshape first)")
    out = tuple(s if w == 0 else w for s, w in zip(shape, wanted))
    for s, w in zip(shape, out):
        if s != w and s != 1:
            raise NDArrayError(f"broadcast_to: shape {shape} cannot be broadcast to {out}: only axes of size 1 can grow")
    return out


def slice_axis(data: np.ndarray, axis: int, begin: int, end: int | None) -> np.ndarray:
    """MXNet's ``slice_axis``: ``data[begin:end]`` along ``axis`` (negative values count from
    the end; ``end=None`` is the end); an empty or out-of-range slice is an error."""
    (position,) = axes(data.ndim, axis, "slice_axis")
    size = data.shape[position]
    lo = begin + size if begin < 0 else begin
    hi = size if end is None else (end + size if end < 0 else end)
    if not 0 <= lo < hi <= size:
        raise NDArrayError(f"slice_axis: begin={begin}, end={end} is not a non-empty range of axis {axis} (size {size})")
    index = [slice(None)] * data.ndim
    index[position] = slice(lo, hi)
    return data[tuple(index)].copy()


def split(data: np.ndarray, num_outputs: int, axis: int = 1, squeeze_axis: bool = False) -> list[np.ndarray]:
    """MXNet's ``split``: ``num_outputs`` equal parts along ``axis`` (``squeeze_axis`` drops
    that axis, which must then be of size 1 in each part)."""
    (position,) = axes(data.ndim, axis, "split")
    size = data.shape[position]
    if num_outputs < 1 or size % num_outputs:
        raise NDArrayError(f"split: axis {axis} of size {size} cannot be split into {num_outputs} equal parts")
    if squeeze_axis and size != num_outputs:
        raise NDArrayError(f"split: squeeze_axis needs parts of size 1, but axis {axis} gives parts of size "
                           f"{size // num_outputs}")
    parts = np.split(data, num_outputs, axis=position)
    return [np.squeeze(p, axis=position).copy() if squeeze_axis else p.copy() for p in parts]


def where(condition: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """MXNet's ``where``: ``x`` where ``condition`` is non-zero, else ``y``; ``x`` and ``y`` of
    one shape and dtype, ``condition`` of that shape or 1-d along the first axis."""
    check_same_dtype("where", x, y)
    if x.shape != y.shape:
        raise NDArrayError(f"where: x has shape {x.shape} and y {y.shape}: they must be equal")
    if condition.shape == x.shape:
        mask = condition != 0
    elif condition.ndim == 1 and x.ndim >= 1 and condition.shape[0] == x.shape[0]:
        mask = (condition != 0).reshape((-1,) + (1,) * (x.ndim - 1))
    else:
        raise NDArrayError(f"where: condition has shape {condition.shape}: give x's shape {x.shape} "
                           f"or a 1-d array of its first axis")
    return np.where(mask, x, y)


def one_hot(indices: np.ndarray, depth: int, on_value: float, off_value: float, dtype: Any) -> np.ndarray:
    """MXNet's ``one_hot``: indices truncated to integers; one outside ``[0, depth)`` gives a
    row of ``off_value``."""
    positions = np.trunc(indices).astype(np.int64)
    result = np.full(indices.shape + (int(depth),), off_value, dtype=np.dtype(dtype))
    inside = (positions >= 0) & (positions < depth)
    result[inside, positions[inside]] = on_value
    return result


def take(data: np.ndarray, indices: np.ndarray, axis: int = 0, mode: str = "clip") -> np.ndarray:
    """MXNet's ``take``: slices of ``data`` along ``axis`` at ``indices`` (truncated to
    integers); out-of-range indices are clipped (``mode='clip'``) or wrap (``'wrap'``)."""
    if mode not in ("clip", "wrap", "raise"):
        raise NDArrayError(f"take: mode {mode!r} is not one of 'clip', 'wrap', 'raise'")
    (position,) = axes(data.ndim, axis, "take")
    size = data.shape[position]
    positions = np.trunc(indices).astype(np.int64)
    if mode == "wrap":
        positions = np.mod(positions, size)
    elif mode == "clip":
        positions = np.clip(positions, 0, size - 1)
    elif ((positions < 0) | (positions >= size)).any():
        raise NDArrayError(f"take: an index is outside 0 .. {size - 1} (mode='raise')")
    return np.take(data, positions, axis=position)


__all__ = [
    "ARITHMETIC", "COMPARISONS", "MATH", "NDArrayError", "REDUCTIONS", "UNARY", "arg_reduce", "axes", "binary",
    "binary_inplace", "broadcast_shape", "cast", "cast_scalar", "check_same_dtype", "dot", "expanded_shape",
    "flattened_shape", "is_scalar", "join", "math", "norm", "one_hot", "reduce", "reduced", "reshape_shape",
    "slice_axis", "split", "squeezed_shape", "take", "unary", "where",
]
