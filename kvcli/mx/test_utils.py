"""``mx.test_utils``: the helpers MXNet's own tests use, for NDArrays and numpy arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from kvcli.nd_context import Context, current_context
from kvcli.nd_ops import NDArrayError

#: MXNet's default tolerances for ``assert_almost_equal`` (``get_rtol`` / ``get_atol``).
DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-20


def _numpy(value: Any) -> np.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def default_context() -> Context:
    """The context tests run on: the current one."""
    return current_context()


def same(a: Any, b: Any) -> bool:
    """Whether two arrays have equal shape and values."""
    return bool(np.array_equal(_numpy(a), _numpy(b)))


def almost_equal(a: Any, b: Any, rtol: float | None = None, atol: float | None = None, equal_nan: bool = False) -> bool:
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere."""
    rtol = DEFAULT_RTOL if rtol is None else rtol
    atol = DEFAULT_ATOL if atol is None else atol
    return bool(np.allclose(_numpy(a), _numpy(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def assert_almost_equal(a: Any, b: Any, rtol: float | None = None, atol: float | None = None,
                        names: tuple[str, str] = ("a", "b"), equal_nan: bool = False, **_: Any) -> None:
    """Raise ``AssertionError`` naming the worst element when ``a`` and ``b`` differ."""
    rtol = DEFAULT_RTOL if rtol is None else rtol
    atol = DEFAULT_ATOL if atol is None else atol
    a, b = _numpy(a), _numpy(b)
    if a.shape != b.shape:
        raise AssertionError(f"{names[0]} has shape {a.shape}, {names[1]} has shape {b.shape}")
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan,
                               err_msg=f"{names[0]} and {names[1]} differ")


def rand_ndarray(shape: Any, stype: str = "default", density: float | None = None, dtype: Any = None,
                 ctx: Context | None = None, **_: Any) -> Any:
    """A random array: standard normal values (MXNet's ``random_arrays``); for a sparse
    ``stype``, rows (``row_sparse``) or elements (``csr``) are kept with probability
    ``density`` (random when not given) and the array is converted with ``tostype``."""
    from kvcli import nd
    from kvcli.nd_random import generator

    context = ctx or default_context()
    rng = generator(context)
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    values = rng.standard_normal(dims).astype(np.float32 if dtype is None else dtype)
    dense = nd.array(values, ctx=context, dtype=values.dtype)
    if stype == "default":
        return dense
    if stype not in ("row_sparse", "csr"):
        raise NDArrayError(f"rand_ndarray: unknown storage type {stype!r}: use 'default', 'row_sparse' or 'csr'")
    keep_probability = rng.uniform() if density is None else float(density)
    mask_shape = dims[:1] + (1,) * (len(dims) - 1) if stype == "row_sparse" else dims
    dense[:] = dense * nd.array(rng.uniform(size=mask_shape) < keep_probability, ctx=context, dtype=values.dtype)
    to_sparse = getattr(dense, "tostype", None)
    if to_sparse is None:
        raise NDArrayError(f"rand_ndarray: storage type {stype!r} needs kvcli's sparse arrays (NDArray.tostype)")
    return to_sparse(stype)


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: float | None = None, atol: float | None = None) -> None:
    """Assert two optimizer states are almost equal: arrays, or nested tuples of them
    (``None`` on either side: nothing to compare, as for a stateless optimizer)."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        if not isinstance(t2, tuple) or len(t1) != len(t2):
            raise AssertionError(f"states differ in structure: {type(t1).__name__} vs {type(t2).__name__}")
        for part1, part2 in zip(t1, t2):
            compare_ndarray_tuple(part1, part2, rtol, atol)
        return
    assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def _random_pair(shape: Any, stype: str, dtype: Any, density: float | None) -> tuple[Any, Any]:
    """The same random array twice: dense for the reference side, ``stype`` for the other."""
    from kvcli.mx import random

    if stype == "default":
        second = random.uniform(shape=shape, ctx=default_context(), dtype=dtype)
        return second.copyto(default_context()), second
    if stype not in ("row_sparse", "csr"):
        raise NDArrayError(f"compare_optimizer: storage type {stype!r} is not supported: use 'default' or 'row_sparse'")
    second = rand_ndarray(shape, stype, density=density, dtype=dtype)
    return second.copyto(default_context()).tostype("default"), second


def compare_optimizer(opt1: Any, opt2: Any, shape: Any, dtype: Any, w_stype: str = "default",
                      g_stype: str = "default", rtol: float = 1e-4, atol: float = 1e-5,
                      compare_states: bool = True, ntensors: int = 1) -> None:
    """Run one update of ``opt1`` and ``opt2`` on the same random weight and gradient and
    assert their states and weights agree (MXNet's helper for checking an optimizer
    against a reference one). ``opt1`` always sees dense arrays; ``opt2`` sees weights of
    ``w_stype`` and gradients of ``g_stype``. With a list of shapes, ``opt2`` updates all
    ``ntensors`` at once (a multi-tensor optimizer) and ``opt1`` one by one."""
    import copy

    from kvcli.mx import random

    if isinstance(shape, list):
        weights1 = tuple(random.uniform(shape=s, ctx=default_context(), dtype=dtype) for s in shape)
        grads1 = tuple(random.uniform(shape=s, ctx=default_context(), dtype=dtype) for s in shape)
        weights2, grads2 = copy.deepcopy(weights1), copy.deepcopy(grads1)
        states2 = [opt2.create_state_multi_precision(0, weights2[i]) for i in range(ntensors)]
        opt2.update_multi_precision(list(range(ntensors)), weights2, grads2, states2)
        for i in range(ntensors):
            state1 = opt1.create_state_multi_precision(i, weights1[i])
            opt1.update_multi_precision(i, weights1[i], grads1[i], state1)
            if compare_states:
                compare_ndarray_tuple(state1, states2[i], rtol, atol)
            compare_ndarray_tuple(weights1[i], weights2[i], rtol, atol)
        return
    if ntensors != 1:
        raise NDArrayError("compare_optimizer: ntensors > 1 needs a list of shapes")
    w1, w2 = _random_pair(shape, w_stype, dtype, density=1)
    g1, g2 = _random_pair(shape, g_stype, dtype, density=None)
    state1 = opt1.create_state_multi_precision(0, w1)
    state2 = opt2.create_state_multi_precision(0, w2)
    if compare_states:
        compare_ndarray_tuple(state1, state2)
    opt1.update_multi_precision(0, w1, g1, state1)
    opt2.update_multi_precision(0, w2, g2, state2)
    if compare_states:
        compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
    assert_almost_equal(w1, w2, rtol=rtol, atol=atol)


__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "almost_equal", "assert_almost_equal", "compare_ndarray_tuple",
           "compare_optimizer", "default_context", "rand_ndarray", "same"]
