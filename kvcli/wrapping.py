"""Integer wrap-around, found before it silently changes values: numpy wraps integers on
overflow and on casts without a word (``arange(1000, dtype=int8)``, ``ones(3, dtype=uint8) - 2``);
the value language refuses both, as it refuses float overflow."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def cast_problem(array: np.ndarray, dtype: np.dtype) -> str | None:
    """Why ``array.astype(dtype)`` would change values by wrapping (None when it would not):
    an integer dtype must hold every value, and a float must be finite to become an int."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu" or array.size == 0 or array.dtype.kind not in "iuf":
        return None
    info = np.iinfo(dtype)
    if array.dtype.kind == "f":
        if not np.isfinite(array).all():
            return f"inf or nan cannot become {dtype}"
        low, high = float(np.trunc(array.min())), float(np.trunc(array.max()))
        # float(info.max) rounds up for 64-bit ints; 2**bits and -2**bits are exact
        fits = low >= float(info.min) and high < 2.0 ** (info.bits - (info.kind == "i"))
    else:
        low, high = int(array.min()), int(array.max())
        fits = info.min <= low and high <= info.max
    if fits:
        return None
    return f"values from {low} to {high} do not fit {dtype} ({info.min} to {info.max}): use a wider dtype"


def int_overflows(symbol: str, a: Any, b: Any, result: np.ndarray) -> bool:
    """Whether an integer ``a symbol b`` wrapped around (numpy never says so for integers).

    Each check is exact and works in the result's dtype (no float64 copies): sign rules for
    + and -, a division for *, the lone ``min // -1`` (numpy raises it already), and for **
    an exact recheck of the elements a float estimate puts near or past the limits."""
    dtype = result.dtype
    x = np.asarray(a).astype(dtype, copy=False)
    y = np.asarray(b).astype(dtype, copy=False)
    signed = dtype.kind == "i"
    with np.errstate(all="ignore"):
        if symbol == "+":
            return bool((((x ^ result) & (y ^ result)) < 0).any()) if signed else bool((result < x).any())
        if symbol == "-":
            return bool((((x ^ y) & (x ^ result)) < 0).any()) if signed else bool((x < y).any())
        if symbol == "*":
            nonzero = x != 0
            safe = np.where(nonzero, x, 1)
            if signed:  # min * -1 wraps to min, and min // -1 is itself the overflow
                bad = (safe == -1) & (y == np.iinfo(dtype).min)
                safe = np.where(bad, 1, safe)
                return bool(bad.any() or (nonzero & (result // safe != y)).any())
            return bool((nonzero & (result // safe != y)).any())
        if symbol == "**":
            return _power_overflows(x, y, result)
    return False


def _power_overflows(x: np.ndarray, y: np.ndarray, result: np.ndarray) -> bool:
    info = np.iinfo(result.dtype)
    with np.errstate(all="ignore"):
        estimate = np.power(x.astype(np.float64), y.astype(np.float64))
    limit = 2.0 ** (info.bits - (info.kind == "i"))
    near = ~(np.abs(estimate) < limit * (1 - 2.0**-40))  # also inf and nan
    if not near.any():
        return False
    xs, ys = np.broadcast_to(x, result.shape)[near], np.broadcast_to(y, result.shape)[near]
    for base, exponent in zip(xs.tolist(), ys.tolist()):
        if abs(base) > 1 and exponent * math.log2(abs(base)) > info.bits + 1:
            return True
        if not info.min <= base**exponent <= info.max:
            return True
    return False
