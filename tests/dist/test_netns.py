"""dist_sync between two Ray nodes in network namespaces joined by a shaped link
(bench/netns.py): values cross a real (emulated) network, not one machine's object store.

Needs root and iproute2; without them the module is skipped with one line saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from bench.netns import RAY_ENV, netns_cluster, unavailable  # noqa: E402

pytestmark = pytest.mark.dist
pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")
REASON = unavailable()
if REASON is not None:
    pytest.skip(f"no namespace cluster: {REASON}", allow_module_level=True)


def namespaces() -> set[str]:
    return set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())


def test_two_namespaces_exact_sums_and_compressed_codes_across_the_link() -> None:
    before = namespaces()
    with netns_cluster(2, cpus=1, object_store_mib=200) as cluster:
        made = namespaces() - before
        assert set(cluster.namespaces) <= made
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        done = cluster.run(
            0, [sys.executable, str(HERE / "netns_job.py"), cluster.ray_address],
            capture_output=True, text=True, timeout=300, env={**os.environ, **RAY_ENV, "PYTHONPATH": path},
        )
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
    assert namespaces() & made == set()  # the context manager removed every namespace it made
    by_address = report["nodes"]
    head, other = by_address[cluster.addresses[0]], by_address[cluster.addresses[1]]
    results = {r["rank"]: r for r in report["results"]}
    assert results[0]["node"] == head and results[1]["node"] == other
    assert results[0]["servers"] == [head, other]  # the key's rows split over both nodes
    for rank in (0, 1):
        # sgd lr=0.5 on the sum of both ranks' pushes (1 + 2) per step, every element
        assert results[rank]["seen"] == [[-1.5], [-3.0], [-4.5]]
    for rank, result in enumerate(report["compressed"]):
        # 0.75 pushed with threshold 0.5: each rank sends the code of +0.5 (keeping 0.25);
        # step 2: 0.75 + 0.25 = 1.0 sends +0.5 again (keeping 0.5). Two ranks: 1.0 each step.
        assert result["rank"] == rank and result["servers"] == [head, other]
        assert result["seen"] == [[1.0], [1.0]]
    for workers, results in report["presum"].items():
        # W workers on node 1, the server on node 0: node 1 sums its pushes first and one
        # push per step crosses the link; the sum is the ranks' left to right, bit for bit
        assert [r["rank"] for r in results] == list(range(int(workers)))
        for result in results:
            assert result["exact"] == [True, True, True]
            assert result["received"] == 3  # 3 steps: one push each, whatever W
            assert result["applied"] == [3] * int(workers)
            assert result["puts"] == 0  # each step's result is the node's pre-sum, already there


def test_a_node_cut_off_mid_step_is_a_clear_error_on_every_rank(tmp_path: Path) -> None:
    # The link of node 1 (rank 1 and server 1) goes down between two steps: a network
    # partition, which a cluster of processes on one host cannot show. Ray declares the
    # node dead once it misses its health checks (here: 1 s apart, 1 s each, 5 missed, where
    # Ray's defaults take about 50 s); the job must
    # then fail on both ranks with the fix named, not wait for its 60 s timeout.
    flag = tmp_path / "flag"
    fast = {"RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000",
            "RAY_health_check_failure_threshold": "5"}
    with netns_cluster(2, cpus=1, object_store_mib=200, env=fast) as cluster:

        def cut_when_flagged() -> None:
            while not flag.exists():
                time.sleep(0.05)
            subprocess.run(["ip", "-n", cluster.namespaces[1], "link", "set", "eth0", "down"], check=True)

        threading.Thread(target=cut_when_flagged, daemon=True).start()
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        done = cluster.run(
            0, [sys.executable, str(HERE / "netns_job.py"), cluster.ray_address, str(flag)],
            capture_output=True, text=True, timeout=300, env={**os.environ, **RAY_ENV, **fast, "PYTHONPATH": path},
        )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    error = report["error"]
    assert error is not None and error.startswith("2 of 2 workers failed: "), error
    assert "rank 0: DistributedError" in error
    # rank 0 hears first either that rank 1 is gone (from server 0, which it waits on) or
    # that server 1 died with the node: both say what happened and what to do
    told = ("cannot complete step 2: rank 1 failed", "kvcli server 1: the actor died or is restarting")
    assert any(message in error for message in told), error
    assert "rank 1's worker process died" in error
    assert report["seconds"] < 60  # told once the node was declared dead, not timed out
