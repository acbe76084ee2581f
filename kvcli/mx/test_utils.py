"""``mx.test_utils``: the helpers MXNet's own tests use, for NDArrays and numpy arrays, and
those of its test suite's ``common`` module (``with_seed``, ``setup_module``, ``teardown``,
``assertRaises``) plus nose's ``raises`` decorator, so MXNet's unit test files run under
pytest with only their imports changed (``tools/mxnet_unittests.py``)."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random as py_random
import tempfile
from typing import Any, Callable, Iterator

import numpy as np

import kvcli.mx as mx  # re-exported: MXNet's tests take ``mx`` from ``from mxnet.test_utils import *``
from kvcli.mx.ndarray import array  # re-exported, as MXNet's test_utils does
from kvcli.mx.ndarray.context import Context, current_context
from kvcli.errors import NDArrayError
from kvcli.mx.scope import guard as _scope_guard

#: MXNet's tolerances for ``almost_equal`` without ``rtol`` / ``atol`` (its float64 defaults).
DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-20
#: MXNet's tolerances by dtype for ``assert_almost_equal`` without ``rtol`` / ``atol`` (the
#: larger of the two operands' is used; integers and bool compare exactly).
DTYPE_RTOLS: dict[np.dtype, float] = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4,
                                      np.dtype(np.float64): 1e-5}
DTYPE_ATOLS: dict[np.dtype, float] = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3,
                                      np.dtype(np.float64): 1e-20}


def _numpy(value: Any) -> np.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def default_context() -> Context:
    """The context tests run on: the current one."""
    return current_context()


def same(a: Any, b: Any) -> bool:
    """Whether two arrays have equal shape and values."""
    return bool(np.array_equal(_numpy(a), _numpy(b)))


def almost_equal(a: Any, b: Any, rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 use_broadcast: bool = True) -> bool:
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (broadcasting unless
    ``use_broadcast=False``); without tolerances, MXNet's float64 ones whatever the dtype."""
    a, b = _numpy(a), _numpy(b)
    if not use_broadcast:
        _check_shapes(a, b)
    rtol = DEFAULT_RTOL if rtol is None else rtol
    atol = DEFAULT_ATOL if atol is None else atol
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _check_shapes(a: np.ndarray, b: np.ndarray) -> None:
    if a.shape != b.shape:
        raise AssertionError(np.testing.build_err_msg(
            [a, b], err_msg=f"a.shape = {a.shape} and b.shape = {b.shape} are not equal"))


def _tolerance(value: Any, given: Any, defaults: dict[np.dtype, float]) -> Any:
    """MXNet's ``get_tolerance``: a number as given, else by the value's dtype (``given`` may
    be a dict of dtype -> tolerance); an integer dtype's is the int 0, as MXNet prints it."""
    if isinstance(given, (int, float, np.number)):
        return given
    dtype = np.dtype(value.dtype) if hasattr(value, "dtype") else np.asarray(value).dtype
    return (given or {}).get(dtype, defaults.get(dtype, 0))


def _same_kind_ndarrays(a: Any, b: Any) -> bool:
    """MXNet compares two NDArrays of one context and dtype with its ``allclose`` operator."""
    return (hasattr(a, "context") and hasattr(b, "context") and hasattr(a, "asnumpy") and hasattr(b, "asnumpy")
            and a.context == b.context and a.dtype == b.dtype)


def _operator_allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> bool:
    """MXNet's ``contrib.allclose`` kernel: ``|a - b| <= atol + rtol * |b|`` in the arrays'
    type, with float (C ``float``) tolerances; float16 differences rounded to float16."""
    rtol32, atol32 = np.float32(rtol), np.float32(atol)
    with np.errstate(all="ignore"):
        if a.dtype == np.float64:
            diff, bound = np.abs(a - b), float(atol32) + float(rtol32) * np.abs(b)
        elif a.dtype.kind == "f":
            diff = np.abs(a.astype(np.float32) - b.astype(np.float32)).astype(a.dtype).astype(np.float32)
            bound = atol32 + rtol32 * np.abs(b.astype(np.float32))
        else:
            diff = np.where(a > b, a - b, b - a).astype(np.float32)
            bound = atol32 + rtol32 * np.abs(b.astype(np.float32))
        close = (a == b) | (diff <= bound)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    close = np.where(nan_a | nan_b, equal_nan & (nan_a == nan_b), close)
    return bool(np.all(close))


def _max_violation(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> tuple[tuple[int, ...], Any]:
    with np.errstate(all="ignore"):
        violation = np.where(np.equal(a, b), 0, np.abs(a - b)) / (atol + rtol * np.abs(b) + 1e-20)
    index = np.unravel_index(np.argmax(violation), violation.shape)
    return tuple(int(i) for i in index), np.max(violation)


def _location(a: np.ndarray, b: np.ndarray, index: tuple[int, ...], names: tuple[str, str], maximum: bool = False) -> str:
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" % (
        "maximum " if maximum else "", index, names[0], a[index], names[1], b[index])


def assert_almost_equal(a: Any, b: Any, rtol: Any = None, atol: Any = None, names: tuple[str, str] = ("a", "b"),
                        equal_nan: bool = False, use_broadcast: bool = True,
                        mismatches: tuple[int, int] = (10, 10)) -> None:
    """MXNet's ``assert_almost_equal``: without ``rtol`` / ``atol``, the larger default of the
    two operands' dtypes (float16 1e-2 / 1e-1, float32 1e-4 / 1e-3, float64 1e-5 / 1e-20,
    integers 0); two NDArrays of one context and dtype compared in their type. On failure, as
    MXNet: the worst elements printed, then ``AssertionError`` with numpy's message -- and
    numpy's print options left at ``threshold=4, suppress=True``, as MXNet leaves them."""
    if not use_broadcast:
        _check_shapes(_numpy(a), _numpy(b))
    rtol, atol = (max(_tolerance(a, rtol, DTYPE_RTOLS), _tolerance(b, rtol, DTYPE_RTOLS)),
                  max(_tolerance(a, atol, DTYPE_ATOLS), _tolerance(b, atol, DTYPE_ATOLS)))
    if _same_kind_ndarrays(a, b):
        a, b = _numpy(a), _numpy(b)
        if _operator_allclose(a, b, rtol, atol, equal_nan):
            return
    else:
        a, b = (v if isinstance(v, (int, float)) else _numpy(v) for v in (a, b))  # numbers stay numbers, as in MXNet
        if getattr(a, "dtype", None) == np.bool_ and getattr(b, "dtype", None) == np.bool_:
            np.testing.assert_equal(a, b)
            return
        if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
            return
    index, worst = _max_violation(np.asarray(a), np.asarray(b), rtol, atol)
    if index != ():
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray)  # a numbers' violation has no index
        print(f"\n*** Maximum errors for vector of size {a.size}:  rtol={rtol}, atol={atol}\n")
        rest_a, rest_b, count, first = a.copy(), b.copy(), 1, (index, worst)
        while count <= a.size:
            if count <= mismatches[0]:
                print("%3d: Error %f  %s" % (count, worst, _location(a, b, index, names)))
            rest_a[index] = rest_b[index] = 0
            if almost_equal(rest_a, rest_b, rtol, atol, equal_nan=equal_nan):
                break
            count += 1
            if count > mismatches[1] > 0:
                break
            index, worst = _max_violation(rest_a, rest_b, rtol, atol)
        degree = "at least " if mismatches[1] > 0 and count > mismatches[1] else ""
        message = "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %s%f%%).\n%s" % (
            first[1], rtol, atol, degree, 100 * count / a.size, _location(a, b, first[0], names, maximum=True))
    else:
        message = "Error %f exceeds tolerance rtol=%e, atol=%e.\n" % (worst, rtol, atol)
    np.set_printoptions(threshold=4, suppress=True)  # MXNet's side effect, kept: later prints are as under MXNet
    raise AssertionError(np.testing.build_err_msg([a, b], err_msg=message))


def rand_ndarray(shape: Any, stype: str = "default", density: float | None = None, dtype: Any = None,
                 ctx: Context | None = None, **_: Any) -> Any:
    """A random array: standard normal values (MXNet's ``random_arrays``); for a sparse
    ``stype``, rows (``row_sparse``) or elements (``csr``) are kept with probability
    ``density`` (random when not given) and the array is converted with ``tostype``."""
    import kvcli.mx.ndarray as nd
    from kvcli.mx.ndarray.random import generator

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
    mask = nd.array(rng.uniform(size=mask_shape) < keep_probability, ctx=context, dtype=values.dtype)
    dense[:] = dense * mask  # type: ignore[operator]  # NDArray's operators are set after the class
    to_sparse = getattr(dense, "tostype", None)
    if to_sparse is None:
        raise NDArrayError(f"rand_ndarray: storage type {stype!r} needs kvcli's sparse arrays (NDArray.tostype)")
    return to_sparse(stype)


def default_dtype() -> type:
    """The dtype MXNet's tests use by default: float32."""
    return np.float32


def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple[int, int]:
    """A random 2-D shape, each size 1 (0 when allowed) to ``dim0`` / ``dim1`` (numpy's global stream)."""
    low = 0 if allow_zero_size else 1
    return int(np.random.randint(low, dim0 + 1)), int(np.random.randint(low, dim1 + 1))


def rand_shape_3d(dim0: int = 10, dim1: int = 10, dim2: int = 10, allow_zero_size: bool = False) -> tuple[int, int, int]:
    """A random 3-D shape, each size 1 (0 when allowed) to ``dim0`` / ``dim1`` / ``dim2``."""
    low = 0 if allow_zero_size else 1
    return (int(np.random.randint(low, dim0 + 1)), int(np.random.randint(low, dim1 + 1)),
            int(np.random.randint(low, dim2 + 1)))


def rand_sparse_ndarray(shape: Any, stype: str, density: float | None = None, dtype: Any = None,
                        distribution: str | None = None, data_init: float | None = None, rsp_indices: Any = None,
                        modifier_func: Callable[[Any], Any] | None = None, shuffle_csr_indices: bool = False,
                        ctx: Context | None = None) -> tuple[Any, tuple[Any, ...]]:
    """A random sparse array and its parts, as MXNet's helper returns them: ``row_sparse``
    rows kept with probability ``density`` (or the rows ``rsp_indices``), values uniform in
    [0, 1) -> ``(array, (values, indices))``; ``csr``: ``int(rows * cols * density)``
    distinct positions, values uniform in [0, 1) -> ``(array, (indptr, indices, data))``.
    ``data_init`` fills the values, ``modifier_func`` maps each. MXNet's ``powerlaw``
    distribution and its unsorted csr columns (``shuffle_csr_indices``, which kvcli's csr
    arrays refuse) are not provided."""
    from kvcli.mx.ndarray import sparse

    context = ctx or default_context()
    density = float(np.random.rand()) if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    if distribution not in (None, "uniform") or shuffle_csr_indices:
        raise NDArrayError("rand_sparse_ndarray: kvcli provides the uniform distribution with sorted csr columns "
                           f"only, not distribution={distribution!r}, shuffle_csr_indices={shuffle_csr_indices}")
    dims = tuple(int(d) for d in shape)
    if stype == "row_sparse":
        indices = (np.asarray(rsp_indices) if rsp_indices is not None
                   else np.flatnonzero(np.random.rand(dims[0]) < density))
        values = np.random.rand(len(indices), *dims[1:]).astype(dtype)
    elif stype == "csr":
        if len(dims) != 2:
            raise NDArrayError(f"rand_sparse_ndarray: a csr array is 2-D, not shape {dims}")
        positions = np.sort(np.random.choice(dims[0] * dims[1], int(dims[0] * dims[1] * density), replace=False))
        values = np.random.rand(len(positions)).astype(dtype)
    else:
        raise NDArrayError(f"rand_sparse_ndarray: unknown storage type {stype!r}: use 'row_sparse' or 'csr'")
    if data_init is not None:
        values.fill(data_init)
    if modifier_func is not None:
        values = np.vectorize(modifier_func, otypes=[values.dtype])(values) if values.size else values
    if stype == "row_sparse":
        table = sparse.row_sparse_array((values, indices), shape=dims, dtype=dtype, ctx=context)
        return table, (values, indices)
    rows, columns = np.divmod(positions, dims[1])
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=dims[0]))])
    made = sparse.csr_matrix((values, columns, indptr), shape=dims, dtype=dtype, ctx=context)
    return made, (made.indptr, made.indices, made.data)


@contextlib.contextmanager
def random_seed(seed: int | None = None) -> Iterator[None]:
    """MXNet's ``common.random_seed``: run the block with numpy's, ``mx.random``'s and
    Python's streams seeded with ``seed`` (a random one when None), then reseed them from a
    number drawn before the block."""
    next_seed = int(np.random.randint(0, np.iinfo(np.int32).max))
    if seed is None:
        np.random.seed()
        seed = int(np.random.randint(0, np.iinfo(np.int32).max))
    try:
        _seed_all(seed)
        yield
    finally:
        _seed_all(next_seed)


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
        raise NDArrayError(f"compare_optimizer: storage type {stype!r} is not supported: use 'default', 'row_sparse' or 'csr'")
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


def _seed_all(seed: int) -> None:
    """Seed numpy's, kvcli's and Python's global streams with ``seed``."""
    from kvcli.mx.ndarray import random as nd_random

    np.random.seed(seed)
    nd_random.seed(seed)
    py_random.seed(seed)


def _logger() -> logging.Logger:
    return logging.getLogger("kvcli.mx.test_utils")


def with_seed(seed: int | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator (MXNet's ``common.with_seed``): seed numpy, ``mx.random`` and ``random``
    identically before the test -- with ``seed``, else ``$MXNET_TEST_SEED``, else a random
    seed -- log the seed when the test fails, restore numpy's global state afterwards, and
    run the test ``$MXNET_TEST_COUNT`` times (default 1)."""

    def decorate(test: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> None:
            count = int(os.getenv("MXNET_TEST_COUNT", "1"))
            env_seed = os.getenv("MXNET_TEST_SEED")
            for _ in range(count):
                if seed is not None:
                    this_seed = seed
                elif env_seed is not None:
                    this_seed = int(env_seed)
                else:
                    this_seed = int(np.random.randint(0, np.iinfo(np.int32).max))
                saved = np.random.get_state()
                _seed_all(this_seed)
                try:
                    test(*args, **kwargs)
                except BaseException:
                    _logger().warning("error with seeded test, use MXNET_TEST_SEED=%d to reproduce", this_seed)
                    raise
                finally:
                    np.random.set_state(saved)

        return run

    return decorate


def setup_module() -> None:
    """Module setup (MXNet's ``common.setup_module``): seed every stream from
    ``$MXNET_MODULE_SEED``, else from a random seed, and log it."""
    env_seed = os.getenv("MXNET_MODULE_SEED")
    seed = int(np.random.randint(0, np.iinfo(np.int32).max)) if env_seed is None else int(env_seed)
    _logger().info("module seed %d (set MXNET_MODULE_SEED to reproduce)", seed)
    _seed_all(seed)


def teardown() -> None:
    """Module teardown (MXNet's ``common.teardown``): wait for all pending operations."""
    import kvcli.mx.ndarray as nd

    nd.waitall()


def assertRaises(expected_exception: type[BaseException], func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Assert ``func(*args, **kwargs)`` raises ``expected_exception`` (MXNet's ``common.assertRaises``)."""
    try:
        func(*args, **kwargs)
    except expected_exception:
        return
    raise AssertionError(f"{func.__name__} did not raise {expected_exception.__name__}")


def assert_exception(f: Callable[..., Any], exception_type: type[BaseException], *args: Any, **kwargs: Any) -> None:
    """Assert ``f(*args, **kwargs)`` raises ``exception_type`` (MXNet's ``test_utils.assert_exception``;
    ``assertRaises`` with the function first)."""
    assertRaises(exception_type, f, *args, **kwargs)


def raises(*expected: type[BaseException]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator (nose's ``nose.tools.raises``): the test passes only if it raises one of ``expected``."""

    def decorate(test: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> None:
            try:
                test(*args, **kwargs)
            except expected:
                return
            names = " or ".join(e.__name__ for e in expected)
            raise AssertionError(f"{test.__name__} did not raise {names}")

        return run

    return decorate


def assert_raises(expected_exception: type[BaseException], *args: Any, **kwargs: Any) -> Any:
    """nose's ``assert_raises`` (unittest's ``assertRaises``): with a function, call it and
    assert it raises; without, a context manager that asserts its block raises."""
    import unittest

    return unittest.TestCase().assertRaises(expected_exception, *args, **kwargs)


@contextlib.contextmanager
def TemporaryDirectory(suffix: str = "", prefix: str = "", dir: str = "") -> Iterator[str]:  # noqa: N802 - MXNet's name
    """A temporary directory's path for the ``with`` block, removed after it (MXNet's
    ``common.TemporaryDirectory``)."""
    with tempfile.TemporaryDirectory(suffix=suffix, prefix=prefix, dir=dir or None) as path:
        yield path


def np_reduce(dat: np.ndarray, axis: Any, keepdims: bool, numpy_reduce_func: Callable[..., Any]) -> np.ndarray:
    """``numpy_reduce_func`` over ``axis`` (an int, a sequence, or None for all), one axis at
    a time from the last, with ``keepdims`` (MXNet's ``test_utils.np_reduce``)."""
    chosen = [axis] if isinstance(axis, (int, np.integer)) else (list(range(dat.ndim)) if axis is None else list(axis))
    result = dat
    for a in sorted(chosen, reverse=True):
        result = numpy_reduce_func(result, axis=a)
    if keepdims:
        result = np.asarray(result).reshape([1 if a in chosen else d for a, d in enumerate(dat.shape)])
    return result


def random_sample(population: Any, k: int) -> Any:
    """``k`` elements of ``population`` in random order (numpy's global stream)."""
    if not 0 <= k <= len(population):
        raise ValueError(f"random_sample: k={k} is not between 0 and {len(population)}")
    copy = population[:]
    np.random.shuffle(copy)
    return copy[:k]


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple[int, ...]:
    """A random shape of ``num_dim`` axes, each of size 1 (0 when allowed) to ``dim``."""
    return tuple(int(d) for d in np.random.randint(0 if allow_zero_size else 1, dim + 1, size=num_dim))


def random_arrays(*shapes: Any) -> Any:
    """Standard-normal float32 numpy arrays of ``shapes``; one shape gives one array."""
    arrays = [np.array(np.random.randn(), dtype=np.float32) if len(s) == 0 else np.random.randn(*s).astype(np.float32)
              for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "almost_equal", "array", "assert_almost_equal", "compare_ndarray_tuple",
           "default_dtype", "rand_shape_2d", "rand_shape_3d", "rand_sparse_ndarray", "random_seed",
           # what MXNet's tests take from ``from mxnet.test_utils import *`` (it has no __all__)
           "Context", "mx", "np", "os",
           "compare_optimizer", "default_context", "rand_ndarray", "same",
           "TemporaryDirectory", "assertRaises", "assert_exception", "assert_raises", "np_reduce", "rand_shape_nd",
           "random_arrays", "random_sample", "raises", "setup_module", "teardown", "with_seed"]


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
