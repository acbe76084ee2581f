"""float32 ``exp``, ``log``, ``log2``, ``log10``, ``expm1``, ``log1p`` and ``pow`` as glibc
computes them (``expf`` ... ``powf``), on numpy arrays.

``expf``, ``logf``, ``log2f`` and ``powf`` are Szabolcs Nagy's table-driven algorithms
(ARM's optimized-routines, MIT / Apache-2.0, in glibc since 2.27): a double evaluation
rounded once to float. ``log10f``, ``expm1f`` and ``log1pf`` are fdlibm's float versions (Sun
Microsystems, "Permission to use, copy, modify, and distribute this software is freely
granted, provided that this notice is preserved"), computed step by step in float. The
constants below are those algorithms' coefficients; the 2^(i/32) table and the log tables'
``log(c)`` are computed here from their definitions.

Every function takes a 1-d float32 array and returns a new one.
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np

from kvcli.arrays.fmath.ieee import F32, bits, f32, fma_near_one, from_bits, lookup, put, sbits, select

H = float.fromhex


def _exp2_table() -> np.ndarray:
    """``asuint64(2^(i/32)) - (i << 47)``: glibc's ``__exp2f_data.tab``."""
    with localcontext() as ctx:
        ctx.prec = 40
        values = np.array([float(Decimal(2) ** (Decimal(i) / 32)) for i in range(32)])
    return values.view(np.uint64) - (np.arange(32, dtype=np.uint64) << np.uint64(47))


_EXP2_TAB = _exp2_table()
_EXP_POLY = (H("0x1.c6af84b912394p-5"), H("0x1.ebfce50fac4f3p-3"), H("0x1.62e42ff0c52d6p-1"))
_SHIFT = H("0x1.8p+52")


def _exp2_kernel(z: np.ndarray, shift: float, poly: tuple[float, float, float], sign_bias: np.ndarray | int = 0) -> np.ndarray:
    """2^(z/32) in double (``z`` scaled by the table's 32 steps): glibc's shared exp2 tail.

    ``shift`` rounds ``z`` to the table's grid; ``sign_bias`` (1 << 16) makes the result
    negative (``powf`` of a negative base to an odd power)."""
    kd = z + shift
    ki = kd.view(np.uint64)
    kd = kd - shift
    r = z - kd
    t = lookup(_EXP2_TAB, (ki & np.uint64(31)).astype(np.intp)) + ((ki + np.asarray(sign_bias, dtype=np.uint64)) << np.uint64(47))
    s = t.view(np.float64)
    c0, c1, c2 = poly
    zz = c0 * r + c1
    r2 = r * r
    y = c2 * r + 1.0
    y = zz * r2 + y
    return y * s


def _overflow(negative: np.ndarray | bool = False) -> np.ndarray:
    return select(negative, F32(-np.inf), F32(np.inf))


def expf(x: np.ndarray) -> np.ndarray:
    """glibc's ``expf``."""
    n = 32.0
    z = H("0x1.71547652b82fep+0") * n * x.astype(np.float64)
    y = _exp2_kernel(z, _SHIFT, (_EXP_POLY[0] / n / n / n, _EXP_POLY[1] / n / n, _EXP_POLY[2] / n)).astype(F32)
    u = bits(x)
    special = ((u >> 20) & 0x7FF) >= 0x42B
    if special.any():
        put(y, special & (x > H("0x1.62e42ep6")), F32(np.inf))
        put(y, special & (x < H("-0x1.9d1d9ep6")), F32(H("0x1p-149")))  # glibc's "may underflow"
        put(y, special & (x < H("-0x1.9fe368p6")), F32(0.0))
        put(y, np.isnan(x) | (x == np.inf), x)
    return y


# ---------------------------------------------------------------------------- log, log2
_INVC = np.array([H(v) for v in (
    "0x1.661ec79f8f3bep+0", "0x1.571ed4aaf883dp+0", "0x1.49539f0f010bp+0", "0x1.3c995b0b80385p+0",
    "0x1.30d190c8864a5p+0", "0x1.25e227b0b8eap+0", "0x1.1bb4a4a1a343fp+0", "0x1.12358f08ae5bap+0",
    "0x1.0953f419900a7p+0", "0x1p+0", "0x1.e608cfd9a47acp-1", "0x1.ca4b31f026aap-1",
    "0x1.b2036576afce6p-1", "0x1.9c2d163a1aa2dp-1", "0x1.886e6037841edp-1", "0x1.767dcf5534862p-1")])


def _log_of_invc(base2: bool) -> np.ndarray:
    """``-log(invc)`` (or ``-log2``) rounded to double: glibc's ``logc`` columns."""
    with localcontext() as ctx:
        ctx.prec = 50
        ln2 = Decimal(2).ln()
        return np.array([float(-Decimal(c).ln() / (ln2 if base2 else 1)) for c in _INVC.tolist()])


_LOGC = _log_of_invc(False)
_LOG2C = _log_of_invc(True)
_LN2 = H("0x1.62e42fefa39efp-1")
_LOGF_POLY = (H("-0x1.00ea348b88334p-2"), H("0x1.5575b0be00b6ap-2"), H("-0x1.ffffef20a4123p-2"))
_LOG2F_POLY = (H("-0x1.712b6f70a7e4dp-2"), H("0x1.ecabf496832ep-2"), H("-0x1.715479ffae3dep-1"), H("0x1.715475f35c8b8p0"))
_OFF = np.uint32(0x3F330000)


def _log_setup(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The shared first steps of ``logf`` / ``log2f``: the input word (subnormals scaled up
    by 2^23), the table row ``i``, the exponent ``k`` and ``z`` in [~0.7, ~1.4] as double."""
    ix = bits(x)
    sub = (ix > 0) & (ix < 0x00800000)
    if sub.any():
        put(ix, sub, bits(x * F32(H("0x1p23"))) - np.uint32(23 << 23))
    tmp = ix - _OFF
    i = (tmp >> np.uint32(19)) & np.uint32(15)
    k = tmp.view(np.int32) >> 23
    iz = ix - (tmp & np.uint32(0xFF800000))
    return ix, i, k, from_bits(iz).astype(np.float64)


def _log_specials(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log of 1 is +0, of 0 is -inf, of +inf is +inf, of a negative number or NaN is NaN."""
    put(y, x == 1.0, F32(0.0))
    put(y, x == 0.0, F32(-np.inf))
    put(y, x == np.inf, F32(np.inf))
    put(y, (x < 0) | np.isnan(x), F32(np.nan))
    return y


def logf(x: np.ndarray) -> np.ndarray:
    """glibc's ``logf``."""
    _, i, k, z = _log_setup(x)
    r = fma_near_one(z, lookup(_INVC, i.astype(np.intp)))
    y0 = lookup(_LOGC, i.astype(np.intp)) + k * _LN2
    r2 = r * r
    a0, a1, a2 = _LOGF_POLY
    y = a1 * r + a2
    y = a0 * r2 + y
    y = y * r2 + (y0 + r)
    return _log_specials(x, y.astype(F32))


def log2f(x: np.ndarray) -> np.ndarray:
    """glibc's ``log2f``."""
    _, i, k, z = _log_setup(x)
    r = fma_near_one(z, lookup(_INVC, i.astype(np.intp)))
    y0 = lookup(_LOG2C, i.astype(np.intp)) + k
    r2 = r * r
    a0, a1, a2, a3 = _LOG2F_POLY
    y = a1 * r + a2
    y = a0 * r2 + y
    p = a3 * r + y0
    y = y * r2 + p
    return _log_specials(x, y.astype(F32))


def log10f(x: np.ndarray) -> np.ndarray:
    """glibc's ``log10f`` (fdlibm: the exponent and ``logf`` of the significand)."""
    hx = sbits(x)
    k = np.zeros(x.shape, dtype=np.int32)
    sub = (hx > 0) & (hx < 0x00800000)
    scaled = x.copy()
    if sub.any():
        put(scaled, sub, x * F32(3.3554432000e07))
        put(k, sub, np.int32(-25))
        hx = sbits(scaled)
    k = k + (hx >> 23) - 127
    i = (k < 0).astype(np.int32)
    hx = (hx & 0x007FFFFF) | ((0x7F - i) << 23)
    y = (k + i).astype(F32)
    z = y * f32(7.9034151668e-07) + f32(4.3429449201e-01) * logf(from_bits(hx))
    out = z + y * f32(3.0102920532e-01)
    put(out, x == 0.0, F32(-np.inf))
    put(out, (x < 0) | np.isnan(x), F32(np.nan))
    put(out, x == np.inf, F32(np.inf))
    return out


# ---------------------------------------------------------------------------- expm1, log1p
_LN2_HI, _LN2_LO, _INVLN2 = f32(6.9313812256e-01), f32(9.0580006145e-06), f32(1.4426950216e00)
_Q = [f32(v) for v in (-3.3333335072e-02, 1.5873016091e-03, -7.9365076090e-05, 4.0082177293e-06, -2.0109921195e-07)]


def expm1f(x: np.ndarray) -> np.ndarray:
    """glibc's ``expm1f`` (fdlibm)."""
    one, half = F32(1.0), F32(0.5)
    hx = np.abs(x).view(np.int32)
    # x = k*ln2 + (hi - lo): k = 0 for |x| <= ln2/2, +-1 below 1.5*ln2, else trunc(x/ln2 +- 1/2);
    # fdlibm's +-1 branch (x -+ ln2_hi, +-ln2_lo) is the general one with t = +-1, bit for bit
    k = (_INVLN2 * x + np.copysign(half, x)).astype(np.int32)
    k = select(hx <= 0x3EB17218, 0, select(hx < 0x3F851592, select(x < 0, -1, 1), k))
    t = k.astype(F32)
    hi = x - t * _LN2_HI
    lo = t * _LN2_LO
    xr = hi - lo
    c = (hi - xr) - lo
    hfx = half * xr
    hxs = xr * hfx
    r1 = one + hxs * (_Q[0] + hxs * (_Q[1] + hxs * (_Q[2] + hxs * (_Q[3] + hxs * _Q[4]))))
    t3 = F32(3.0) - r1 * hfx
    e = hxs * ((r1 - t3) / (F32(6.0) - xr * t3))
    e = (xr * (e - c) - c) - hxs  # with k = 0 (c = 0): xr * e - hxs, fdlibm's k = 0 form
    d = e - xr
    # 2 <= |k|: a result near 1 with k added to its exponent
    kc = np.clip(k, -200, 200)
    low_k = kc < 23
    tk = from_bits(select(low_k, 0x3F800000 - (0x1000000 >> np.clip(kc, 0, 31)), (0x7F - np.clip(kc, 0, 127)) << 23))
    y = select(low_k, tk - d, (xr - (e + tk)) + one)
    general = (kc <= -2) | (kc > 56)
    y = select(general, one - d, y)
    out = from_bits(sbits(y) + (kc << 23))
    out = select(general, out - one, out)
    out = select(k == 0, xr - e, out)
    out = select(k == -1, half * (xr - e) - half, out)
    out = select(k == 1, select(xr < F32(-0.25), F32(-2.0) * (e - (xr + half)), one + F32(2.0) * (xr - e)), out)
    # tiny arguments (expm1(x) = x), huge ones and non-finite ones
    put(out, hx < 0x33000000, x)
    put(out, (hx >= 0x4195B844) & (x < 0), F32(-1.0))
    put(out, (hx >= 0x42B17218) & (x > f32(8.8721679688e01)), F32(np.inf))
    put(out, hx > 0x7F800000, x)
    return out


_LP = [f32(v) for v in (6.6666668653e-01, 4.0000000596e-01, 2.8571429849e-01, 2.2222198546e-01,
                        1.8183572590e-01, 1.5313838422e-01, 1.4798198640e-01)]


def log1pf(x: np.ndarray) -> np.ndarray:
    """glibc's ``log1pf`` (fdlibm)."""
    hx = sbits(x)
    ax = hx & 0x7FFFFFFF
    one, zero = F32(1.0), F32(0.0)
    # k = 0: -0.2929 < x < 0.41422 is used directly as f; otherwise 1 + x = 2^k * (1 + f)
    direct = (hx < 0x3ED413D7) & ((hx > 0) | (hx <= np.int32(-1097468385)))  # 0xbe95f61f
    u = one + x
    hu = sbits(u)
    kk = (hu >> 23) - 127
    c = select(kk > 0, one - (u - x), x - (u - one)) / u
    large = hx >= 0x5A000000
    put(hu, large, hx)
    put(kk, large, (hx >> 23) - 127)
    put(c, large, zero)
    hu = hu & 0x007FFFFF
    low = hu < 0x3504F7
    um = select(low, from_bits(hu | 0x3F800000), from_bits(hu | 0x3F000000))
    kk = select(low, kk, kk + 1)
    hu = select(low, hu, (0x00800000 - hu) >> 2)
    f = select(direct, x, um - one)
    k = select(direct, 0, kk)
    hu = select(direct, 1, hu)
    c = select(direct, zero, c)
    kf = k.astype(F32)
    hfsq = F32(0.5) * f * f
    s = f / (F32(2.0) + f)
    z = s * s
    lp = _LP
    R = z * (lp[0] + z * (lp[1] + z * (lp[2] + z * (lp[3] + z * (lp[4] + z * (lp[5] + z * lp[6]))))))
    out = select(k == 0, f - (hfsq - s * (hfsq + R)), kf * _LN2_HI - ((hfsq - (s * (hfsq + R) + (kf * _LN2_LO + c))) - f))
    # |f| < 2^-20: a shorter series
    exact = hu == 0
    R2 = hfsq * (F32(1.0) - F32(0.66666666666666666) * f)
    short = select(k == 0, f - R2, kf * _LN2_HI - ((R2 - (kf * _LN2_LO + c)) - f))
    zero_f = select(k == 0, zero, kf * _LN2_HI + (c + kf * _LN2_LO))
    put(out, exact, select(f == zero, zero_f, short))
    tiny = ax < 0x31000000
    put(out, tiny, select(ax < 0x24800000, x, x - x * x * F32(0.5)))
    put(out, x == -1.0, F32(-np.inf))
    put(out, (x < -1.0) | np.isnan(x), F32(np.nan))
    put(out, x == np.inf, F32(np.inf))
    return out


# ---------------------------------------------------------------------------- pow
_POWF_POLY = (H("0x1.27616c9496e0bp-2"), H("-0x1.71969a075c67ap-2"), H("0x1.ec70a6ca7baddp-2"),
              H("-0x1.7154748bef6c8p-1"), H("0x1.71547652ab82bp0"))


def _log2_inline(ix: np.ndarray) -> np.ndarray:
    tmp = ix - _OFF
    i = (tmp >> np.uint32(19)) & np.uint32(15)
    top = tmp & np.uint32(0xFF800000)
    k = top.view(np.int32) >> 23
    z = from_bits(ix - top).astype(np.float64)
    r = fma_near_one(z, lookup(_INVC, i.astype(np.intp)))
    y0 = lookup(_LOG2C, i.astype(np.intp)) + k
    a = _POWF_POLY
    r2 = r * r
    y = a[0] * r + a[1]
    p = a[2] * r + a[3]
    r4 = r2 * r2
    q = a[4] * r + y0
    q = p * r2 + q
    return y * r4 + q


def _checkint(iy: np.ndarray) -> np.ndarray:
    """0: not an integer, 1: odd integer, 2: even integer (``iy`` a float32 word)."""
    e = ((iy >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int32)
    shift = np.clip(0x7F + 23 - e, 0, 31).astype(np.uint32)
    frac = (iy & ((np.uint32(1) << shift) - np.uint32(1))) != 0
    odd = (iy & (np.uint32(1) << shift)) != 0
    out = select(frac, 0, select(odd, 1, 2))
    return select(e < 0x7F, 0, select(e > 0x7F + 23, 2, out))


def _signalling(word: np.ndarray) -> np.ndarray:
    """A NaN whose quiet bit is clear (glibc's ``issignaling``)."""
    return ((word & np.uint32(0x7FFFFFFF)) > 0x7F800000) & ((word & np.uint32(0x00400000)) == 0)


def powf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """glibc's ``powf`` (``x`` and ``y`` 1-d float32 arrays of one length)."""
    ix, iy = bits(x), bits(y)
    sign = np.uint32(0x80000000)
    yint = _checkint(iy)
    negative_base = (ix & sign) != 0
    odd = negative_base & (yint == 1)
    ax = ix & np.uint32(0x7FFFFFFF)
    word = ax.copy()
    sub = (ax < 0x00800000) & (ax != 0)
    if sub.any():  # a subnormal base: scaled by 2^23, the exponent taken back (modulo 2^32, as in C)
        put(word, sub, (bits(x * F32(H("0x1p23"))) & np.uint32(0x7FFFFFFF)) - np.uint32(23 << 23))
    ylogx = y.astype(np.float64) * _log2_inline(word)
    out = _exp2_kernel(ylogx, H("0x1.8p+47"), _EXP_POLY, select(odd, 1 << 16, 0)).astype(F32)
    big = ((ylogx.view(np.uint64) >> np.uint64(47)) & np.uint64(0xFFFF)) >= (np.float64(126.0).view(np.uint64) >> np.uint64(47))
    if big.any():
        put(out, big & (ylogx < -149.0), select(odd, F32(-H("0x1p-149")), F32(H("0x1p-149"))))
        put(out, big & (ylogx <= -150.0), select(odd, F32(-0.0), F32(0.0)))
        put(out, big & (ylogx > H("0x1.fffffffd1d571p+6")), _overflow(odd))
    put(out, negative_base & (yint == 0), F32(np.nan))
    # x is +-0, +-inf or NaN: x*x (or its inverse), negative for an odd y
    x2 = x * x
    x2 = select(odd, -x2, x2)
    with np.errstate(divide="ignore"):
        put(out, (ax == 0) | (ax >= 0x7F800000), select((iy & sign) != 0, F32(1.0) / x2, x2))
    # y is +-0, +-inf or NaN
    ay = iy & np.uint32(0x7FFFFFFF)
    yspecial = (ay == 0) | (ay >= 0x7F800000)
    if yspecial.any():
        ys = select(((ax < 0x3F800000) == ((iy & sign) == 0)), F32(0.0), y * y)
        ys = select(ax == 0x3F800000, F32(1.0), ys)
        ys = select(np.isnan(x) | np.isnan(y), x + y, ys)
        # 1 for x ** 0 and 1 ** y, unless the other operand is a signalling NaN
        ys = select((ix == 0x3F800000) & ~_signalling(iy), F32(1.0), ys)
        ys = select((ay == 0) & ~_signalling(ix), F32(1.0), ys)
        put(out, yspecial, ys)
    return out


__all__ = ["expf", "expm1f", "log10f", "log1pf", "log2f", "logf", "powf"]
