"""The Python operators of a sparse NDArray, as MXNet's Python code defines them.

MXNet's ``BaseSparseNDArray`` sends ``+ - *`` to ``nd.sparse.add / subtract / multiply``
(``elemwise_*`` for two arrays of one shape); everything else is NDArray's operator, i.e. the
dense ``nd`` function (``x / y`` is ``nd.divide``, ``x == y`` is ``nd.equal``, ``-x`` is
``x * -1``), each with MXNet's storage-type inference (:mod:`.functions`). So ``x == y`` is an
elementwise array (dense, or sparse where MXNet's kernel keeps zeros: ``x == 1``), never a
Python bool. A dense array on the left (``dense * x``) gives what MXNet's dense operator gives.
"""

from __future__ import annotations

from typing import Any, Callable

from kvcli.mx.ndarray.ndarray import NDArray
from kvcli.mx.ndarray.sparse import functions
from kvcli.mx.ndarray.sparse.base import BaseSparseNDArray, is_sparse


def _nd(name: str) -> Callable[..., Any]:
    return functions.sparse_aware(name, functions.dense_function(name))


def _forward(name: str) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        return _nd(name)(self, other)

    return method


def _reflected(name: str) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        return _nd(name)(other, self)

    return method


def _sparse_first(pair: Callable[[Any, Any], Any], dense_name: str) -> Callable[[Any, Any], Any]:
    """MXNet's ``other + x``: a number goes to ``x.__add__`` (``NDArray.__radd__``), a dense
    array on the left uses its own (dense) operator."""

    def method(self: Any, other: Any) -> Any:
        if isinstance(other, NDArray) and not is_sparse(other):
            return _nd(dense_name)(other, self)
        return pair(self, other)

    return method


OPERATORS: dict[str, Callable[..., Any]] = {
    "__add__": functions.add, "__sub__": functions.subtract, "__mul__": functions.multiply,
    "__radd__": _sparse_first(functions.add, "add"), "__rmul__": _sparse_first(functions.multiply, "multiply"),
    "__truediv__": _forward("divide"), "__rtruediv__": _reflected("divide"), "__rsub__": _reflected("subtract"),
    "__pow__": _forward("power"), "__rpow__": _reflected("power"), "__mod__": _forward("modulo"),
    "__rmod__": _reflected("modulo"), "__eq__": _forward("equal"), "__ne__": _forward("not_equal"),
    "__gt__": _forward("greater"), "__ge__": _forward("greater_equal"), "__lt__": _forward("lesser"),
    "__le__": _forward("lesser_equal"),
    "__neg__": lambda self: functions.multiply(self, -1.0), "__abs__": lambda self: _nd("abs")(self),
}


def install() -> None:
    """Attach the operators to :class:`BaseSparseNDArray`."""
    for name, method in OPERATORS.items():
        setattr(BaseSparseNDArray, name, method)
    BaseSparseNDArray.__hash__ = lambda self: id(self) // 16  # type: ignore[method-assign]  # __eq__ set: keep hashing


__all__ = ["OPERATORS", "install"]
