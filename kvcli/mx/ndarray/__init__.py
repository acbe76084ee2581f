"""``mx.nd`` / ``mx.ndarray``: MXNet's ndarray package, laid out as MXNet's.

:mod:`~kvcli.mx.ndarray.ndarray` (NDArray and the creation functions),
:mod:`~kvcli.mx.ndarray.functions` (reductions, maths, shape functions; also NDArray methods),
:mod:`~kvcli.mx.ndarray.ops` (MXNet's dtype and shape rules), :mod:`~kvcli.mx.ndarray.context`,
:mod:`~kvcli.mx.ndarray.sparse` (``nd.sparse``), :mod:`~kvcli.mx.ndarray.random`
(``nd.random``, imported on first use) and :mod:`~kvcli.mx.ndarray.io` (``.params`` files and
pickling, imported on first use). Every public name of ``ndarray`` and ``functions`` is here.
"""

from __future__ import annotations

from typing import Any

from kvcli._lazy import submodule_getattr
from kvcli.mx.ndarray import ndarray as _ndarray
from kvcli.mx.ndarray.ndarray import *  # noqa: F403 - the nd namespace (functions adds its names to it)
from kvcli.mx.ndarray.ndarray import DEFAULT_DTYPE, DEVICE_MEMORY_MIN_BYTES  # noqa: F401 - read by the device store and tests
from kvcli.optim.views import install as _install_optimizer_views

#: Submodules loaded on first use, by attribute (``nd.random``); ``import
#: kvcli.mx.ndarray.random`` works as for any package.
_SUBMODULES: dict[str, str] = {"random": "kvcli.mx.ndarray.random", "io": "kvcli.mx.ndarray.io"}



class _OptimizerViews:
    """The NDArray views a user optimizer (``mx.optimizer.Optimizer`` subclass) works on."""

    def dense(self, array: Any, context: Any = None) -> Any:
        return NDArray(array, context)  # noqa: F405 - from ndarray

    def row_sparse(self, value: Any) -> Any:
        from kvcli.mx.ndarray.sparse import wrap

        return wrap(value)


# the optimizer layer is below this one and never imports it: it is handed the views instead
_install_optimizer_views(_OptimizerViews())

__getattr__ = submodule_getattr("kvcli.mx.ndarray", _SUBMODULES, globals())

__all__ = [*_ndarray.__all__, "random"]  # noqa: F405 - random is loaded on first use
