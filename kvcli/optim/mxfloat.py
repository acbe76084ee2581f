"""Hyper-parameters as MXNet 1.9.1's operators receive them.

MXNet's Python hands every operator argument over as text (``str(0.9)``), and its C++ side
parses it back. A ``float`` argument (``lr=``, ``rescale_grad=``, ``beta1=`` ...) goes through
dmlc-core's own ``strtof``, which is not correctly rounded: it adds the integer and the
fraction parts in float32 and scales by powers of ten in float32, so ``rescale_grad=1.869584``
arrives one float32 ulp away from ``numpy.float32(1.869584)``. A tuple of floats (the ``lrs``
and ``wds`` of the aggregated ``multi_sgd_update``) is read by the C++ stream, correctly
rounded; a ``double`` argument (the ``scalar`` of ``weight * 0.5``) by dmlc's ``strtod``.
kvcli's kernels take their numbers through these functions, so that they compute with the
same bits as MXNet's (tests/optim/test_differential.py checks them bit for bit).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

#: dmlc-core reads at most this many digits after the decimal point (``kStrtofMaxDigits``).
_MAX_DIGITS = 19


def _text(value: Any) -> str:
    """The text MXNet's Python sends for a value (``str``; numpy scalars as Python numbers)."""
    if isinstance(value, np.generic):
        value = value.item()
    return str(value)


def _dmlc_parse(text: str, kind: type[np.floating[Any]]) -> np.floating[Any]:
    """dmlc-core's ``ParseFloat<kind>``: integer part, plus the fraction (a double division,
    then cast), times or divided by a power of ten built in ``kind``."""
    p, n = 0, len(text)
    negative = text[:1] == "-"
    if text[:1] in "+-":
        p = 1
    rest = text[p:].lower()
    if rest.startswith("inf"):
        return kind(-np.inf if negative else np.inf)
    if rest.startswith("nan"):
        return kind(np.nan)
    predec = 0
    while p < n and text[p].isdigit():
        predec = (predec * 10 + int(text[p])) % (1 << 64)  # uint64, as in C++
        p += 1
    value = kind(predec)
    if p < n and text[p] == ".":
        p += 1
        digits, count, pow10 = 0, 0, 1
        while p < n and text[p].isdigit():
            if count < _MAX_DIGITS:
                digits, pow10 = digits * 10 + int(text[p]), pow10 * 10
            count += 1
            p += 1
        value = kind(value + kind(np.float64(digits) / np.float64(pow10)))
    if p < n and text[p] in "eE":
        p += 1
        divide = text[p:p + 1] == "-"
        if text[p:p + 1] in "+-":
            p += 1
        exponent = 0
        while p < n and text[p].isdigit():
            exponent = exponent * 10 + int(text[p])
            p += 1
        exponent = min(exponent, 308 if kind is np.float64 else 38)
        scale = kind(1.0)
        while exponent >= 8:
            scale, exponent = kind(scale * kind(1e8)), exponent - 8
        while exponent > 0:
            scale, exponent = kind(scale * kind(10.0)), exponent - 1
        value = kind(value / scale) if divide else kind(value * scale)
    return kind(-value) if negative else value


@lru_cache(maxsize=4096)
def _float_param(text: str) -> np.float32:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.float32(_dmlc_parse(text, np.float32))


def float_param(value: Any) -> np.float32:
    """A ``float`` operator argument (``lr=``, ``wd=``, ``rescale_grad=``, ...) as MXNet's
    kernel receives it: ``str(value)`` read by dmlc-core's ``strtof``."""
    return _float_param(_text(value))


@lru_cache(maxsize=4096)
def _double_param(text: str) -> float:
    with np.errstate(over="ignore", invalid="ignore"):
        return float(_dmlc_parse(text, np.float64))


def double_param(value: Any) -> float:
    """A ``double`` operator argument (the ``scalar`` of ``weight * 0.5``) as MXNet reads it:
    ``str(value)`` by dmlc-core's ``strtod``. An array of dtype D computes with ``D(result)``."""
    return _double_param(_text(value))


@lru_cache(maxsize=4096)
def _tuple_param(text: str) -> np.float32:
    nearest = np.float32(float(text))  # decimal -> double -> float32: right unless a tie moved
    if not np.isfinite(nearest):
        return nearest
    exact = Fraction(text)
    below, above = np.nextafter(nearest, np.float32(-np.inf)), np.nextafter(nearest, np.float32(np.inf))
    for neighbour in (below, above):  # correct rounding: take a neighbour that is nearer
        if np.isfinite(neighbour) and abs(Fraction(float(neighbour)) - exact) < abs(Fraction(float(nearest)) - exact):
            nearest = neighbour
    return np.float32(nearest)


def tuple_param(value: Any) -> np.float32:
    """An element of a ``Tuple<float>`` argument (``lrs=`` / ``wds=`` of the aggregated SGD
    kernels): ``str(value)`` correctly rounded to float32, as the C++ stream reads it."""
    return _tuple_param(_text(value))
