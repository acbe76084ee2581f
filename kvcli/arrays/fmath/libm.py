"""Double-precision maths from the C library itself, as MXNet calls it.

MXNet computes float64 (and integer) element-wise maths with the C library's double
functions (``exp``, ``log``, ``tanh`` ...). Those are not numpy's: numpy has its own SIMD
kernels, which differ from glibc's in the last bit on up to half of the inputs. Python's
:mod:`math` module calls the C library's functions, so mapping it over the values gives the
C library's results exactly; where :mod:`math` raises instead of returning inf or NaN (a
domain or range error), or has no such function, the C function is called through
:mod:`ctypes`. This path costs about 0.1-0.3 microseconds per value, numpy's a few
nanoseconds: it is used only where MXNet computes in double.

``tgamma`` and ``lgamma`` have no :mod:`math` equivalent (``math.gamma`` is CPython's own
algorithm): they always go through :mod:`ctypes`, in float or double as MXNet does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
from typing import Callable

import numpy as np

from kvcli.errors import NDArrayError

#: C function name -> the :mod:`math` function that calls it (None: only through ctypes).
PYTHON_MATH: dict[str, Callable[[float], float] | None] = {
    "exp": math.exp, "expm1": math.expm1, "log": math.log, "log2": math.log2, "log10": math.log10,
    "log1p": math.log1p, "sin": math.sin, "cos": math.cos, "tan": math.tan, "tanh": math.tanh,
    "sinh": math.sinh, "cosh": math.cosh, "asin": math.asin, "acos": math.acos, "atan": math.atan,
    "asinh": math.asinh, "acosh": math.acosh, "atanh": math.atanh, "erf": math.erf,
    "cbrt": getattr(math, "cbrt", None), "tgamma": None, "lgamma": None,
}


@functools.lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    """The C maths library the process already uses (Python itself links it)."""
    for candidate in (None, ctypes.util.find_library("m")):
        try:
            library = ctypes.CDLL(candidate)
            library.tgamma  # noqa: B018 - probe that the maths functions are there
            return library
        except (OSError, AttributeError):
            continue
    raise NDArrayError("kvcli cannot find the C maths library (libm) that MXNet uses for this function; "
                       "it is needed for float64, integer, gamma and gammaln maths")


@functools.lru_cache(maxsize=None)
def c_function(name: str, single: bool = False, arguments: int = 1) -> Callable[..., float]:
    """The C library's ``name`` (``name + 'f'`` when ``single``) as a Python callable."""
    c_type = ctypes.c_float if single else ctypes.c_double
    function = getattr(_library(), name + ("f" if single else ""))
    function.restype = c_type
    function.argtypes = [c_type] * arguments
    return function


def _safe(python: Callable[..., float], c: Callable[..., float]) -> Callable[..., float]:
    def call(*values: float) -> float:
        try:
            return python(*values)
        except (ValueError, OverflowError):  # math's domain / range errors: the C value (inf, NaN)
            return c(*values)
    return call


#: numpy's version of each function, only to tell which values end in a domain or range
#: error (inf or NaN), which go to the C function straight rather than through an exception.
_SCREEN: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "erf": np.tanh, "cbrt": np.cbrt,
}


def double(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's double ``name`` of each value of float64 ``x`` (any shape)."""
    flat = x.ravel()
    python = PYTHON_MATH.get(name)
    c = c_function(name)
    if python is None:
        return np.fromiter(map(c, flat.tolist()), dtype=np.float64, count=flat.size).reshape(x.shape)
    with np.errstate(all="ignore"):
        regular = np.isfinite(_SCREEN[name](flat)) & np.isfinite(flat)
    out = np.empty_like(flat)
    if regular.all():
        out[:] = np.fromiter(map(_safe(python, c), flat.tolist()), dtype=np.float64, count=flat.size)
    else:
        chosen = flat[regular]
        out[regular] = np.fromiter(map(_safe(python, c), chosen.tolist()), dtype=np.float64, count=chosen.size)
        rest = flat[~regular]
        out[~regular] = np.fromiter(map(c, rest.tolist()), dtype=np.float64, count=rest.size)
    return out.reshape(x.shape)


def double_pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The C library's ``pow`` of broadcast float64 ``x`` and ``y``."""
    xb, yb = np.broadcast_arrays(x, y)
    c = c_function("pow", arguments=2)
    finite = np.isfinite(xb) & np.isfinite(yb)
    function = _safe(math.pow, c)
    out = np.fromiter(map(lambda a, b, ok: function(a, b) if ok else c(a, b), xb.ravel().tolist(),
                          yb.ravel().tolist(), finite.ravel().tolist()), dtype=np.float64, count=xb.size)
    return out.reshape(xb.shape)


def single(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's float ``name`` (``tgammaf``, ``lgammaf``) of each value of float32 ``x``."""
    function = c_function(name, single=True)
    values = x.ravel().tolist()
    return np.fromiter(map(function, values), dtype=np.float32, count=len(values)).reshape(x.shape)


def available() -> bool:
    """Whether the C maths library was found (float64, integer, gamma maths need it)."""
    try:
        _library()
    except NDArrayError:
        return False
    return True


__all__ = ["PYTHON_MATH", "available", "c_function", "double", "double_pow", "single"]

