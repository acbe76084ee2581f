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


__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "almost_equal", "assert_almost_equal", "default_context", "rand_ndarray", "same"]
