"""W = 2..4 workers launched on the session's Ray cluster: MXNet's dist semantics and faults."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

import workers  # noqa: E402  (tests/dist/workers.py: importable by the Ray workers too)

import kvcli  # noqa: E402
from kvcli.errors import DistributedError  # noqa: E402
from kvcli.store.ray.launch import launch  # noqa: E402
from kvcli.arrays.summation import sum_into  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.timeout(120)]


@pytest.mark.parametrize("num_workers", [2, 3, 4])
def test_sync_pull_sees_the_sum_of_all_workers(ray_cluster, num_workers):
    results = launch(workers.rank_sum, num_workers, args=("dist_sync", 3))
    total = sum(range(1, num_workers + 1))
    for rank, result in enumerate(results):
        assert result["rank"] == rank and result["num_workers"] == num_workers
        assert result["seen"] == [np.full((2, 3), total * (step + 1)).tolist() for step in range(3)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sync_sum_is_in_rank_order_bit_for_bit(ray_cluster, dtype):
    steps, num_workers = 3, 3
    results = launch(workers.exact_sum, num_workers, args=(steps, dtype), num_servers=2)
    pushes = [workers.random_pushes(rank, steps * 2, dtype) for rank in range(num_workers)]
    for step in range(steps):
        per_worker = [sum_into(np.empty((7, 5), dtype), p[2 * step : 2 * step + 2]) for p in pushes]
        expected = sum_into(np.empty((7, 5), dtype), per_worker)
        for seen in results:
            assert seen[step].tobytes() == expected.tobytes()


def test_async_applies_each_push_as_it_arrives(ray_cluster):
    first, second = launch(workers.async_order, 2)
    assert first["alone"] == [1.0] * 4  # rank 1 had not pushed yet
    total = 1 + 2 + 5 * 1 + 5 * 2
    assert first["final"] == second["final"] == [float(total)] * 4


@pytest.mark.parametrize("num_servers,bound", [(1, None), (2, 10)])
def test_optimizer_on_servers_matches_one_worker_with_the_summed_gradient(ray_cluster, tmp_path, num_servers, bound):
    spec, shape, steps = "sgd:lr=0.1,momentum=0.9,wd=0.01", (6, 4), 4
    state_file = str(tmp_path / "state.npz")
    results = launch(workers.optimizer_run, 2, args=(spec, shape, steps, bound, state_file), num_servers=num_servers)
    local = kvcli.create("local")
    local.set_optimizer(spec)
    local.init("w", np.ones(shape, np.float32))
    for step in range(steps):
        local.push("w", [workers.gradient(rank, step, shape) for rank in range(2)])
    expected = local.pull("w")
    for result in results:
        assert np.array_equal(result["weights"], expected)
    shapes = sorted(s["w"]["shape"] for s in results[0]["stats"] if "w" in s)
    assert shapes == ([(6, 4)] if bound is None else [(3, 4), (3, 4)])
    local.save_optimizer_states(tmp_path / "local.npz", dump_optimizer=True)
    with np.load(state_file) as got, np.load(tmp_path / "local.npz") as want:
        for name in want.files:
            assert np.array_equal(got[name], want[name]), name
    if bound is not None:  # resume from the gathered state on 2 workers, 2 servers
        resumed = launch(
            workers.resume_run, 2, args=(spec, shape, 2, steps, state_file, bound), num_servers=num_servers
        )
        for step in range(steps, steps + 2):
            local.push("w", [workers.gradient(rank, step, shape) for rank in range(2)])
        assert all(np.array_equal(r, local.pull("w")) for r in resumed)


def test_rank_num_workers_barrier_and_unknown_key(ray_cluster):
    results = launch(workers.membership, 3)
    local = kvcli.create("local")
    local.init([1, 2], [np.zeros(2), np.zeros(2)])
    with pytest.raises(Exception) as local_error:
        local.push(9, np.ones(2))
    for rank, result in enumerate(results):
        assert (result["rank"], result["num_workers"], result["keys"]) == (rank, 3, [1, 2])
        assert result["unknown"] == f"UnknownKeyError: {local_error.value}"


def test_init_with_another_shape_than_rank_0_is_refused(ray_cluster):
    first, second = launch(workers.mismatched_init, 2)
    assert first == "ok"
    assert second.startswith("ShapeMismatchError: init of key 'w' on rank 1")


def test_mixing_sync_and_async_workers_is_refused(ray_cluster):
    results = launch(workers.mixed_types, 2)
    assert any("every worker must create the same store type" in r for r in results)


def test_a_worker_that_dies_fails_the_others_at_once(ray_cluster):
    results = launch(workers.die_before_push, 2, args=(60.0,), return_exceptions=True)
    survivor, dead = results
    assert isinstance(dead, DistributedError) and "rank 1's worker process died" in str(dead)
    assert survivor["error"] is not None
    assert "key 'w'" in survivor["error"] and "rank 1 failed" in survivor["error"]
    assert survivor["seconds"] < 20  # the launcher told the servers: no waiting for the timeout


def test_launch_raises_for_a_dead_worker(ray_cluster):
    with pytest.raises(DistributedError, match=r"1 of 2 workers failed: rank 1: DistributedError"):
        launch(workers.die_before_push, 2, args=(60.0,))


def test_a_silent_worker_times_out_naming_the_key_and_rank(ray_cluster):
    results = launch(workers.skip_push, 2, args=(2.0,))
    error = results[0]["error"]
    assert error is not None and "timed out after 2s" in error
    assert "key 'w'" in error and "rank(s) [1]" in error
    assert 1.5 < results[0]["seconds"] < 10


def test_a_barrier_fails_at_once_when_a_rank_has_exited(ray_cluster):
    results = launch(workers.barrier_after_exit, 2, args=(60.0,))
    assert "rank 1 has finished" in results[0]["error"]
    assert results[0]["seconds"] < 20


def test_delete_is_collective(ray_cluster):
    results = launch(workers.collective_delete, 3, num_servers=2)
    for result in results:
        assert result["before"] == [6.0] * 4  # 1 + 2 + 3
        assert result["held"] == ["b"]  # "a" is gone from every server once delete returns
        assert result["unknown"] == "UnknownKeyError"
        assert result["after"] == [6.0] * 3  # re-init with another shape, then 3 workers push 2


def test_a_dead_coordinator_is_a_clear_error_on_every_rank(ray_cluster):
    for message in launch(workers.coordinator_killed, 2):
        assert re.match(r"barrier \d+: the actor died or is restarting \(", message)  # init has one too
        assert message.endswith(
            "the group's coordinator is gone and is not restarted (it alone knew which ranks joined "
            "and where each barrier stood): stop every worker and launch the job again"
        )
