"""float32 ``sinh``, ``cosh``, ``tanh``, ``arcsinh``, ``arccosh``, ``arctanh``, ``cbrt`` and
``erf`` as glibc computes them (``sinhf`` ... ``erff``), on numpy arrays.

All are fdlibm's float versions (Sun Microsystems, "Permission to use, copy, modify, and
distribute this software is freely granted, provided that this notice is preserved"), built
on :mod:`~kvcli.arrays.fmath.explog`'s ``expf``, ``expm1f``, ``logf`` and ``log1pf``, except
``cbrtf``, glibc's own (Ulrich Drepper's rational step in double). Each is computed step by
step in the same precision as the C code; the constants are the C code's.

Every function takes a 1-d float32 array and returns a new one.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from kvcli.arrays.fmath.explog import expf, expm1f, log1pf, logf
from kvcli.arrays.fmath.ieee import F32, f32, from_bits, put, sbits, select

_ONE, _HALF, _TWO = F32(1.0), F32(0.5), F32(2.0)


def _pieces(out: np.ndarray, x: np.ndarray, parts: list[tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]]) -> None:
    """``out[mask] = formula(x[mask])`` for each (mask, formula): every branch computed only
    on the values that take it."""
    for mask, formula in parts:
        where = np.flatnonzero(mask)
        if where.size:
            out[where] = formula(np.ascontiguousarray(x[where]))


def _exp_edge(a: np.ndarray) -> np.ndarray:
    """(e^(a/2) / 2) * e^(a/2): e^a / 2 near float's overflow, as sinhf and coshf take it."""
    w = expf(_HALF * a)
    return (_HALF * w) * w


def sinhf(x: np.ndarray) -> np.ndarray:
    """glibc's ``sinhf``, on |x| with the sign copied back (each formula is odd in x)."""
    ix = sbits(x) & 0x7FFFFFFF
    a = np.abs(x)

    def small(v: np.ndarray) -> np.ndarray:  # |x| < 22
        t = expm1f(v)
        return select(v < _ONE, _HALF * (_TWO * t - t * t / (t + _ONE)), _HALF * (t + t / (t + _ONE)))

    out = np.full(x.shape, np.inf, dtype=F32)  # overflow (and inf)
    _pieces(out, a, [(ix < 0x41B00000, small), ((ix >= 0x41B00000) & (ix < 0x42B17180), lambda v: _HALF * expf(v)),
                     ((ix >= 0x42B17180) & (ix <= 0x42B2D4FC), _exp_edge)])
    out = np.copysign(out, x)
    put(out, (ix < 0x31800000) | (ix > 0x7F800000), x)
    return out


def coshf(x: np.ndarray) -> np.ndarray:
    """glibc's ``coshf``."""
    ix = sbits(x) & 0x7FFFFFFF
    a = np.abs(x)

    def small(v: np.ndarray) -> np.ndarray:  # |x| < ln2 / 2
        t = expm1f(v)
        w = _ONE + t
        return _ONE + (t * t) / (w + w)

    def moderate(v: np.ndarray) -> np.ndarray:  # |x| < 22
        e = expf(v)
        return _HALF * e + _HALF / e

    out = np.full(x.shape, np.inf, dtype=F32)  # overflow (and inf)
    _pieces(out, a, [(ix < 0x3EB17218, small), ((ix >= 0x3EB17218) & (ix < 0x41B00000), moderate),
                     ((ix >= 0x41B00000) & (ix < 0x42B17180), lambda v: _HALF * expf(v)),
                     ((ix >= 0x42B17180) & (ix <= 0x42B2D4FC), _exp_edge)])
    put(out, ix < 0x24000000, _ONE)
    put(out, ix > 0x7F800000, x)
    return out


def tanhf(x: np.ndarray) -> np.ndarray:
    """glibc's ``tanhf``."""
    ix = sbits(x) & 0x7FFFFFFF
    a = np.abs(x)
    large = ix >= 0x3F800000
    t = expm1f(select(large, _TWO * a, -_TWO * a))
    z = select(large, _ONE - _TWO / (t + _TWO), -t / (t + _TWO))
    put(z, ix >= 0x41B00000, _ONE)
    out = select(x < 0, -z, z)
    put(out, ix < 0x24000000, x * (_ONE + x))
    put(out, ix == 0, x)
    put(out, np.isnan(x), x)
    return out


_LN2 = f32(6.9314718246e-01)


def asinhf(x: np.ndarray) -> np.ndarray:
    """glibc's ``asinhf`` (on |x|, the sign copied back)."""
    ix = sbits(x) & 0x7FFFFFFF
    a = np.abs(x)

    def moderate(v: np.ndarray) -> np.ndarray:  # 2 < |x| <= 2^15
        return logf(_TWO * v + _ONE / (np.sqrt(v * v + _ONE) + v))

    def small(v: np.ndarray) -> np.ndarray:  # |x| <= 2
        t = v * v
        return log1pf(v + t / (_ONE + np.sqrt(_ONE + t)))

    w = np.empty_like(a)
    _pieces(w, a, [(ix <= 0x40000000, small), ((ix > 0x40000000) & (ix <= 0x47000000), moderate),
                   (ix > 0x47000000, lambda v: logf(v) + _LN2)])
    out = np.copysign(w, x)
    put(out, (ix < 0x38000000) | (ix >= 0x7F800000), x)
    return out


def acoshf(x: np.ndarray) -> np.ndarray:
    """glibc's ``acoshf``."""
    hx = sbits(x)

    def moderate(v: np.ndarray) -> np.ndarray:  # 2 < x < 2^28
        return logf(_TWO * v - _ONE / (v + np.sqrt(v * v - _ONE)))

    def small(v: np.ndarray) -> np.ndarray:  # 1 < x <= 2
        u = v - _ONE
        return log1pf(u + np.sqrt(_TWO * u + u * u))

    out = np.full(x.shape, np.nan, dtype=F32)  # x < 1 and NaN
    _pieces(out, x, [((hx > 0x3F800000) & (hx <= 0x40000000), small), ((hx > 0x40000000) & (hx < 0x4D800000), moderate),
                     ((hx >= 0x4D800000) & (hx < 0x7F800000), lambda v: logf(v) + _LN2)])
    put(out, hx == 0x3F800000, F32(0.0))
    put(out, hx == 0x7F800000, x)
    return out


def atanhf(x: np.ndarray) -> np.ndarray:
    """glibc's ``atanhf``."""
    a = np.abs(x)
    small = a < _HALF
    tt = a + a
    arg = select(small, tt + tt * a / (_ONE - a), (a + a) / (_ONE - a))
    t = _HALF * log1pf(arg)
    out = np.copysign(t, x)
    put(out, a < F32(2.0**-28), x)
    put(out, a == _ONE, x / F32(0.0))
    put(out, (a > _ONE) | np.isnan(x), F32(np.nan))
    return out


_CBRT2, _SQR_CBRT2 = 1.2599210498948731648, 1.5874010519681994748
_FACTOR = np.array([1.0 / _SQR_CBRT2, 1.0 / _CBRT2, 1.0, _CBRT2, _SQR_CBRT2])


def cbrtf(x: np.ndarray) -> np.ndarray:
    """glibc's ``cbrtf``: a first guess and one rational step in double, scaled by 2^(e/3)."""
    xm, xe = np.frexp(np.abs(x))
    m = xm.astype(np.float64)
    u = (0.492659620528969547 + (0.697570460207922770 - 0.191502161678719066 * m) * m).astype(F32)
    t2 = u * u * u
    t2d, ud = t2.astype(np.float64), u.astype(np.float64)
    rem = np.fmod(xe, 3)
    ym = (ud * (t2d + 2.0 * m) / (2.0 * t2d + m) * _FACTOR.take(2 + rem, mode="clip")).astype(F32)
    out = np.ldexp(select(x > 0, ym, -ym), (xe - rem) // 3).astype(F32)
    put(out, (x == 0) | ~np.isfinite(x), x + x)
    return out


_ERF = {name: f32(value) for name, value in {
    "erx": 8.4506291151e-01, "efx": 1.2837916613e-01,
    "pp0": 1.2837916613e-01, "pp1": -3.2504209876e-01, "pp2": -2.8481749818e-02, "pp3": -5.7702702470e-03,
    "pp4": -2.3763017452e-05, "qq1": 3.9791721106e-01, "qq2": 6.5022252500e-02, "qq3": 5.0813062117e-03,
    "qq4": 1.3249473704e-04, "qq5": -3.9602282413e-06,
    "pa0": -2.3621185683e-03, "pa1": 4.1485610604e-01, "pa2": -3.7220788002e-01, "pa3": 3.1834661961e-01,
    "pa4": -1.1089469492e-01, "pa5": 3.5478305072e-02, "pa6": -2.1663755178e-03, "qa1": 1.0642088205e-01,
    "qa2": 5.4039794207e-01, "qa3": 7.1828655899e-02, "qa4": 1.2617121637e-01, "qa5": 1.3637083583e-02,
    "qa6": 1.1984500103e-02,
    "ra0": -9.8649440333e-03, "ra1": -6.9385856390e-01, "ra2": -1.0558626175e01, "ra3": -6.2375331879e01,
    "ra4": -1.6239666748e02, "ra5": -1.8460508728e02, "ra6": -8.1287437439e01, "ra7": -9.8143291473e00,
    "sa1": 1.9651271820e01, "sa2": 1.3765776062e02, "sa3": 4.3456588745e02, "sa4": 6.4538726807e02,
    "sa5": 4.2900814819e02, "sa6": 1.0863500214e02, "sa7": 6.5702495575e00, "sa8": -6.0424413532e-02,
    "rb0": -9.8649431020e-03, "rb1": -7.9928326607e-01, "rb2": -1.7757955551e01, "rb3": -1.6063638306e02,
    "rb4": -6.3756646729e02, "rb5": -1.0250950928e03, "rb6": -4.8351919556e02, "sb1": 3.0338060379e01,
    "sb2": 3.2579251099e02, "sb3": 1.5367296143e03, "sb4": 3.1998581543e03, "sb5": 2.5530502930e03,
    "sb6": 4.7452853394e02, "sb7": -2.2440952301e01,
}.items()}


def _horner(s: np.ndarray, coefficients: list[np.float32], leading: np.float32 | None = None) -> np.ndarray:
    """c0 + s*(c1 + s*(...)) in float, from the innermost coefficient out (fdlibm's order)."""
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = c + s * acc
    return acc if leading is None else leading + s * acc  # type: ignore[return-value]


def _erf_small(x: np.ndarray) -> np.ndarray:
    """erf for |x| < 0.84375: x + x * P(x^2)/Q(x^2)."""
    e = _ERF
    z = x * x
    r = _horner(z, [e["pp0"], e["pp1"], e["pp2"], e["pp3"], e["pp4"]])
    s = _horner(z, [e["qq1"], e["qq2"], e["qq3"], e["qq4"], e["qq5"]], _ONE)
    return x + x * (r / s)


def _erf_middle(x: np.ndarray) -> np.ndarray:
    """erf for 0.84375 <= |x| < 1.25: erx + P(|x| - 1)/Q(|x| - 1), with x's sign."""
    e = _ERF
    s = np.abs(x) - _ONE
    p = _horner(s, [e["pa0"], e["pa1"], e["pa2"], e["pa3"], e["pa4"], e["pa5"], e["pa6"]])
    q = _horner(s, [e["qa1"], e["qa2"], e["qa3"], e["qa4"], e["qa5"], e["qa6"]], _ONE)
    return select(x < 0, -e["erx"] - p / q, e["erx"] + p / q)


def _erf_tail(x: np.ndarray) -> np.ndarray:
    """erf for 1.25 <= |x| < 6: 1 - erfc, erfc from two expf and a rational fit in 1/x^2."""
    e = _ERF
    xa = np.abs(x)
    s = _ONE / (xa * xa)
    near = (sbits(xa) < 0x4036DB6E)
    R = select(near, _horner(s, [e[f"ra{i}"] for i in range(8)]), _horner(s, [e[f"rb{i}"] for i in range(7)]))
    S = select(near, _horner(s, [e[f"sa{i}"] for i in range(1, 9)], _ONE),
               _horner(s, [e[f"sb{i}"] for i in range(1, 8)], _ONE))
    zt = from_bits(sbits(xa) & np.int32(-4096))
    rr = expf(-zt * zt - F32(0.5625)) * expf((zt - xa) * (zt + xa) + R / S)
    return select(x < 0, rr / xa - _ONE, _ONE - rr / xa)


def erff(x: np.ndarray) -> np.ndarray:
    """glibc's ``erff``: each interval's formula computed on the values in it."""
    ix = sbits(x) & 0x7FFFFFFF
    out = select(x < 0, -_ONE, _ONE)  # |x| >= 6
    for low, high, formula in ((0x31800000, 0x3F580000, _erf_small), (0x3F580000, 0x3FA00000, _erf_middle),
                               (0x3FA00000, 0x40C00000, _erf_tail)):
        where = np.flatnonzero((ix >= low) & (ix < high))
        if where.size:
            out[where] = formula(np.ascontiguousarray(x[where]))
    put(out, ix < 0x31800000, x + _ERF["efx"] * x)
    put(out, ix < 0x04000000, F32(0.0625) * (F32(16.0) * x + (F32(16.0) * _ERF["efx"]) * x))
    put(out, np.isnan(x), x)
    return out


__all__ = ["acoshf", "asinhf", "atanhf", "cbrtf", "coshf", "erff", "sinhf", "tanhf"]
