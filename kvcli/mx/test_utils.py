"""``mx.test_utils``: the helpers MXNet's own tests use, for NDArrays and numpy arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from kvcli.nd_context import Context, current_context

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


__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "almost_equal", "assert_almost_equal", "default_context", "same"]
