"""``mx.util``: MXNet's switches for NumPy shape semantics, in their MXNet 1.x default.

kvcli.mx follows MXNet 1.x's legacy shapes: ``is_np_shape()`` is False, and ``np_shape(False)``
/ ``set_np_shape(False)`` keep it so. Turning NumPy shape semantics on (``np_shape()``,
``set_np_shape(True)``, ``use_np_shape``) is outside kvcli's scope and raises, naming it,
rather than computing with other shape rules than the ones asked for.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from kvcli.errors import OutOfScopeError
from kvcli.mx.scope import guard as _scope_guard

_NP_SHAPE_ADVICE = ("NumPy shape semantics (mx.np_shape / set_np_shape(True) / use_np_shape) is outside kvcli's "
                    "scope: kvcli.mx follows MXNet 1.x's legacy shapes (is_np_shape() is False); drop the call, "
                    "or run code that needs it with MXNet itself")


def _refuse(name: str) -> OutOfScopeError:
    return OutOfScopeError(_NP_SHAPE_ADVICE, module="mxnet.util", name=name)


def is_np_shape() -> bool:
    """Whether NumPy shape semantics is on: never in kvcli.mx (MXNet 1.x's default)."""
    return False


def set_np_shape(active: bool) -> bool:
    """``set_np_shape(False)`` keeps MXNet 1.x's shapes and returns the previous state (False);
    ``True`` is refused (outside kvcli's scope)."""
    if active:
        raise _refuse("set_np_shape")
    return False


class _NumpyShapeScope:
    """``with np_shape(False):`` (a no-op, the state being off already)."""

    def __init__(self, active: bool | None) -> None:
        if active:
            raise _refuse("np_shape")

    def __enter__(self) -> "_NumpyShapeScope":
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def np_shape(active: bool = True) -> _NumpyShapeScope:
    """MXNet's scope for NumPy shape semantics: ``np_shape(False)`` works (it is off already);
    ``np_shape()`` / ``np_shape(True)`` is refused (outside kvcli's scope)."""
    return _NumpyShapeScope(active)


def use_np_shape(func: Callable[..., Any]) -> Callable[..., Any]:
    """MXNet's decorator that runs ``func`` with NumPy shape semantics: refused when called."""

    @functools.wraps(func)
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise _refuse("use_np_shape")

    return refused


def get_gpu_count() -> int:
    """The number of GPUs kvcli uses: 0 (it computes on the CPU)."""
    return 0


__all__ = ["get_gpu_count", "is_np_shape", "np_shape", "set_np_shape", "use_np_shape"]


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
