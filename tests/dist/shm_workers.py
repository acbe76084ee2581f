"""Worker functions of test_shm_path.py (importable by the Ray workers, like workers.py)."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

import kvcli
from kvcli.store.shm import leftover_segments


def accumulate(key: Any, pushed: np.ndarray, stored: np.ndarray) -> None:
    """An updater that keeps every step: stored += the step's sum."""
    stored += pushed


def pushes_without_pulls(steps: int) -> dict[str, Any]:
    """Each rank pushes ``steps`` times before one pull; rank 1 starts late, so rank 0's
    pushes wait on the server (in its push segments) for rank 1's."""
    with kvcli.create("dist_sync") as kv:
        kv.init(["a", "b"], [np.zeros(1000, np.float32), np.zeros((20, 50), np.float32)])
        kv.set_updater(accumulate)
        if kv.rank == 1:
            time.sleep(1.0)
        for step in range(1, steps + 1):
            value = float((kv.rank + 1) * step)
            kv.push(["a", "b"], [np.full(1000, value, np.float32), np.full((20, 50), value, np.float32)])
        pulled = kv.pull(["a", "b"])
        local = sorted(kv._pools)  # which servers this worker reached through shared memory
        kv.barrier()
        return {"a": pulled[0].tolist(), "b": pulled[1].tolist(), "local": local, "pid": os.getpid()}


def lockstep(steps: int) -> dict[str, Any]:
    """push; pull of 30 keys for ``steps`` steps; reports the segments this process made."""
    with kvcli.create("dist_sync") as kv:
        keys = list(range(30))
        kv.init(keys, [np.zeros(5000, np.float32) for _ in keys])
        outs = [np.empty(5000, np.float32) for _ in keys]
        sums = []
        for step in range(1, steps + 1):
            kv.push(keys, [np.full(5000, (kv.rank + 1) * step + k, np.float32) for k in keys])
            kv.pull(keys, out=outs)
            sums.append([float(o[0]) for o in outs])
        mine = leftover_segments(os.getpid())
        kv.barrier()
    return {"sums": sums, "segments": mine, "after_close": leftover_segments(os.getpid())}
