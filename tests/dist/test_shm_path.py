"""The node-local shared-memory data path (kvcli.store.ray.shm) against the object store."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

import shm_workers  # noqa: E402  (tests/dist/shm_workers.py: importable by the Ray workers too)

import kvcli  # noqa: E402
from kvcli.store.ray.shm import POOL_SEGMENTS, ShmPart  # noqa: E402
from kvcli.store.ray.launch import launch  # noqa: E402
from kvcli.store.device.shm import leftover_segments  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.timeout(120)]


def _run(kind: str, steps: int = 4) -> tuple[list[list[float]], bool, Any]:
    keys = [0, 1, 2]
    shapes = [(3,), (64, 32), (300, 500)]  # key 2 is split over the two servers by rows
    with kvcli.create(kind, num_servers=2, bigarray_bound=100_000) as kv:
        kv.init(keys, [np.zeros(s, np.float32) for s in shapes])
        seen = []
        for step in range(1, steps + 1):
            # two devices per push: the worker sums them, then sends the sum
            kv.push(keys, [[np.full(s, step, np.float32), np.full(s, 0.5, np.float32)] for s in shapes])
            seen.append([float(v.sum()) for v in kv.pull(keys)])
        answer = kv.backend._call(kv.backend._servers[0].pull_many.remote(0, [(0, steps)], 5.0, True), "test pull")[0]
        return seen, bool(kv.backend._pools), answer


def test_same_node_sync_uses_shared_memory_and_matches_the_object_store(ray_cluster, monkeypatch):
    fast, used, answer = _run("dist_sync")
    assert used and isinstance(answer, ShmPart)
    monkeypatch.setenv("KVCLI_DIST_NO_SHM", "1")
    slow, used_slow, answer_slow = _run("dist_sync")
    assert not used_slow
    assert fast == slow
    sizes = [3, 64 * 32, 300 * 500]
    assert fast[-1] == [4.5 * n for n in sizes]
    assert isinstance(answer_slow, ShmPart)  # the server holds it there; this worker just does not map it


def test_async_pulls_come_through_the_object_store(ray_cluster):
    seen, used, answer = _run("dist_async")
    assert used  # pushes go through shared memory
    assert not isinstance(answer, ShmPart) and np.asarray(answer).tolist() == [4.5] * 3
    assert seen[-1][0] == 4.5 * 3


def test_pushes_that_wait_on_the_server_are_not_overwritten(ray_cluster):
    steps = POOL_SEGMENTS + 3  # more unapplied pushes than a pool has segments
    results = launch(shm_workers.pushes_without_pulls, 2, args=(steps,))
    total = 3 * steps * (steps + 1) / 2  # sum over steps of (1 + 2) * step
    for result in results:
        assert result["local"] == [0]
        assert result["a"] == [total] * 1000
        assert np.array(result["b"]).tolist() == np.full((20, 50), total).tolist()


def test_lockstep_sums_and_no_segment_left_behind(ray_cluster):
    before = set(leftover_segments())
    results = launch(shm_workers.lockstep, 3, args=(5,))
    for result in results:
        assert result["sums"] == [[float(6 * step + 3 * k) for k in range(30)] for step in range(1, 6)]
        assert result["segments"], "the workers used no push segment"
        assert result["after_close"] == []
    deadline = time.monotonic() + 10
    while set(leftover_segments()) - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert set(leftover_segments()) - before == set()


def test_a_lone_store_frees_its_and_its_servers_segments(ray_cluster):
    before = set(leftover_segments())
    with kvcli.create("dist_sync") as kv:
        kv.init("w", np.zeros(10_000, np.float32))
        kv.push("w", np.ones(10_000, np.float32))
        assert (kv.pull("w") == 1).all()
        assert set(leftover_segments()) - before  # the worker's push segment and the server's arena
    assert set(leftover_segments()) - before == set()


def test_a_push_that_completes_the_step_lets_the_next_pull_skip_the_server(ray_cluster):
    with kvcli.create("dist_sync") as kv:
        kv.set_updater(shm_workers.accumulate)
        kv.init("w", np.zeros(1000, np.float32))
        kv.push("w", np.full(1000, 2.0, np.float32))  # one worker: its push completes step 1
        asked = shm_workers.pull_spy(kv)
        assert (kv.pull("w") == 2).all() and asked == []  # read where the server keeps it
        assert (kv.pull("w") == 2).all() and len(asked) == 1  # once only: then the server is asked
        kv.push("w", np.full(1000, 1.0, np.float32))
        assert (kv.pull("w") == 3).all() and len(asked) == 1
        kv.init("w", np.ones(1000, np.float32))  # a re-init: the value lies elsewhere now
        assert (kv.pull("w") == 1).all() and len(asked) == 2
        kv.push("w", np.full(1000, 1.0, np.float32))
        assert (kv.pull("w") == 2).all() and len(asked) == 2  # and is learnt again


def test_a_rank_that_pushed_first_reads_the_step_from_its_counter(ray_cluster):
    results = launch(shm_workers.first_pusher_reads_counter, 2)
    for rank, result in enumerate(results):
        assert result["values"] == [1.0 + 2.0, 2 * (1.0 + 2.0)]  # rank 0's pushes 1, rank 1's 2, per step
    # rank 0 pushed first both times and read the step's sum from the counter, no call;
    # rank 1's push completed the step, whose answer said so: no call either
    assert [r["pulls_asked"] for r in results] == [0, 0]


def test_a_failed_update_reaches_the_rank_that_waits_for_the_step(ray_cluster):
    results = launch(shm_workers.watch_a_failing_step, 2)
    for result in results:
        assert "updater failed" in result["error"] and "step 1" in result["error"]
    assert results[0]["seconds"] < 5.0  # as soon as rank 1's push failed, not at the timeout (20 s)
