"""MXNet 1.9.1's element-wise maths operators, computed as its CPU kernels compute them.

Each operator of MXNet's ``mshadow_op.h`` is one C expression applied to every value, in a
precision that depends on the input's dtype:

* float32: the expression in float, calling the C library's float functions (``expf``,
  ``tanhf`` ...): ``sigmoid`` is ``1.0f / (1.0f + expf(-x))``, rounded at every step;
* float16: the same float expression on the value widened to float, rounded once to half;
* float64: the expression in double, with the C library's double functions;
* integers: most in double (``exp`` of int32 7 is ``(int) exp(7.0)`` = 1096), some in float
  (``reciprocal``, ``square``, ``degrees``, ``power``), converted back as C converts (toward
  zero; NaN or out of range gives the type's minimum, which MXNet shows as e.g. -2147483648).

The C library's functions come from :mod:`kvcli.arrays.fmath` (glibc's, bit for bit); this
module holds MXNet's formulas around them (:data:`UNARY`) and the dtype dispatch
(:func:`unary`, :func:`power`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from kvcli.arrays import fmath

F32 = np.float32
#: MXNet's ``PI`` is a float constant; ``180.0f / PI`` and ``PI / 180.0f`` are folded in float.
_PI = F32(3.14159265358979323846)
_DEGREES = F32(180.0) / _PI
_RADIANS = _PI / F32(180.0)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """C's ``round``: halves go away from zero (numpy's ``round`` goes to even)."""
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)  # keeps -0.0 (round(-0.1))


def _rint(x: np.ndarray) -> np.ndarray:
    """MXNet's ``rint``: ``floor`` unless ``ceil`` is strictly nearer (1.5 -> 1, -0.5 -> -1)."""
    low, high = np.floor(x), np.ceil(x)
    return np.where(x - low <= high - x, low, high)


def _fix(x: np.ndarray) -> np.ndarray:
    """MXNet's ``fix``: of ``floor`` and ``ceil``, the one nearer zero (``ceil`` on a tie)."""
    low, high = np.floor(x), np.ceil(x)
    return np.where(np.abs(low) < np.abs(high), low, high)


def _sign(x: np.ndarray) -> np.ndarray:
    """-1, 1 or 0 (also for NaN and -0), in the input's dtype."""
    one = np.ones((), x.dtype)
    return np.where(x < 0, -one, np.where(x > 0, one, np.zeros((), x.dtype)))


def _relu(x: np.ndarray) -> np.ndarray:
    """``x`` where it is positive or NaN, else +0."""
    keep = x > 0
    if x.dtype.kind == "f":
        keep |= np.isnan(x)
    return np.where(keep, x, np.zeros((), x.dtype))


@dataclass(frozen=True)
class MathOp:
    """One MXNet element-wise operator.

    ``single`` maps a float32 array to float32 (MXNet's float expression; float16 inputs
    too), ``double`` a float64 array to float64; ``integers`` says how MXNet computes an
    integer input: ``"double"``, ``"single"`` (then converted back, as C converts), or
    ``"exact"`` (in the integer type itself, or the value unchanged)."""

    single: Callable[[np.ndarray], np.ndarray]
    double: Callable[[np.ndarray], np.ndarray]
    integers: str = "double"


def _libm(c_name: str) -> MathOp:
    return MathOp(lambda x: fmath.single(c_name, x), lambda x: fmath.double(c_name, x))


def _same(function: Callable[[np.ndarray], np.ndarray], integers: str = "double") -> MathOp:
    """An operator exact in any precision (no rounding, or one IEEE operation)."""
    return MathOp(function, function, integers)


def _sigmoid32(x: np.ndarray) -> np.ndarray:
    return F32(1.0) / (F32(1.0) + fmath.single("exp", -x))


def _sigmoid64(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + fmath.double("exp", -x))


#: MXNet's element-wise operators by their ``nd`` name.
UNARY: dict[str, MathOp] = {
    **{name: _libm(c) for name, c in {
        "exp": "exp", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
        "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh",
        "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
        "arctanh": "atanh", "erf": "erf", "cbrt": "cbrt", "gamma": "tgamma", "gammaln": "lgamma"}.items()},
    "sigmoid": MathOp(_sigmoid32, _sigmoid64),
    "softsign": MathOp(lambda x: x / (F32(1.0) + np.abs(x)), lambda x: x / (1.0 + np.abs(x))),
    "sqrt": _same(np.sqrt),
    "rsqrt": MathOp(lambda x: F32(1.0) / np.sqrt(x), lambda x: 1.0 / np.sqrt(x)),
    "rcbrt": MathOp(lambda x: F32(1.0) / fmath.single("cbrt", x), lambda x: 1.0 / fmath.double("cbrt", x)),
    "reciprocal": MathOp(lambda x: F32(1.0) / x, lambda x: 1.0 / x, "single"),
    "square": MathOp(lambda x: x * x, lambda x: x * x, "single"),
    "degrees": MathOp(lambda x: _DEGREES * x, lambda x: float(_DEGREES) * x, "single"),
    "radians": MathOp(lambda x: _RADIANS * x, lambda x: float(_RADIANS) * x, "single"),
    "abs": _same(np.abs),
    "negative": _same(np.negative, "exact"),
    "sign": _same(_sign, "exact"),
    "relu": _same(_relu, "exact"),
    "floor": _same(np.floor), "ceil": _same(np.ceil), "trunc": _same(np.trunc),
    "round": _same(_round_half_away), "rint": _same(_rint), "fix": _same(_fix),
}


def c_cast(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float values converted to integer ``dtype`` as C converts them (x86-64): toward zero;
    NaN or outside int32 (int64 for int64) gives the minimum, and narrower types keep the
    low bits of the int32 conversion."""
    wide = np.asarray(values, dtype=np.float64)
    if dtype == np.int64:
        inside = (wide >= -(2.0**63)) & (wide < 2.0**63)
        return np.where(inside, np.trunc(np.where(inside, wide, 0)), -(2.0**63)).astype(np.int64)
    inside = (wide > -2147483649.0) & (wide < 2147483648.0)
    as_int32 = np.where(inside, np.trunc(np.where(inside, wide, 0)), -2147483648.0).astype(np.int32)
    return as_int32 if dtype == np.int32 else as_int32.astype(dtype)  # int8/uint8/bool: the low bits


def truncating_divide(x: Any, y: Any) -> Any:
    """C's integer division (toward zero) of integer arrays or numbers; wraps like C's."""
    quotient = np.floor_divide(x, y)
    # floor -> truncation where the signs differ and the division is not exact
    return quotient + ((np.remainder(x, y) != 0) & ((np.asarray(x) < 0) != (np.asarray(y) < 0)))


def unary(name: str, data: np.ndarray) -> np.ndarray:
    """MXNet's ``name`` of ``data``, in ``data``'s dtype."""
    op = UNARY[name]
    dtype = data.dtype
    with np.errstate(all="ignore"):
        if dtype == np.float32:
            return np.asarray(op.single(data), dtype=F32)
        if dtype == np.float16:
            return np.asarray(op.single(data.astype(F32)), dtype=F32).astype(np.float16)
        if dtype == np.float64:
            return np.asarray(op.double(data), dtype=np.float64)
        if op.integers == "exact":
            return np.asarray(op.single(data)).astype(dtype, copy=False)
        if op.integers == "single":
            return c_cast(op.single(data.astype(F32)), dtype)
        return c_cast(op.double(data.astype(np.float64)), dtype)


def power(base: Any, exponent: Any, dtype: np.dtype) -> np.ndarray:
    """MXNet's ``power`` (``**``, ``broadcast_power``) of arrays or scalars already of
    ``dtype``: ``powf`` for float32, float16 and integers (``pow(int, int)`` is float in
    MXNet: 7 ** 10 is 282475248), ``pow`` for float64."""
    if dtype == np.float64:
        return fmath.double_pow(base, exponent)
    result = fmath.single_pow(np.asarray(base, dtype=F32), np.asarray(exponent, dtype=F32))
    if dtype == np.float32:
        return result
    if dtype == np.float16:
        return result.astype(np.float16)
    return c_cast(result, dtype)


__all__ = ["F32", "MathOp", "UNARY", "c_cast", "power", "truncating_divide", "unary"]
