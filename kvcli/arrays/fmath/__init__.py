"""The C library's maths, bit for bit, on numpy arrays.

MXNet computes its element-wise maths by calling the C library once per value: ``expf``,
``logf``, ``tanhf`` ... for float32 and float16 (through float), ``exp``, ``log`` ... for
float64 and integers. numpy's SIMD kernels give other last bits (1-4 ulp apart on 2-44 % of
float32 inputs). This package gives the C library's values instead:

* float32: :mod:`~kvcli.arrays.fmath.explog`, :mod:`~kvcli.arrays.fmath.trig` and
  :mod:`~kvcli.arrays.fmath.hyper` recompute glibc's float algorithms (those of glibc 2.36,
  which they were checked against) operation by operation in numpy; ``tgammaf`` and
  ``lgammaf`` are called through ctypes. ``tests/nd/test_math_probe.py`` checks the results
  against MXNet 1.9.1's on a dense probe of every dtype.
* float64: :mod:`~kvcli.arrays.fmath.libm` calls the C library (through :mod:`math`).

MXNet's bits depend on the C library it runs with (another glibc version, or macOS's, may
round some values differently): the float32 algorithms here are glibc 2.36's whatever the
machine, the float64 values come from the machine's own C library.

:func:`single` and :func:`double` take a C function name (``"exp"``, ``"asin"``, ``"tgamma"``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from kvcli.arrays.fmath import explog, hyper, libm, trig

#: C function name (without the ``f``) -> its float32 version on a 1-d float32 array.
SINGLE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": explog.expf, "expm1": explog.expm1f, "log": explog.logf, "log2": explog.log2f,
    "log10": explog.log10f, "log1p": explog.log1pf, "sin": trig.sinf, "cos": trig.cosf, "tan": trig.tanf,
    "asin": trig.asinf, "acos": trig.acosf, "atan": trig.atanf, "sinh": hyper.sinhf, "cosh": hyper.coshf,
    "tanh": hyper.tanhf, "asinh": hyper.asinhf, "acosh": hyper.acoshf, "atanh": hyper.atanhf,
    "cbrt": hyper.cbrtf, "erf": hyper.erff,
    "tgamma": lambda x: libm.single("tgamma", x), "lgamma": lambda x: libm.single("lgamma", x),
}
#: The C functions :func:`double` computes (every one of :data:`SINGLE`).
NAMES = tuple(SINGLE)
#: Values per step of the float32 algorithms: their few dozen temporaries then stay in the
#: CPU's cache (2-4 times faster on 1M values than one pass over the whole array).
CHUNK = 1 << 16


def _chunked(function: Callable[..., np.ndarray], *arrays: np.ndarray) -> np.ndarray:
    """``function`` of 1-d float32 arrays of one length, :data:`CHUNK` values at a time."""
    size = arrays[0].size
    if size <= CHUNK:
        return function(*arrays)
    out = np.empty(size, dtype=np.float32)
    for start in range(0, size, CHUNK):
        out[start:start + CHUNK] = function(*(a[start:start + CHUNK] for a in arrays))
    return out


def single(name: str, x: np.ndarray) -> np.ndarray:
    """``name + 'f'`` of float32 ``x`` (any shape), as glibc's float function gives it."""
    flat = np.ascontiguousarray(x, dtype=np.float32).ravel()
    with np.errstate(all="ignore"):
        return _chunked(SINGLE[name], flat).reshape(np.shape(x))


def double(name: str, x: np.ndarray) -> np.ndarray:
    """``name`` of float64 ``x`` (any shape), from the C library's double function."""
    return libm.double(name, np.asarray(x, dtype=np.float64))


def single_pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """glibc's ``powf`` of float32 ``x`` and ``y`` (broadcast)."""
    xb, yb = np.broadcast_arrays(np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float32))
    with np.errstate(all="ignore"):
        out = _chunked(explog.powf, np.ascontiguousarray(xb).ravel(), np.ascontiguousarray(yb).ravel())
    return out.reshape(xb.shape)


def double_pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The C library's ``pow`` of float64 ``x`` and ``y`` (broadcast)."""
    return libm.double_pow(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))


__all__ = ["NAMES", "SINGLE", "double", "double_pow", "single", "single_pow"]
