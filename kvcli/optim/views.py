"""How a user's optimizer sees arrays: MXNet code written against ``mx.optimizer.Optimizer``
gets kvcli NDArrays (``weight[:] += ...``), kvcli's own optimizers work on numpy.

The optimizer package sits below the MXNet layer and never imports it: ``kvcli.mx.ndarray``
installs its views here when it is imported (:func:`install`). A user optimizer class always
comes from code that imported ``kvcli.mx`` (``mx.optimizer.Optimizer`` is its base), so the
views are there by the time one runs. A user optimizer also keeps the views it was made with
(:meth:`kvcli.optim.base.Optimizer.array_views`): pickled to another process (a dist server),
it names them, and unpickling it loads the MXNet layer there.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from kvcli.arrays.sparse import RowSparse
from kvcli.errors import UpdaterError


class ArrayViews(Protocol):
    """What the MXNet layer provides: NDArray views of numpy buffers and row-sparse values."""

    def dense(self, array: np.ndarray, context: Any = None) -> Any:
        """An NDArray over ``array`` (a view: writing it writes ``array``) on ``context``."""

    def row_sparse(self, value: RowSparse) -> Any:
        """A row-sparse NDArray over a store's row-sparse ``value`` (a view)."""


_installed: list[ArrayViews] = []


def install(views: ArrayViews) -> None:
    """Use ``views`` for user optimizers (the MXNet layer calls this once, on import)."""
    _installed[:] = [views]


def installed() -> bool:
    """Whether the MXNet layer has installed its views in this process."""
    return bool(_installed)


def array_views() -> ArrayViews:
    """The installed views; refused with the fix when the MXNet layer was never imported."""
    if not _installed:
        raise UpdaterError(
            "a user optimizer works on MXNet NDArrays: subclass kvcli.mx.optimizer.Optimizer "
            "(import kvcli.mx as mx; class MyOpt(mx.optimizer.Optimizer)) so the NDArray layer is loaded"
        )
    return _installed[0]
