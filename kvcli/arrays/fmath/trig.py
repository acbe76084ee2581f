"""float32 ``sin``, ``cos``, ``tan``, ``arcsin``, ``arccos`` and ``arctan`` as glibc computes
them (``sinf`` ... ``atanf``), on numpy arrays.

``sinf`` and ``cosf`` are Szabolcs Nagy's algorithms (ARM's optimized-routines, MIT /
Apache-2.0): a double polynomial after a reduction by pi/2, rounded once to float. glibc runs
its FMA build of them on CPUs with FMA; the one fused step that matters, the reduction
``x - n * pi/2``, is reproduced exactly here by splitting pi/2 (the polynomials' fused steps
change the double result in its last bit only, below what float keeps). ``tanf`` is fdlibm's
float kernel behind the same reduction; ``asinf``, ``acosf``, ``atanf`` are fdlibm's (Sun
Microsystems, freely distributable with its notice), computed step by step in float.

Every function takes a 1-d float32 array and returns a new one.
"""

from __future__ import annotations

import numpy as np

from kvcli.arrays.fmath.ieee import F32, bits, f32, from_bits, lookup, put, sbits, select, split_hi

H = float.fromhex

_HPI_INV = H("0x1.45F306DC9C883p+23")
_HPI = H("0x1.921FB54442D18p0")
_HPI_HI, _HPI_LO = split_hi(_HPI, 8)  # n (at most 7 bits here) times _HPI_HI is exact
_PI63 = H("0x1.921FB54442D18p-62")
_C = (H("0x1p0"), H("-0x1.ffffffd0c621cp-2"), H("0x1.55553e1068f19p-5"), H("-0x1.6c087e89a359dp-10"),
      H("0x1.99343027bf8c3p-16"))
_S = (H("-0x1.555545995a603p-3"), H("0x1.1107605230bc4p-7"), H("-0x1.994eb3774cf24p-13"))
_INV_PIO4 = np.array([
    0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
    0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
    0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
], dtype=np.uint64)  # the bits of 4/pi, 8 at a time


def _abstop12(x: np.ndarray) -> np.ndarray:
    return (bits(x) >> np.uint32(20)) & np.uint32(0x7FF)


def _reduce_fast(x: np.ndarray, fused: bool) -> tuple[np.ndarray, np.ndarray]:
    """``x`` (|x| < 120) minus the nearest multiple ``n`` of pi/2, and ``n``; ``fused``: as
    one rounding (glibc's FMA build of sinf/cosf), else as two (tanf)."""
    r = x * _HPI_INV
    n = (np.trunc(r).astype(np.int32) + 0x800000) >> 24
    nd = n.astype(np.float64)
    if fused:
        return (x - nd * _HPI_HI) - nd * _HPI_LO, n
    return x - nd * _HPI, n


def _reduce_large(xi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|x| >= 120 reduced by pi/2 with 4/pi's bits (integer arithmetic modulo 2^64, as C's)."""
    base = ((xi >> np.uint32(26)) & np.uint32(15)).astype(np.intp)
    shift = ((xi >> np.uint32(23)) & np.uint32(7)).astype(np.uint64)
    m = (((xi & np.uint32(0xFFFFFF)) | np.uint32(0x800000)).astype(np.uint64)) << shift
    low32 = np.uint64(0xFFFFFFFF)
    res0 = (m * lookup(_INV_PIO4, base)) & low32
    res1 = m * lookup(_INV_PIO4, base + 4)
    res2 = m * lookup(_INV_PIO4, base + 8)
    res0 = (res2 >> np.uint64(32)) | (res0 << np.uint64(32))
    res0 = res0 + res1
    n = (res0 + np.uint64(1 << 61)) >> np.uint64(62)
    res0 = res0 - (n << np.uint64(62))
    return res0.view(np.int64).astype(np.float64) * _PI63, n.astype(np.int32)


def _poly(x: np.ndarray, x2: np.ndarray, odd: np.ndarray, negate: np.ndarray) -> np.ndarray:
    """glibc's ``sinf_poly``: sin(x) where ``odd`` is false, else cos(x), negated where
    ``negate`` (glibc's second table has every cos coefficient negated: the same values with
    the sign flipped, since rounding is symmetric)."""
    x3 = x * x2
    s1 = _S[1] + x2 * _S[2]
    x7 = x3 * x2
    sin = (x + x3 * _S[0]) + x7 * s1
    x4 = x2 * x2
    c2 = _C[3] + x2 * _C[4]
    c1 = _C[0] + x2 * _C[1]
    x6 = x4 * x2
    cos = (c1 + x4 * _C[2]) + x6 * c2
    return select(odd, select(negate, -cos, cos), sin)


_SIGNS = np.array([1.0, -1.0, -1.0, 1.0])


def _sincos(y: np.ndarray, cosine: bool) -> np.ndarray:
    x = y.astype(np.float64)
    top = _abstop12(y)
    xr, n = _reduce_fast(select(top < 0x42F, x, 0.0), fused=True)
    quadrant = n
    large = (top >= 0x42F) & (top < 0x7F8)
    if large.any():
        xl, nl = _reduce_large(bits(y))
        put(xr, large, xl)
        put(n, large, nl)
        quadrant = select(large, n + (bits(y) >> np.uint32(31)).astype(np.int32), n)
    s = lookup(_SIGNS, (quadrant & 3).astype(np.intp))
    parity = (n ^ 1) if cosine else n
    out = _poly(xr * s, xr * xr, (parity & 1) == 1, (quadrant & 2) != 0)
    # |y| < pi/4: no reduction
    small = top < 0x3F4
    put(out, small, _poly(x, x * x, np.full(x.shape, cosine), np.zeros(x.shape, dtype=bool)))
    result = out.astype(F32)
    put(result, top < 0x398, F32(1.0) if cosine else y)
    put(result, top >= 0x7F8, F32(np.nan))
    return result


def sinf(y: np.ndarray) -> np.ndarray:
    """glibc's ``sinf``."""
    return _sincos(y, cosine=False)


def cosf(y: np.ndarray) -> np.ndarray:
    """glibc's ``cosf``."""
    return _sincos(y, cosine=True)


# ---------------------------------------------------------------------------- tan
_T = [f32(v) for v in (3.3333334327e-01, 1.3333334029e-01, 5.3968254477e-02, 2.1869488060e-02, 8.8632395491e-03,
                       3.5920790397e-03, 1.4562094584e-03, 5.8804126456e-04, 2.4646313977e-04, 7.8179444245e-05,
                       7.1407252108e-05, -1.8558637748e-05, 2.5907305826e-05)]
_PIO4, _PIO4LO = f32(7.8539812565e-01), f32(3.7748947079e-08)


def _kernel_tanf(x: np.ndarray, y: np.ndarray, iy: np.ndarray) -> np.ndarray:
    """fdlibm's ``__kernel_tanf``: tan(x + y) (``iy`` = 1) or -1/tan(x + y) (``iy`` = -1)."""
    one = F32(1.0)
    x0 = x
    hx = sbits(x)
    ix = hx & 0x7FFFFFFF
    big = ix >= 0x3F2CA140
    neg = big & (hx < 0)
    x = select(neg, -x, x)
    y = select(neg, -y, y)
    xb = (_PIO4 - x) + (_PIO4LO - y)
    x = select(big, xb, x)
    y = select(big, F32(0.0), y)
    z = x * x
    w = z * z
    r = _T[1] + w * (_T[3] + w * (_T[5] + w * (_T[7] + w * (_T[9] + w * _T[11]))))
    v = z * (_T[2] + w * (_T[4] + w * (_T[6] + w * (_T[8] + w * (_T[10] + w * _T[12])))))
    s = z * x
    r = y + z * (s * (r + v) + y)
    r = r + _T[0] * s
    w = x + r
    sign = (1 - ((hx >> 30) & 2)).astype(F32)
    vi = iy.astype(F32)
    out = select(big, sign * (vi - F32(2.0) * (x - (w * w / (w + vi) - r))), w)
    # iy = -1: -1/(x + r), with a correction from a 12-bit-truncated split
    zt = from_bits(sbits(w) & np.int32(-4096))
    v2 = r - (zt - x)
    a = -one / w
    t = from_bits(sbits(a) & np.int32(-4096))
    s2 = one + t * zt
    put(out, (~big) & (iy != 1), t + a * (s2 + t * v2))
    # just below pi/4 after the big-argument step: a short form
    close = big & (np.abs(xb) < F32(H("0x1p-13")))
    put(out, close, sign * iy.astype(F32) * (one - (2 * iy).astype(F32) * xb))
    tiny = ix < 0x39000000
    if tiny.any():
        small = select(iy == 1, x0, -one / x0)
        put(out, tiny, select((ix | (iy + 1)) == 0, one / np.abs(x0), small))
    return out


def tanf(x: np.ndarray) -> np.ndarray:
    """glibc's ``tanf``."""
    top = _abstop12(x)
    xd = x.astype(np.float64)
    dx, n = _reduce_fast(select(top < 0x42F, xd, 0.0), fused=False)
    large = (top >= 0x42F) & (top < 0x7F8)
    if large.any():
        xl, nl = _reduce_large(bits(x))
        put(dx, large, select(x < 0, -xl, xl))
        put(n, large, nl)
    y0 = dx.astype(F32)
    y1 = (dx - y0).astype(F32)
    ix = sbits(x) & 0x7FFFFFFF
    small = ix <= 0x3F490FDA
    y0 = select(small, x, y0)
    y1 = select(small, F32(0.0), y1)
    iy = select(small, 1, 1 - ((n & 1) << 1)).astype(np.int32)
    out = _kernel_tanf(y0, y1, iy)
    put(out, ix >= 0x7F800000, F32(np.nan))
    return out


# ---------------------------------------------------------------------------- inverse functions
_PIO2_HI_A, _PIO2_LO_A, _PIO4_HI_A = f32(1.57079637050628662109375), f32(-4.37113900018624283e-8), f32(0.785398185253143310546875)
_P = [f32(v) for v in (1.666675248e-1, 7.495297643e-2, 4.547037598e-2, 2.417951451e-2, 4.216630880e-2)]


def _asin_poly(t: np.ndarray) -> np.ndarray:
    return t * (_P[0] + t * (_P[1] + t * (_P[2] + t * (_P[3] + t * _P[4]))))


def asinf(x: np.ndarray) -> np.ndarray:
    """glibc's ``asinf`` (fdlibm)."""
    one = F32(1.0)
    hx = sbits(x)
    ix = hx & 0x7FFFFFFF
    t = x * x
    out = x + x * _asin_poly(t)  # |x| < 0.5
    w = one - np.abs(x)
    t = w * F32(0.5)
    p = _asin_poly(t)
    s = np.sqrt(t)
    near_one = _PIO2_HI_A - (F32(2.0) * (s + s * p) - _PIO2_LO_A)
    wt = from_bits(sbits(s) & np.int32(-4096))
    c = (t - wt * wt) / (s + wt)
    p2 = F32(2.0) * s * p - (_PIO2_LO_A - F32(2.0) * c)
    q = _PIO4_HI_A - F32(2.0) * wt
    middle = _PIO4_HI_A - (p2 - q)
    t = select(ix >= 0x3F79999A, near_one, middle)
    put(out, ix >= 0x3F000000, select(hx > 0, t, -t))
    put(out, ix < 0x32000000, x)
    put(out, ix == 0x3F800000, x * _PIO2_HI_A + x * _PIO2_LO_A)
    put(out, ix > 0x3F800000, F32(np.nan))
    return out


_PS = [f32(v) for v in (1.6666667163e-01, -3.2556581497e-01, 2.0121252537e-01, -4.0055535734e-02, 7.9153501429e-04,
                        3.4793309169e-05)]
_QS = [f32(v) for v in (-2.4033949375e00, 2.0209457874e00, -6.8828397989e-01, 7.7038154006e-02)]
_PI_C, _PIO2_HI_C, _PIO2_LO_C = f32(3.1415925026e00), f32(1.5707962513e00), f32(7.5497894159e-08)


def _acos_ratio(z: np.ndarray) -> np.ndarray:
    p = z * (_PS[0] + z * (_PS[1] + z * (_PS[2] + z * (_PS[3] + z * (_PS[4] + z * _PS[5])))))
    q = F32(1.0) + z * (_QS[0] + z * (_QS[1] + z * (_QS[2] + z * _QS[3])))
    return p / q


def acosf(x: np.ndarray) -> np.ndarray:
    """glibc's ``acosf`` (fdlibm)."""
    one, half, two = F32(1.0), F32(0.5), F32(2.0)
    hx = sbits(x)
    ix = hx & 0x7FFFFFFF
    z = x * x
    out = _PIO2_HI_C - (x - (_PIO2_LO_C - x * _acos_ratio(z)))  # |x| < 0.5
    # x <= -0.5
    z = (one + x) * half
    s = np.sqrt(z)
    w = _acos_ratio(z) * s - _PIO2_LO_C
    put(out, (ix >= 0x3F000000) & (hx < 0), _PI_C - two * (s + w))
    # x >= 0.5
    z = (one - x) * half
    s = np.sqrt(z)
    df = from_bits(sbits(s) & np.int32(-4096))
    c = (z - df * df) / (s + df)
    w = _acos_ratio(z) * s + c
    put(out, (ix >= 0x3F000000) & (hx >= 0), two * (df + w))
    put(out, ix <= 0x32800000, _PIO2_HI_C + _PIO2_LO_C)
    put(out, hx == 0x3F800000, F32(0.0))
    put(out, hx == np.int32(-1082130432), _PI_C + two * _PIO2_LO_C)  # x == -1
    put(out, ix > 0x3F800000, F32(np.nan))
    return out


_ATANHI = np.array([4.6364760399e-01, 7.8539812565e-01, 9.8279368877e-01, 1.5707962513e00], dtype=F32)
_ATANLO = np.array([5.0121582440e-09, 3.7748947079e-08, 3.4473217170e-08, 7.5497894159e-08], dtype=F32)
_AT = [f32(v) for v in (3.3333334327e-01, -2.0000000298e-01, 1.4285714924e-01, -1.1111110449e-01, 9.0908870101e-02,
                        -7.6918758452e-02, 6.6610731184e-02, -5.8335702866e-02, 4.9768779427e-02, -3.6531571299e-02,
                        1.6285819933e-02)]


#: atanf's reductions as (p*|x| - q) / (r + s*|x|), one row per interval: -1 keeps x (x/1),
#: 0: (2x - 1)/(2 + x), 1: (x - 1)/(x + 1), 2: (x - 1.5)/(1 + 1.5x), 3: -1/x. Multiplying by
#: 1 and adding 0 are exact, so each row's float operations round as fdlibm's do.
_ATAN_FORM = np.array([(1, 0, 1, 0), (2, 1, 2, 1), (1, 1, 1, 1), (1, 1.5, 1, 1.5), (0, 1, 0, 1)], dtype=F32).T


def atanf(x: np.ndarray) -> np.ndarray:
    """glibc's ``atanf`` (fdlibm): computed on |x|, the sign put back at the end (every step
    is odd in x)."""
    hx = sbits(x)
    ix = hx & 0x7FFFFFFF
    a = np.abs(x)
    row = ((ix >= 0x3EE00000).astype(np.intp) + (ix >= 0x3F300000) + (ix >= 0x3F980000) + (ix >= 0x401C0000))
    p, q, r, s_ = (lookup(column, row) for column in _ATAN_FORM)
    reduced = (p * a - q) / (r + s_ * a)
    z = reduced * reduced
    w = z * z
    s1 = z * (_AT[0] + w * (_AT[2] + w * (_AT[4] + w * (_AT[6] + w * (_AT[8] + w * _AT[10])))))
    s2 = w * (_AT[1] + w * (_AT[3] + w * (_AT[5] + w * (_AT[7] + w * _AT[9]))))
    near = np.maximum(row - 1, 0)
    around = lookup(_ATANHI, near) - ((reduced * (s1 + s2) - lookup(_ATANLO, near)) - reduced)
    positive = select(row == 0, reduced - reduced * (s1 + s2), around)
    out = select(hx < 0, -positive, positive)
    put(out, ix < 0x31000000, x)
    huge = _ATANHI[3] + _ATANLO[3]
    put(out, ix >= 0x4C000000, select(hx > 0, huge, -huge))
    put(out, np.isnan(x), x)
    return out


__all__ = ["acosf", "asinf", "atanf", "cosf", "sinf", "tanf"]
