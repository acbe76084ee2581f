"""``mx.optimizer``: MXNet 1.9.1's optimizer module — the ``Optimizer`` base class, every
optimizer it registers, ``register`` / ``create``, ``Updater`` / ``get_updater``."""

from __future__ import annotations

from kvcli.optim import (
    DCASGD, FTML, LAMB, LARS, LBSGD, NAG, SGD, SGLD, AdaDelta, AdaGrad, Adam, Adamax, Ftrl, Nadam, Optimizer,
    RMSProp, Signum, Test, ccSGD, create_optimizer, register,
)
from kvcli.optim.updater import Updater as _NumpyUpdater
from kvcli.optim.views import array_views
from kvcli.mx.scope import guard as _scope_guard

create = create_optimizer


class Updater(_NumpyUpdater):
    """MXNet's ``Updater``: ``updater(index, grad, weight)`` creates each index's state on
    first use and calls ``optimizer.update_multi_precision``. ``states[index]`` holds what
    MXNet's holds: None, an NDArray, or tuples of them (``(weight32, state)`` for a float16
    weight under ``multi_precision``), each a view of the array the update writes in place."""

    def __init__(self, optimizer: Optimizer) -> None:
        super().__init__(optimizer, array_views())


def get_updater(optimizer: Optimizer) -> Updater:
    """MXNet's ``get_updater``: an :class:`Updater` that keeps one state per index."""
    return Updater(optimizer)


__all__ = [
    "DCASGD", "FTML", "LAMB", "LARS", "LBSGD", "NAG", "SGD", "SGLD", "AdaDelta", "AdaGrad", "Adam", "Adamax",
    "Ftrl", "Nadam", "Optimizer", "RMSProp", "Signum", "Test", "Updater", "ccSGD", "create", "get_updater", "register",
]


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
