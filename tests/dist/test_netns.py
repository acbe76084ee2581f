"""dist_sync between two Ray nodes in network namespaces joined by a shaped link
(bench/netns.py): values cross a real (emulated) network, not one machine's object store.

Needs root and iproute2; without them the module is skipped with one line saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
