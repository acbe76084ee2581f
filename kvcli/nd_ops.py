"""MXNet 1.9.1's dtype rules for ``nd`` arithmetic, on plain numpy arrays.

``kvcli.nd`` wraps these; they know nothing of NDArray. The rules, recorded from real MXNet
(``tests/data/mxnet_nd_reference.json``):

* array op array: both dtypes must be equal (MXNet refuses float32 + int32, float64 +
  float32); shapes broadcast as in numpy.
* array op scalar: the scalar is first cast to the array's dtype, so ``int32 + 1.5`` adds 1
  and ``int32 * 0.5`` multiplies by 0; the result keeps the array's dtype.
* integer division truncates toward zero (C), while ``%`` follows Python's sign rule.
* comparisons give 0/1 in the operand's dtype, not bool.
* ``sqrt`` of an integer array truncates; integer overflow wraps.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

from kvcli.errors import KVCliError


class NDArrayError(KVCliError, ValueError):
    """An ``nd`` operation was given operands it cannot combine (dtypes, shapes)."""


def _divide(x: Any, y: Any) -> Any:
    if np.issubdtype(np.result_type(x, y), np.integer):
        quotient = np.floor_divide(x, y)
        # floor -> truncation where the signs differ and the division is not exact
        return quotient + ((np.remainder(x, y) != 0) & ((np.asarray(x) < 0) != (np.asarray(y) < 0)))
    return np.true_divide(x, y)


#: Binary operations by the name of their Python operator (``__add__`` -> "add").
ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": _divide,
    "floordiv": np.floor_divide,  # not in MXNet's nd; kept for kvcli code, same dtype rules
    "mod": np.mod,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
}
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def is_scalar(value: Any) -> bool:
    """A Python or numpy number (not a bool array, not a string)."""
    return isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, (str, bytes))


def cast_scalar(value: Any, dtype: np.dtype) -> Any:
    """``value`` converted to ``dtype`` as MXNet does before a scalar op (ints truncate, wrap)."""
    return np.asarray(value).astype(dtype)[()]


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
    x, y = (other, lhs) if reflected else (lhs, other)
    with np.errstate(all="ignore"):  # MXNet gives inf/nan (or wraps) without a warning
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
        if isinstance(func, np.ufunc):
            func(lhs, other, out=lhs)
        else:  # integer division truncating toward zero
            lhs[...] = np.asarray(func(lhs, other)).astype(lhs.dtype, copy=False)


def unary(name: str, data: np.ndarray) -> np.ndarray:
    """``sqrt``, ``square``, ``sign``, ``abs`` or ``negative`` of ``data``, keeping its dtype."""
    with np.errstate(all="ignore"):
        if name == "sqrt":
            return np.sqrt(data).astype(data.dtype, copy=False)  # integers truncate
        return np.asarray(UNARY[name](data))


UNARY: dict[str, Callable[[Any], Any]] = {
    "sqrt": np.sqrt, "square": np.square, "sign": np.sign, "abs": np.abs, "negative": np.negative,
}


def dot(lhs: np.ndarray, rhs: np.ndarray, transpose_a: bool = False, transpose_b: bool = False) -> np.ndarray:
    """MXNet's ``dot``: the last axis of ``lhs`` with the first of ``rhs``; floats only;
    two vectors give shape ``(1,)``."""
    dtype = check_same_dtype("dot", lhs, rhs)
    if not np.issubdtype(dtype, np.floating):
        raise NDArrayError(f"dot: dtype {dtype} is not supported (MXNet's dot takes float16/32/64): use .astype('float32')")
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
    input's float dtype; float16 accumulates in float32, so large values do not overflow
    (MXNet's float16 reduction order can make a result differ from kvcli's by one ulp)."""
    if ord not in (1, 2):
        raise NDArrayError(f"norm: ord={ord!r} is not supported: MXNet's norm takes ord=1 or ord=2")
    if not np.issubdtype(data.dtype, np.floating):
        raise NDArrayError(f"norm: dtype {data.dtype} is not supported by kvcli: use .astype('float32') first")
    wide = data.astype(np.float64 if data.dtype == np.float64 else np.float32)
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    if ord == 1:
        result = np.abs(wide).sum(axis=axes, keepdims=keepdims)
    else:
        result = np.sqrt(np.square(wide).sum(axis=axes, keepdims=keepdims))
    return reduced(result, data.dtype)


__all__ = [
    "ARITHMETIC", "COMPARISONS", "NDArrayError", "UNARY", "binary", "binary_inplace", "cast_scalar",
    "check_same_dtype", "dot", "is_scalar", "join", "norm", "reduced", "unary",
]
