"""MXNet 1.9.1's fused optimizer kernels (``optimizer_op-inl.h``) on numpy, bit for bit.

Each kernel computes in its ``DType``, the weight's dtype (float32 for the master copy of a
multi-precision update), with every argument cast to it, and evaluates MXNet's expression in
MXNet's order: numpy's float16 arithmetic rounds each operation to float16 as mshadow's
``half_t`` does. The arguments arrive as Python numbers and are read as MXNet reads the text
it is given (:mod:`kvcli.optim.mxfloat`); ``lr`` and ``wd`` may already be float32 (the
aggregated kernels' tuples, a rate computed by another kernel) and are then taken as they are.
Python-side optimizers (AdaDelta, Nadam, ...) use :func:`scalar` for ``array * 0.9``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache
from typing import Any

import numpy as np

from kvcli.optim.mxfloat import double_param, float_param


@lru_cache(maxsize=1)
def _libm() -> Any:
    """The C library's maths, which MXNet's kernels call (``powf``); None where it cannot be
    found, and numpy's then stands in."""
    name = ctypes.util.find_library("m")
    if name is None:
        return None
    libm = ctypes.CDLL(name)
    libm.powf.restype, libm.powf.argtypes = ctypes.c_float, [ctypes.c_float, ctypes.c_float]
    libm.pow.restype, libm.pow.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]
    return libm


def power(base: Any, exponent: Any) -> Any:
    """``mshadow_op::power`` of two scalars of one dtype: the C library's ``powf`` (``pow`` for
    float64; float16 through ``powf``), as MXNet computes it. numpy's own float32 ``power``
    differs from ``powf`` in the last bit for about a fifth of the inputs."""
    kind = type(base)
    libm = _libm()
    if libm is None:
        return np.power(base, exponent)
    if kind is np.float64:
        return np.float64(libm.pow(float(base), float(exponent)))
    return kind(np.float32(libm.powf(float(base), float(exponent))))


def arg(value: Any, like: np.ndarray) -> Any:
    """A kernel's ``float`` argument in the kernel's DType (``like``'s dtype)."""
    number = value if isinstance(value, np.float32) else float_param(value)
    return like.dtype.type(number)


def scalar(value: Any, like: np.ndarray) -> Any:
    """The scalar of an NDArray-scalar operation (``weight * 0.9``): MXNet's ``double``
    argument, cast to the array's dtype (a float16 array's through float32, as ``half_t``)."""
    number = double_param(value)
    if like.dtype == np.float16:
        return np.float16(np.float32(number))
    return like.dtype.type(number)


def clip_bound(clip: Any, like: np.ndarray) -> Any:
    """The kernel's clip bound, or None when the kernel does not clip (``clip < 0``, or
    ``clip_gradient`` not passed: Python passes it only when truthy)."""
    if clip is None or not clip:
        return None
    bound = arg(clip, like)
    return bound if bound >= 0 else None


def clip(x: np.ndarray, bound: Any) -> np.ndarray:
    """``mshadow_op::clip``: to ``[-bound, bound]``; NaN stays NaN."""
    return np.clip(x, -bound, bound)


def sign(x: np.ndarray) -> np.ndarray:
    """``(x > 0) - (x < 0)`` in ``x``'s dtype, as MXNet's kernels take a sign (NaN gives 0)."""
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def sum_sq(array: np.ndarray) -> np.float32:
    """MXNet's ``multi_sum_sq`` on the CPU: ``sum += a[j] * a[j]`` one element after the other
    into a float32 sum, the square in the array's dtype (a float64 square is added in double,
    then rounded to the float32 sum)."""
    flat = np.asarray(array).reshape(-1)
    if flat.size == 0:
        return np.float32(0)
    squares = flat * flat
    if flat.dtype != np.float64:
        return np.cumsum(squares.astype(np.float32), dtype=np.float32)[-1]
    total = np.float32(0)
    for square in squares.tolist():  # float64 weights are rare: the exact loop is affordable
        total = np.float32(float(total) + square)
    return total


def _step(g: np.ndarray, lr: Any, rescale: Any, bound: Any) -> np.ndarray:
    """``lr * clip(rescale * g)`` or, without clipping, ``(lr * rescale) * g``."""
    if bound is not None:
        step = clip(rescale * g, bound)
        step *= lr
        return step
    return (lr * rescale) * g


def float_times(number: np.float32, array: Any) -> Any:
    """``float * DType`` in C++: a double or float array computes in its dtype, a float16 one
    (mshadow's ``half_t`` with a float operand) in float32, rounded once to float16."""
    if np.asarray(array).dtype == np.float16:
        return (number * np.asarray(array, np.float32)).astype(np.float16)
    return np.asarray(array).dtype.type(number) * array


def float_times_array(number: Any, array: np.ndarray) -> Any:
    """``DType * float`` in C++, a DType number times a float32 array: a double or float
    number computes in its type, a float16 one (``half_t`` with a float operand) in float32,
    rounded once to float16."""
    if isinstance(number, np.float16):
        return (np.float32(number) * array).astype(np.float16)
    return number * array


def sgd(w: np.ndarray, g: np.ndarray, mom: np.ndarray | None, lr: Any, wd: Any, momentum: Any, rescale: Any,
        clip_gradient: Any, aggregated: bool, preloaded: bool = False) -> None:
    """``multi_sgd(_mom)_update`` (``aggregated``: MXNet's Updater path for dense weights) or
    ``sgd(_mom)_update``, in place. With momentum both are ``mom = momentum*mom - lr*wd*w -
    lr*clip(rescale*g); w = w + mom``; without, the aggregated kernel computes
    ``w + (0 - lr*wd*w - ...)`` and the single one ``(1 - lr*wd)*w - ...``. ``preloaded``
    (LARS's ``preloaded_multi_sgd``): ``lr`` and ``wd`` are float32 array values, which the
    kernel multiplies as floats before meeting its DType."""
    rescale = arg(rescale, w)
    bound = clip_bound(clip_gradient, w)
    if preloaded:
        lr32, wd32 = np.float32(lr), np.float32(wd)
        decay = float_times(np.float32(lr32 * wd32), w)
        if bound is not None:
            step = float_times(lr32, clip(rescale * g, bound))
        else:
            step = float_times(lr32, np.asarray(rescale)) * g
    else:
        lr, wd = arg(lr, w), arg(wd, w)
        step = _step(g, lr, rescale, bound)
        decay = (lr * wd) * w
    if mom is not None:
        mom *= arg(momentum, w)
        mom -= decay
        mom -= step
        w += mom
    elif aggregated:
        new = np.subtract(w.dtype.type(0), decay)
        new -= step
        w += new
    else:
        new = (w.dtype.type(1) - lr * wd) * w
        new -= step
        w[...] = new


def nag(w: np.ndarray, g: np.ndarray, mom: np.ndarray, lr: Any, wd: Any, momentum: Any, rescale: Any,
        clip_gradient: Any, aliased: bool = True) -> None:
    """``nag_mom_update`` / ``mp_nag_mom_update``, in place: the weight is written first, and
    (``aliased``, MXNet's ``out=weight``) the momentum's update then sees the new weight."""
    lr, wd, rescale, m = arg(lr, w), arg(wd, w), arg(rescale, w), arg(momentum, w)
    bound = clip_bound(clip_gradient, w)
    mom *= m
    grad_term = clip(rescale * g, bound) if bound is not None else rescale * g
    old = None if aliased else w.copy()
    w[...] = (w - mom) + (m + w.dtype.type(1)) * (mom - lr * (grad_term + wd * w))
    mom -= lr * (grad_term + wd * (w if old is None else old))


def signum(w: np.ndarray, g: np.ndarray, mom: np.ndarray, lr: Any, wd: Any, momentum: Any, rescale: Any,
           clip_gradient: Any, wd_lh: Any) -> None:
    """``signum_update``: ``mom = m*mom - (1-m)*wd*w - (1-m)*clip(rescale*g)``, then
    ``w = (1 - lr*wd_lh)*w + lr*sign(mom)``."""
    lr, wd, rescale, m, wd_lh = arg(lr, w), arg(wd, w), arg(rescale, w), arg(momentum, w), arg(wd_lh, w)
    one = w.dtype.type(1)
    rest = one - m
    bound = clip_bound(clip_gradient, w)
    mom *= m
    mom -= (rest * wd) * w
    if bound is not None:
        mom -= rest * clip(rescale * g, bound)
    else:
        mom -= (rest * rescale) * g
    w[...] = (one - lr * wd_lh) * w + lr * sign(mom)


def signsgd(w: np.ndarray, g: np.ndarray, lr: Any, wd: Any) -> None:
    """``signsgd_update``: ``w = (1 - lr*wd)*w - lr*sign(g)`` (no rescaling, no clipping)."""
    lr, wd = arg(lr, w), arg(wd, w)
    w[...] = (w.dtype.type(1) - lr * wd) * w - lr * sign(g)
