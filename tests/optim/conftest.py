"""Shared helpers of the optimizer tests: the recorded MXNet 1.9.1 reference and a stand-in
row-sparse gradient (the duck-typed protocol the optimizers accept)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REFERENCE_FILE = Path(__file__).parents[1] / "data" / "mxnet_optimizers_reference.json"
if not REFERENCE_FILE.exists():  # say so loudly: these tests need the recorded numbers
    raise FileNotFoundError(
        f"{REFERENCE_FILE} is missing: record it with mxnet 1.9.1: $MXNET_PYTHON tests/data/make_mxnet_optimizer_reference.py"
    )
REFERENCE: dict[str, Any] = json.loads(REFERENCE_FILE.read_text())


@dataclass
class RowSparse:
    """A row-sparse gradient: sorted unique row ids, their rows, and the full shape."""

    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, ...]


def flatten_state(state: Any) -> list[Any]:
    """A raw MXNet-style state (None / array / nested tuples) as the generator flattens it."""
    if state is None:
        return [None]
    if isinstance(state, (tuple, list)):
        return [leaf for item in state for leaf in flatten_state(item)]
    return [np.asarray(state)]


def state_arrays(state: Any) -> list[np.ndarray]:
    """An optimizer state made of NDArrays (None / NDArray / nested tuples) as numpy arrays,
    leaves in order (a None state has none)."""
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [leaf for item in state for leaf in state_arrays(item)]
    return [state.asnumpy()]


def kwargs_of(scenario: dict[str, Any]) -> dict[str, Any]:
    """The recorded keyword arguments as kvcli objects (schedules built, names keyed by int)."""
    from kvcli.mx import lr_scheduler

    kinds = {
        "factor": lr_scheduler.FactorScheduler, "multifactor": lr_scheduler.MultiFactorScheduler,
        "poly": lr_scheduler.PolyScheduler, "cosine": lr_scheduler.CosineScheduler,
    }
    kwargs = dict(scenario["kwargs"])
    if "lr_scheduler" in kwargs:
        sched = dict(kwargs["lr_scheduler"])
        kwargs["lr_scheduler"] = kinds[sched.pop("type")](**sched)
    if "param_idx2name" in kwargs:
        kwargs["param_idx2name"] = {int(k): v for k, v in kwargs["param_idx2name"].items()}
    return kwargs


@pytest.fixture(params=["local", "device"])
def store_type(request: pytest.FixtureRequest) -> str:
    return request.param
