"""Worker functions of test_shm_path.py (importable by the Ray workers, like workers.py)."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

import kvcli
from kvcli.store.device.shm import leftover_segments


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
        local = sorted(kv.backend._pools)  # which servers this worker reached through shared memory
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


def pull_spy(kv: Any) -> list[Any]:
    """Record the pull_many calls ``kv`` makes to its servers from now on (the list grows)."""
    asked: list[Any] = []
    invoke = kv.backend._invoke

    def spy(server: int, method: str, *args: Any) -> Any:
        if method == "pull_many":
            asked.append(args)
        return invoke(server, method, *args)

    kv.backend._invoke = spy
    return asked


def first_pusher_reads_counter() -> dict[str, Any]:
    """Two steps in which rank 0 pushes, rank 1 pushes (completing the step), then both
    pull: rank 0's pull finds the step applied in the server's counter."""
    with kvcli.create("dist_sync") as kv:
        kv.set_updater(accumulate)
        kv.init("w", np.zeros(2000, np.float32))
        kv.barrier()
        asked = pull_spy(kv)
        values = []
        for _ in range(2):
            if kv.rank == 0:
                kv.push("w", np.full(2000, 1.0, np.float32))
            kv.barrier()
            if kv.rank == 1:
                kv.push("w", np.full(2000, 2.0, np.float32))
            kv.barrier()
            pulled = kv.pull("w")
            assert (pulled == pulled[0]).all()
            values.append(float(pulled[0]))
        kv.barrier()
        return {"values": values, "pulls_asked": len(asked)}


def fails_on_twos(key: Any, pushed: np.ndarray, stored: np.ndarray) -> None:
    """An updater that fails when the step's sum holds a 2 (rank 1 pushes ones on top)."""
    if (pushed == 2).any():
        raise ValueError("two is not allowed")
    stored += pushed


def watch_a_failing_step() -> dict[str, Any]:
    """Rank 0 pushes and pulls at once; rank 1 pushes a moment later and the step's update
    fails: rank 0's pull must end with the error then, not at the timeout."""
    with kvcli.create("dist_sync", timeout=20) as kv:
        kv.set_updater(fails_on_twos)
        kv.init("w", np.zeros(100, np.float32))
        kv.barrier()
        error = ""
        start = time.monotonic()
        if kv.rank == 1:
            time.sleep(0.3)
            try:
                kv.push("w", np.ones(100, np.float32))
            except Exception:  # noqa: BLE001 - the pusher hears of it too
                pass
        else:
            kv.push("w", np.ones(100, np.float32))
            start = time.monotonic()
        try:
            kv.pull("w")
        except Exception as failure:  # noqa: BLE001 - the message is what is checked
            error = str(failure)
        seconds = time.monotonic() - start - (0.3 if kv.rank == 0 else 0.0)
        kv.barrier()
        return {"error": error, "seconds": seconds}
