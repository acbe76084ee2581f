"""``mx.optimizer``: MXNet's SGD and Adam with MXNet's keyword names."""

from __future__ import annotations

from kvcli.updaters import SGD, Adam, Optimizer, create_optimizer

create = create_optimizer

__all__ = ["SGD", "Adam", "Optimizer", "create"]
