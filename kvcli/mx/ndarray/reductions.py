"""MXNet 1.9.1's reductions (``sum``, ``mean``, ``prod``, ``max``, ``min``, ``nansum``,
``nanprod``, ``norm``), in MXNet's order of operations.

MXNet's CPU kernel reduces each output value by one loop over the reduced values, in the
input's dtype (float16 too: every step rounded to half), row-major over the reduced axes:

* ``sum`` and ``mean`` are Kahan sums (``y = x - c; t = s + y; c = (t - s) - y; s = t``;
  ``c`` reset where ``t`` is infinite), ``mean`` then divides by the count in the dtype;
  ``nansum`` skips NaN; ``norm(ord=1)`` is the Kahan sum of ``|x|``;
* ``norm(ord=2)`` is BLAS's scaled ``nrm2`` (a running scale and sum of squares);
* ``prod`` multiplies left to right; ``max`` and ``min`` keep the first extreme value met.

kvcli replays those loops with numpy, vectorized over the output values (``prod`` with
numpy's strictly left-to-right ``accumulate``; ``nrm2`` as plain running sums between the
values that raise its scale). A Kahan loop costs a few numpy calls per reduced value, so a
float32 or float64 sum over more than :data:`EXACT_LOOP_MAX` values per output is computed
otherwise (the one stated difference, in the README): the sum accumulated in float64
(``math.fsum`` for float64) and rounded once, which is Kahan's result unless the loop lost its
last compensation near a rounding boundary (0 or 1 ulp apart in the recorded cases).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from kvcli.mx.ndarray.umath import truncating_divide

#: Above this many values per output, float32 and float64 sums are not replayed step by step.
EXACT_LOOP_MAX = 4096


def as_rows(data: np.ndarray, chosen: tuple[int, ...]) -> np.ndarray:
    """``data`` as ``(outputs, reduced values)``: kept axes first, then the reduced ones,
    both row-major (MXNet's order)."""
    kept = [a for a in range(data.ndim) if a not in chosen]
    moved = np.transpose(data, kept + list(chosen))
    outputs = int(np.prod([data.shape[a] for a in kept], dtype=np.int64))
    reduced = int(np.prod([data.shape[a] for a in chosen], dtype=np.int64))
    return np.ascontiguousarray(moved).reshape(outputs, reduced)


def _kahan(rows: np.ndarray, skip_nan: bool = False, inf_reset: bool = True) -> np.ndarray:
    """MXNet's Kahan sum of each row, in the rows' dtype, one reduced value at a time."""
    s = np.zeros(rows.shape[0], dtype=rows.dtype)
    c = np.zeros_like(s)
    for k in range(rows.shape[1]):
        x = rows[:, k]
        y = x - c
        t = s + y
        compensation = (t - s) - y
        if inf_reset:
            compensation[np.isinf(t)] = 0
        if skip_nan:
            keep = ~np.isnan(x)
            s = np.where(keep, t, s)
            c = np.where(keep, compensation, c)
        else:
            s, c = t, compensation
    return s


def _rounded_sum(rows: np.ndarray) -> np.ndarray | None:
    """Each row's sum rounded once to the rows' dtype, or None where rounding once cannot
    stand for MXNet's loop (a partial sum beyond the dtype's range)."""
    if rows.dtype == np.float64:
        return np.array([math.fsum(row) for row in rows.tolist()], dtype=np.float64)
    wide = rows.astype(np.float64)
    if np.abs(np.cumsum(wide, axis=1)).max(initial=0) > np.finfo(rows.dtype).max:
        return None
    return wide.sum(axis=1).astype(rows.dtype)


def kahan_sum(rows: np.ndarray, skip_nan: bool = False, inf_reset: bool = True) -> np.ndarray:
    """MXNet's sum of each row (``nansum`` with ``skip_nan``; ``norm(ord=1)``'s sum has no
    infinity reset)."""
    if rows.dtype.kind in "iub":  # integer sums wrap and need no compensation: any order
        return np.add.reduce(rows, axis=1, dtype=rows.dtype)
    if rows.shape[1] > EXACT_LOOP_MAX and rows.dtype != np.float16:
        values = np.where(np.isnan(rows), 0, rows) if skip_nan else rows
        quick = _rounded_sum(values) if np.isfinite(values).all() else None
        if quick is not None:
            return quick
    return _kahan(rows, skip_nan, inf_reset)


def _nrm2_finish(ssq: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``scale * sqrt(ssq)``: the square root in float for float16 (MXNet's ``math::sqrt``)."""
    dtype = ssq.dtype
    root = np.sqrt(ssq.astype(np.float32)) if dtype == np.float16 else np.sqrt(ssq)
    return (np.asarray(scale).astype(root.dtype) * root).astype(dtype)


def _nrm2_steps(rows: np.ndarray) -> np.ndarray:
    """The loop over the reduced values, vectorized over the outputs (few reduced values)."""
    dtype = rows.dtype
    one = np.ones((), dtype)
    ssq = np.zeros(rows.shape[0], dtype=dtype)
    scale = np.zeros_like(ssq)
    for k in range(rows.shape[1]):
        x = rows[:, k]
        a = np.abs(x)
        counted = x != 0
        grow = counted & (scale < a)
        ratio = scale / a
        grown = one + ssq * ratio * ratio
        ratio = a / scale
        added = ssq + ratio * ratio
        ssq = np.where(grow, grown, np.where(counted, added, ssq))
        scale = np.where(grow, a, scale)
    return _nrm2_finish(ssq, scale)


def _nrm2_row(row: np.ndarray) -> np.ndarray:
    """One output's loop, run between the values that raise the scale: between them the sum
    of squares is a plain left-to-right sum of ``(|x| / scale)^2`` (numpy's ``accumulate``)."""
    dtype = row.dtype
    a = np.abs(row[row != 0])  # zeros are skipped (NaN is kept: NaN != 0)
    if a.size == 0:
        return np.zeros(1, dtype=dtype)
    before = np.concatenate([np.zeros(1, dtype), np.fmax.accumulate(a)[:-1]])
    raises = np.flatnonzero(a > before)  # a new largest |x| (never NaN)
    ssq, scale, start = np.zeros((), dtype), np.zeros((), dtype), 0
    for stop in [*raises.tolist(), a.size]:
        if stop > start:
            ratio = a[start:stop] / scale
            ssq = np.add.accumulate(np.concatenate([ssq.reshape(1), ratio * ratio]), dtype=dtype)[-1]
        if stop < a.size:
            ratio = scale / a[stop]
            ssq = np.ones((), dtype) + ssq * ratio * ratio
            scale = a[stop]
        start = stop + 1
    return _nrm2_finish(np.asarray(ssq).reshape(1), np.asarray(scale).reshape(1))


def nrm2(rows: np.ndarray) -> np.ndarray:
    """MXNet's L2 norm of each row: BLAS's scaled sum of squares, in the rows' dtype, one
    reduced value at a time (for long rows, one numpy step per rise of the scale)."""
    if rows.shape[1] <= 64 or rows.shape[0] > rows.shape[1]:
        return _nrm2_steps(rows)
    return np.concatenate([_nrm2_row(row) for row in rows]) if rows.shape[0] else np.zeros(0, rows.dtype)


def extreme(rows: np.ndarray, largest: bool) -> np.ndarray:
    """MXNet's ``max``/``min`` of each row: NaN wins; of equal values the first (-0.0 or 0.0)."""
    found = (np.max if largest else np.min)(rows, axis=1)
    if rows.dtype.kind == "f":
        zero = found == 0
        if zero.any():  # -0.0 == 0.0: the first zero met is the one kept
            first = np.argmax(rows[zero] == 0, axis=1)
            found[zero] = rows[zero][np.arange(first.size), first]
    return found


def product(rows: np.ndarray, skip_nan: bool = False) -> np.ndarray:
    """MXNet's ``prod`` (``nanprod`` with ``skip_nan``) of each row: left to right."""
    if rows.shape[1] == 0:
        return np.ones(rows.shape[0], dtype=rows.dtype)
    values = np.where(np.isnan(rows), np.ones((), rows.dtype), rows) if skip_nan and rows.dtype.kind == "f" else rows
    return np.multiply.accumulate(values, axis=1, dtype=rows.dtype)[:, -1]


def divide_count(total: np.ndarray, count: int) -> np.ndarray:
    """``mean``'s last step: the sum divided by the count, both in the sum's dtype (integer
    division truncates toward zero)."""
    dtype = total.dtype
    if dtype.kind in "iu":
        divisor = np.array(count).astype(dtype)  # the count in the dtype (wraps, as C's cast)
        if divisor == 0:
            return np.zeros_like(total)
        return np.asarray(truncating_divide(total, divisor)).astype(dtype)
    return total / np.array(count, dtype=dtype)


#: name -> the function of the rows (2-d: outputs x reduced values) that reduces them.
REDUCERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sum": kahan_sum,
    "nansum": lambda rows: kahan_sum(rows, skip_nan=True, inf_reset=False),  # MXNet's nansum never resets
    "prod": product,
    "nanprod": lambda rows: product(rows, skip_nan=True),
    "max": lambda rows: extreme(rows, largest=True),
    "min": lambda rows: extreme(rows, largest=False),
}

__all__ = ["EXACT_LOOP_MAX", "REDUCERS", "as_rows", "divide_count", "extreme", "kahan_sum", "nrm2", "product"]
