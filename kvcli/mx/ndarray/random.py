"""``nd.random`` / ``mx.random``: sampling and seeding with MXNet's signatures.

Streams are numpy's PCG64 (:mod:`kvcli.arrays.random`), so **the numbers differ from
MXNet's**; what matches is the distribution, the shapes, dtypes and the seeding rules -- which
draws repeat which:

* every CPU context draws from one stream (``cpu(1)`` after ``seed(s)`` continues where
  ``cpu(0)`` left off, as in MXNet); each GPU context has its own;
* ``seed(s)`` (``ctx='all'``) reseeds every stream; ``seed(s, ctx=c)`` reseeds the CPU
  stream and ``c``'s, from ``s`` alone; for the samplers on the CPU both give the same
  stream;
* ``shuffle`` has a stream of its own, as MXNet's (its numbers do not move the samplers');
* without any ``seed`` call the streams start from seed 0, so a fresh process is
  reproducible, as MXNet's is.

Parameters may be numbers or NDArrays; with NDArray parameters the result has shape
``param.shape + shape``, one draw per parameter element (MXNet's rule); with ``out=`` and no
``shape`` the draw takes ``out``'s shape.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence

import numpy as np

from kvcli.mx.ndarray.ndarray import DEFAULT_DTYPE, NDArray, as_context, as_shape
from kvcli.mx.ndarray.context import Context
from kvcli.errors import NDArrayError
from kvcli.arrays import random as streams
from kvcli.mx.scope import guard as _scope_guard

DEFAULT_SEED = streams.DEFAULT_SEED


def _device(ctx: Context) -> streams.Device:
    return (ctx.device_typeid, ctx.device_id)


def seed(seed_state: int, ctx: Context | str = "all") -> None:
    """Reseed every context's stream (``ctx='all'``) or only ``ctx``'s."""
    if not isinstance(seed_state, (numbers.Integral, np.integer)) or isinstance(seed_state, bool):
        raise NDArrayError(f"seed_state must be int, not {type(seed_state).__name__} ({seed_state!r})")
    if seed_state < 0:
        raise NDArrayError(f"seed_state must be >= 0, not {seed_state}")
    if isinstance(ctx, str) and ctx == "all":
        streams.seed_every(int(seed_state))
        return
    streams.seed_device(int(seed_state), _device(as_context(ctx)))


def generator(ctx: Context | None = None, kind: int = streams.SAMPLE) -> np.random.Generator:
    """The samplers' stream of ``ctx`` (default: the current context; ``kind=SHUFFLE``:
    shuffle's), made on first use."""
    return streams.stream(_device(as_context(ctx)), kind)


def _sample(draw: Callable[..., np.ndarray], params: Sequence[Any], shape: Any, dtype: Any,
            ctx: Context | None, out: NDArray | None, default_dtype: Any = DEFAULT_DTYPE) -> NDArray:
    """One draw per output element; NDArray parameters add their shape in front."""
    arrays = [p for p in params if isinstance(p, NDArray)]
    if arrays and len(arrays) != len(params):
        raise NDArrayError("give every distribution parameter as a number, or every one as an NDArray")
    if shape is None and out is not None and not arrays:
        shape = out.shape  # MXNet draws out's shape when no shape is given
    extra = () if shape is None else as_shape(shape)
    if out is not None:
        target_ctx = out.context
        dtype = out.dtype if dtype is None else dtype
    else:
        target_ctx = arrays[0].context if arrays and ctx is None else as_context(ctx)
    if arrays:
        base = arrays[0].shape
        if any(a.shape != base for a in arrays):
            raise NDArrayError(f"distribution parameters have different shapes {[a.shape for a in arrays]}")
        values = [a.asnumpy().astype(np.float64).reshape(base + (1,) * len(extra)) for a in arrays]
        size = base + extra
    else:
        values = [float(p) for p in params]  # type: ignore[misc]  # scalars where the other branch has arrays
        size = extra or (1,)  # MXNet draws one value when no shape is given
    result = draw(generator(target_ctx), *values, size=size)
    result = np.asarray(result).astype(np.dtype(default_dtype if dtype is None else dtype))
    if out is not None:
        if out.shape != result.shape:
            raise NDArrayError(f"out has shape {out.shape}, but the draw has shape {result.shape}")
        out[:] = NDArray(result, target_ctx)
        return out
    return NDArray(result, target_ctx)


def uniform(low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
            out: NDArray | None = None, name: str | None = None) -> NDArray:
    """Samples from ``[low, high)``."""
    return _sample(lambda g, lo, hi, size: g.uniform(lo, hi, size), (low, high), shape, dtype, ctx, out)


def normal(loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
           out: NDArray | None = None, name: str | None = None) -> NDArray:
    """Samples from a normal distribution with mean ``loc`` and standard deviation ``scale``."""
    return _sample(lambda g, mu, sigma, size: g.normal(mu, sigma, size), (loc, scale), shape, dtype, ctx, out)


def randn(*shape: int, loc: Any = 0, scale: Any = 1, dtype: Any = None, ctx: Context | None = None,
          name: str | None = None) -> NDArray:
    """Normal samples of shape ``shape`` given as separate numbers: ``randn(2, 3)``."""
    return normal(loc, scale, shape or None, dtype, ctx)


def exponential(scale: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
                out: NDArray | None = None, name: str | None = None) -> NDArray:
    """Samples from an exponential distribution of mean ``scale``."""
    return _sample(lambda g, beta, size: g.exponential(beta, size), (scale,), shape, dtype, ctx, out)


def poisson(lam: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
            out: NDArray | None = None, name: str | None = None) -> NDArray:
    """Samples from a Poisson distribution of rate ``lam`` (float32 counts, as in MXNet)."""
    return _sample(lambda g, rate, size: g.poisson(rate, size), (lam,), shape, dtype, ctx, out)


def gamma(alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
          out: NDArray | None = None, name: str | None = None) -> NDArray:
    """Samples from a gamma distribution of shape ``alpha`` and scale ``beta``."""
    return _sample(lambda g, k, theta, size: g.gamma(k, theta, size), (alpha, beta), shape, dtype, ctx, out)


def randint(low: int, high: int, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
            out: NDArray | None = None, name: str | None = None) -> NDArray:
    """Integers from ``[low, high)`` (int32 unless ``dtype`` says otherwise)."""
    if not low < high:
        raise NDArrayError(f"randint needs low < high, not low={low}, high={high}")
    return _sample(lambda g, lo, hi, size: g.integers(int(lo), int(hi), size), (low, high), shape, dtype, ctx, out,
                   default_dtype=np.int32)


def shuffle(data: NDArray, name: str | None = None) -> NDArray:
    """A copy of ``data`` with its rows (first axis) in random order."""
    if not isinstance(data, NDArray):
        raise TypeError(f"shuffle takes an NDArray, not {type(data).__name__}")
    values = data.asnumpy()
    generator(data.context, streams.SHUFFLE).shuffle(values, axis=0)
    return NDArray(values, data.context)


__all__ = ["exponential", "gamma", "generator", "normal", "poisson", "randint", "randn", "seed", "shuffle", "uniform"]


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
