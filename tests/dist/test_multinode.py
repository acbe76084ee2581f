"""dist_sync across two Ray nodes (each with its own object store): servers on one node,
workers split over both; results equal one node's, and a node lost mid-step (a worker's, or
the servers' own) is a clear error on the workers, not a hang."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
NO_RAY = "Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests"

pytestmark = pytest.mark.dist


def run_job(mode: str, tmp_path: Path) -> dict:
    pytest.importorskip("ray", reason=NO_RAY)
    result = subprocess.run(
        [sys.executable, str(HERE / "multinode_job.py"), mode, str(tmp_path / "flag")],
        capture_output=True, text=True, timeout=240,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_servers_on_one_node_workers_on_two(tmp_path: Path) -> None:
    report = run_job("results", tmp_path)
    nodes = report["nodes"]
    assert nodes["head"] != nodes["other"]
    by_rank = {r["rank"]: r for r in report["results"]}
    assert by_rank[0]["node"] == nodes["head"] and by_rank[1]["node"] == nodes["other"]
    assert set(by_rank[0]["servers"]) == {nodes["head"]}
    # sgd lr=0.5 on the sum of both ranks' pushes (1 + 2 = 3) per step: 0 - 1.5 * step
    for rank in (0, 1):
        assert by_rank[rank]["seen"] == [-1.5, -3.0, -4.5]


def test_a_worker_node_removed_mid_step_fails_the_job_clearly(tmp_path: Path) -> None:
    report = run_job("fault", tmp_path)
    error = report["error"]
    assert error is not None and error.startswith("2 of 2 workers failed: ")
    assert "rank 1: " in error and "rank 0: DistributedError" in error
    assert "cannot complete step 2: rank 1 failed" in error
    assert report["seconds"] < 90  # the other rank was told, not left to time out


def test_the_servers_node_removed_mid_step_is_a_clear_error_on_every_rank(tmp_path: Path) -> None:
    # Servers alone on a third node; removing it makes Ray restart (or try to restart) them
    # without their values: every rank must say so, name the fix, and not wait for a timeout.
    report = run_job("serverfault", tmp_path)
    error = report["error"]
    assert error is not None and error.startswith("2 of 2 workers failed: ")
    assert "rank 0: DistributedError" in error and "rank 1: DistributedError" in error
    assert error.count("kvcli server 0: the actor died or is restarting") == 2
    assert error.count("call init(...) again on every worker") == 2
    assert report["seconds"] < 45  # told, not left to the 60 s timeout


def run_presum(mode: str) -> dict:
    pytest.importorskip("ray", reason=NO_RAY)
    result = subprocess.run(
        [sys.executable, str(HERE / "multinode_job.py"), mode], capture_output=True, text=True, timeout=240,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_each_node_presums_its_workers_and_the_server_gets_one_push_per_node_per_step() -> None:
    # servers on the head node; ranks 0-1 on node a, ranks 2-3 on node b (three Ray nodes)
    report = run_presum("presum")
    assert report["error"] is None
    nodes = report["nodes"]
    by_rank = {r["rank"]: r for r in report["results"]}
    assert [by_rank[r]["node"] for r in range(4)] == [nodes["a"]] * 2 + [nodes["b"]] * 2
    for rank in range(4):
        # bit for bit (v0 + v1) + (v2 + v3): each node's sum in rank order, then the nodes;
        # the data are chosen so that ((v0 + v1) + v2) + v3 differs in the last bits
        assert by_rank[rank]["exact"] == [True] * 3
        assert by_rank[rank]["order_matters"] == [True] * 3
        assert by_rank[rank]["received"] == 2 * 3  # 2 nodes x 3 steps, not 4 workers x 3
        assert by_rank[rank]["applied"] == [3, 3, 3, 3]
    for result in report["compressed"]:
        # 2-bit pushes stay per worker (each with its own residual; only codes cross):
        # 4 ranks x +0.5 per step, and the server got 4 pushes per step
        assert result["seen"] == [[2.0], [2.0]]
        assert result["received"] == 4 * 2
    for result in report["sparse"]:
        # row-sparse pushes stay per worker (4 per step), the dense key beside them in the
        # same push is pre-summed (2 per step); row r holds rank r's r + 1, row 10 all four
        assert result["rows"] == [[[0, 1, 2, 3, 10], [1.0, 2.0, 3.0, 4.0, 10.0]]] * 2
        assert result["dense"] == [[10.0], [10.0]]
        assert result["received"] == {"s": 4 * 2, "d": 2 * 2}


def test_presum_through_the_object_store_two_workers_on_one_node() -> None:
    # KVCLI_DIST_NO_SHM=1: the workers hand their pushes to the aggregator by reference
    report = run_presum("presum2")
    assert report["error"] is None
    for result in report["results"]:
        assert result["exact"] == [True] * 3
        assert result["received"] == 3  # one push per step for the node's two workers
        assert result["applied"] == [3, 3]


def test_a_worker_of_a_presumming_node_dying_mid_job_is_a_clear_error() -> None:
    report = run_presum("presum-die")
    error = report["error"]
    assert error is not None and error.startswith("4 of 4 workers failed: "), error
    for rank in (0, 1, 2):  # rank 2 shares rank 3's aggregator: told the same way
        # the missing rank named is 3, or one that failed just before because of it (the
        # others' errors race); either way rank 3's death is in each message
        assert f"rank {rank}: DistributedError: dist_sync pull of key 'w' cannot complete step 2: rank " in error
    assert error.count("rank 3's worker process died") >= 4
    assert report["seconds"] < 45  # told, not left to the 60 s timeout
