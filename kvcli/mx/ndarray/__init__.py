"""``mx.nd`` / ``mx.ndarray``: MXNet's ndarray package, laid out as MXNet's.

:mod:`~kvcli.mx.ndarray.ndarray` (NDArray and the creation functions),
:mod:`~kvcli.mx.ndarray.functions` (reductions, maths, shape functions; also NDArray methods),
:mod:`~kvcli.mx.ndarray.ops` (MXNet's dtype and shape rules), :mod:`~kvcli.mx.ndarray.context`,
:mod:`~kvcli.mx.ndarray.sparse` (``nd.sparse``), :mod:`~kvcli.mx.ndarray.random`
(``nd.random``, imported on first use) and :mod:`~kvcli.mx.ndarray.io` (``.params`` files and
pickling, imported on first use). Every public name of ``ndarray`` and ``functions`` is here.

This package is the one place that assembles NDArray: the modules import ``ndarray`` and
never the other way round, and the methods that need them (``a.sum()``, ``a.tostype()``,
pickling) are attached here, as is the optimizer layer's view of NDArrays.
"""

from __future__ import annotations

from typing import Any

from kvcli.mx.ndarray import functions as _functions
from kvcli.mx.ndarray import ndarray as _ndarray
from kvcli.mx.ndarray import sparse as sparse
from kvcli.mx.ndarray.functions import *  # noqa: F403 - reductions, maths, shape functions
from kvcli.mx.ndarray.ndarray import *  # noqa: F403 - NDArray and the creation functions
from kvcli.mx.ndarray.ndarray import DEFAULT_DTYPE, DEVICE_MEMORY_MIN_BYTES  # noqa: F401 - read by the device store and tests
from kvcli.mx.ndarray.ndarray import NDArray, cpu
from kvcli.errors import NDArrayError
from kvcli.optim.views import install as _install_optimizer_views
from kvcli.mx.scope import guard as _scope_guard

zeros = sparse.nd_zeros  # type: ignore[assignment]  # nd.zeros takes stype= (the dense module's does not)


def empty(shape: Any, ctx: Any = None, dtype: Any = None, stype: str | None = None) -> Any:  # type: ignore[no-redef]
    """MXNet's ``nd.empty``: an uninitialised dense array, or with ``stype`` ('row_sparse',
    'csr') an empty sparse one (all zeros)."""
    if stype in (None, "default"):
        return _ndarray.empty(shape, ctx, DEFAULT_DTYPE if dtype is None else dtype)
    return sparse.empty(stype, shape, ctx, dtype)

# ---------------------------------------------------------------------- NDArray's methods from the other modules
for _name, _method in _functions.fluent_methods().items():
    setattr(NDArray, _name, _method)
NDArray.tostype = sparse.tostype_method  # type: ignore[attr-defined]
slice = sparse.slice  # noqa: A001 - MXNet's nd.slice: of a dense array too (numpy's selection, dense)
NDArray.slice = sparse.slice_method  # type: ignore[attr-defined]
NDArray.copyto = sparse.copyto_method(NDArray.copyto)  # type: ignore[method-assign]


def _sparse_reduce(self: Any) -> Any:
    """A sparse array pickles as its ``.params`` record (as MXNet's does)."""
    from kvcli.mx.ndarray import io as ndarray_io

    return (ndarray_io.array_from_bytes, (bytes(ndarray_io.array_to_bytes(self)),))


sparse.BaseSparseNDArray.__reduce__ = _sparse_reduce  # type: ignore[method-assign]


def _getstate(self: NDArray) -> dict[str, bytearray]:
    """Pickled as MXNet pickles an NDArray: ``{'handle': <the array's .params record>}``,
    so arrays pickled by MXNet load here and the other way round."""
    from kvcli.mx.ndarray import io as ndarray_io

    return {"handle": bytearray(ndarray_io.array_to_bytes(self))}


def _setstate(self: NDArray, state: dict[str, Any]) -> None:
    from kvcli.mx.ndarray import io as ndarray_io

    handle = state.get("handle") if isinstance(state, dict) else None
    if handle is None:
        raise NDArrayError("cannot unpickle an NDArray: the state has no 'handle' (MXNet's pickled form)")
    # MXNet 1.9.1 unpickles onto cpu(0) whatever context was pickled (recorded)
    self._data, self._ctx = ndarray_io.array_from_bytes(handle)._data, cpu(0)


_getstate.__name__, _setstate.__name__ = "__getstate__", "__setstate__"
setattr(NDArray, "__getstate__", _getstate)  # noqa: B010 - a method defined outside the class
setattr(NDArray, "__setstate__", _setstate)  # noqa: B010


# ---------------------------------------------------------------------- .params files (io, loaded on first use)
def save(fname: str, data: Any) -> None:
    """Write one NDArray, a list or a ``{name: NDArray}`` dict in MXNet's ``.params`` format."""
    from kvcli.mx.ndarray import io as ndarray_io

    ndarray_io.save(fname, data)


def load(fname: str) -> "list[NDArray] | dict[str, NDArray]":
    """Read a ``.params`` file written by MXNet or by :func:`save` (no pickle involved)."""
    from kvcli.mx.ndarray import io as ndarray_io

    return ndarray_io.load(fname)


def load_frombuffer(buf: bytes) -> "list[NDArray] | dict[str, NDArray]":
    """:func:`load` from bytes already in memory."""
    from kvcli.mx.ndarray import io as ndarray_io

    return ndarray_io.loads(buf)


class _OptimizerViews:
    """The NDArray views a user optimizer (``mx.optimizer.Optimizer`` subclass) works on."""

    def dense(self, array: Any, context: Any = None) -> Any:
        return NDArray(array, context)

    def row_sparse(self, value: Any) -> Any:
        return sparse.wrap(value)


# the optimizer layer is below this one and never imports it: it is handed the views instead
_install_optimizer_views(_OptimizerViews())

#: Submodules loaded on first use, by attribute (``nd.random``); ``import
#: kvcli.mx.ndarray.random`` works as for any package.
_SUBMODULES: dict[str, str] = {"random": "kvcli.mx.ndarray.random", "io": "kvcli.mx.ndarray.io"}

# nd.random and nd.io on first use; MXNet names kvcli does not provide raise their scope error
__getattr__ = _scope_guard("kvcli.mx.ndarray", _SUBMODULES, globals())
setattr(sparse, "__getattr__", _scope_guard(sparse.__name__))  # noqa: B010 - a module hook; nd.sparse has none of its own

# every nd function takes sparse arrays as MXNet does; sparse arrays get their methods
sparse.bind(globals(), _functions.fluent_methods(), NDArray)

__all__ = [  # noqa: F405 - random is loaded on first use
    *_ndarray.__all__,
    *(name for name in _functions.__all__ if name not in ("MATH_NAMES", "BINARY_NAMES")),
    "load", "load_frombuffer", "random", "save", "slice", "sparse",
]
