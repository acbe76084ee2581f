"""``nd.sparse``: MXNet's sparse NDArrays (``row_sparse`` and ``csr``) and the operators on them.

``RowSparseNDArray`` and ``CSRNDArray`` are NDArrays (:mod:`.base`, :mod:`.rowsparse`,
:mod:`.csr`); they are made by :mod:`.create` (``row_sparse_array``, ``csr_matrix``,
``zeros``, ``empty``, ``array``, ``cast_storage``). The operators follow MXNet's storage-type
inference (:mod:`.functions`, on the kernels of :mod:`.kernels`): every ``nd`` function takes
sparse inputs and gives MXNet's storage type, and this namespace holds the names MXNet's
``nd.sparse`` has (``dot``, ``retain``, ``slice``, ``concat``, ``norm``, ``elemwise_add``,
``sqrt``, ...), each the same operator as ``nd.<name>``. The package ``kvcli.mx.ndarray``
fills in the ``nd`` functions (:func:`bind`) once they are all defined.
"""

from __future__ import annotations

from typing import Any, Callable

from kvcli.errors import SparseUnsupportedError
from kvcli.mx.ndarray.context import Context, current_context
from kvcli.mx.ndarray.ndarray import NDArray
from kvcli.mx.ndarray.sparse import operators as _operators
from kvcli.mx.ndarray.sparse.base import STYPES, BaseSparseNDArray, install_methods, is_sparse, seal
from kvcli.mx.ndarray.sparse.create import (
    array,
    cast_storage,
    copyto_method as copyto_method,
    csr_matrix,
    empty,
    nd_zeros as nd_zeros,
    row_sparse_array,
    tostype,
    tostype_method as tostype_method,
    wrap,
    zeros,
)
from kvcli.mx.ndarray.sparse.csr import CSRNDArray
from kvcli.mx.ndarray.sparse.functions import add, divide, dot, multiply, retain, slice, sparse_aware, subtract
from kvcli.mx.ndarray.sparse.rowsparse import RowSparseNDArray

#: MXNet's name of the error for what sparse arrays do not support.
NotSupportedForSparseNDArray = SparseUnsupportedError
#: ``nd`` functions that ``nd.sparse`` also holds in MXNet 1.9.1 (the same operators), as kvcli has them.
ND_NAMES = (
    "abs", "add_n", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "broadcast_add", "broadcast_div",
    "broadcast_minus", "broadcast_mul", "broadcast_plus", "broadcast_sub", "cbrt", "ceil", "clip", "concat", "cos",
    "cosh", "degrees", "elemwise_add", "elemwise_div", "elemwise_mul", "elemwise_sub", "exp", "expm1", "fix", "floor",
    "gamma", "gammaln", "log", "log10", "log1p", "log2", "mean", "negative", "norm", "radians", "relu", "rint", "round",
    "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "square", "sum", "tan", "tanh", "trunc", "where", "zeros_like",
    "ElementWiseSum",
)

_operators.install()


def bind(namespace: dict[str, Any], fluent: dict[str, Callable[..., Any]], dense_class: type) -> None:
    """Make every function of the ``nd`` namespace sparse-aware (in place), give this module
    the ``nd`` names MXNet's ``nd.sparse`` has, and the sparse arrays their methods."""
    for name, value in list(namespace.items()):
        if callable(value) and not isinstance(value, type) and getattr(value, "__module__", "").startswith(
                ("kvcli.mx.ndarray.functions", "kvcli.mx.ndarray.ndarray")) and not name.startswith("_"):
            namespace[name] = sparse_aware(name, value)
    for name in ND_NAMES:
        if name in namespace:
            globals()[name] = namespace[name]
    install_methods({name: _method(namespace[name]) for name in (*fluent, "abs", "slice") if name in namespace})
    seal(dense_class)


def slice_method(self: NDArray, *args: Any, **kwargs: Any) -> NDArray:
    """``nd.slice(self, begin, end, step)``."""
    return slice(self, *args, **kwargs)


def _method(function: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return function(self, *args, **kwargs)

    method.__name__ = function.__name__
    method.__doc__ = f"``nd.{function.__name__}(self, ...)``, with MXNet's storage type for a sparse array."
    return method


__all__ = [
    "BaseSparseNDArray", "CSRNDArray", "Context", "NDArray", "NotSupportedForSparseNDArray", "RowSparseNDArray",
    "STYPES", "add", "array", "cast_storage", "csr_matrix", "current_context", "divide", "dot", "empty", "is_sparse",
    "multiply", "retain", "row_sparse_array", "slice", "slice_method", "subtract", "tostype", "wrap", "zeros",
    *ND_NAMES,
]
