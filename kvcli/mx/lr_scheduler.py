"""``mx.lr_scheduler``: MXNet 1.9.1's learning-rate schedules."""

from __future__ import annotations

from kvcli.optim.lr_scheduler import (
    CosineScheduler, FactorScheduler, LRScheduler, MultiFactorScheduler, PolyScheduler,
)

__all__ = ["CosineScheduler", "FactorScheduler", "LRScheduler", "MultiFactorScheduler", "PolyScheduler"]
