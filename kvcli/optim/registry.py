"""Every registered optimizer by name: kvcli's built-ins (imported here, on first use) and
the user's (:func:`kvcli.optim.base.register`). Above the optimizer modules, below
:mod:`kvcli.optim.spec`, which parses names through it."""

from __future__ import annotations

from typing import Any

from kvcli.optim.base import REGISTRY, Optimizer, register

__all__ = ["Optimizer", "builtin_optimizers", "create", "register", "registered"]


def registered() -> dict[str, type[Optimizer]]:
    """Name -> class of every registered optimizer (built-ins first, in registration order)."""
    # The built-ins register when their modules are imported; importing them only when an
    # optimizer is asked for keeps one-shot commands with a plain updater fast.
    import kvcli.optim.adaptive  # noqa: F401
    import kvcli.optim.sgd  # noqa: F401

    return dict(REGISTRY)


#: Built-ins registered (and created by name) as in MXNet 1.9.1 but never offered in lists
#: (``set-updater`` help, completion, suggestions): MXNet's internal ``test`` optimizer, which
#: its own KVStore tests set.
UNOFFERED = frozenset({"test"})


def builtin_optimizers() -> dict[str, type[Optimizer]]:
    """The optimizers kvcli ships and offers (user registrations and :data:`UNOFFERED` excluded)."""
    return {n: c for n, c in registered().items() if c.__module__.startswith("kvcli.optim") and n not in UNOFFERED}


def create(name: str, **kwargs: Any) -> Optimizer:
    """Instantiate a registered optimizer by (case-insensitive) name: ``create('nag', momentum=0.9)``."""
    registered()
    return Optimizer.create_optimizer(name, **kwargs)
