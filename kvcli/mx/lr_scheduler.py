"""``mx.lr_scheduler``: MXNet 1.9.1's learning-rate schedules."""

from __future__ import annotations

from kvcli.optim.lr_scheduler import (
    CosineScheduler, FactorScheduler, LRScheduler, MultiFactorScheduler, PolyScheduler,
)
from kvcli.mx.scope import guard as _scope_guard

__all__ = ["CosineScheduler", "FactorScheduler", "LRScheduler", "MultiFactorScheduler", "PolyScheduler"]


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
