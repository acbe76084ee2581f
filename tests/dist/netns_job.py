"""A kvcli job on a namespace cluster (bench/netns.py), run inside node 0's namespace:

    python netns_job.py RAY_ADDRESS [FLAG_FILE]

With FLAG_FILE: rank 1 creates it before its second step, the test cuts node 1's link
then, and the job reports the error the workers got and how long it took.

Servers on node 0 and node 1 (one each: a 2 MiB key is split over both by rows), rank 0
on node 0 and rank 1 on node 1, so every push and pull has a share that crosses the
shaped link. Prints one JSON line for tests/dist/test_netns.py.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

import numpy as np

ROWS, COLS = 1024, 512  # 2 MiB of float32: above the inline limit and the bigarray bound


def train(steps: int, compressed: bool, flag: str = "") -> dict:
    """Per step each rank pushes rank+1 (sgd lr=0.5: 0 - 1.5 per step); or, ``compressed``,
    2-bit compression with threshold 0.5: each rank pushes 0.75, the servers get only
    codes of +0.5 and sum them (no optimizer: the sum is assigned)."""
    import ray

    import kvcli

    seen = []
    with kvcli.create("dist_sync", bigarray_bound=1000) as kv:
        if compressed:
            kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
        kv.init("w", np.zeros((ROWS, COLS), np.float32))
        if not compressed:
            kv.set_optimizer("sgd:lr=0.5")
        for step in range(steps):
            if flag and kv.rank == 1 and step == 1:
                open(flag, "w").close()
                time.sleep(5)  # the test cuts this node's link now
            value = 0.75 if compressed else kv.rank + 1
            kv.push("w", np.full((ROWS, COLS), value, np.float32))
            seen.append(sorted(set(np.unique(kv.pull("w")).tolist())))
        servers = ray.get([s.ping.remote() for s in kv.backend._servers])
        return {
            "rank": kv.rank,
            "node": ray.get_runtime_context().get_node_id(),
            "servers": [p["node"] for p in servers],
            "seen": seen,
        }


def presum(steps: int) -> dict:
    """Every rank (all on node 1, the server on node 0) pushes fractions of its own; the
    pull must equal their float32 sum left to right in rank order, bit for bit, and the
    server must have received one push per step (the node's pre-sum), not one per rank,
    and answered each step with that pushed object (no updater): no copy put, none sent back."""
    import kvcli

    def pushed(rank: int, step: int) -> np.ndarray:
        values = np.random.default_rng(100 * step + rank).standard_normal((ROWS, COLS)) * 10 ** (rank % 3)
        return values.astype(np.float32)

    exact = []
    with kvcli.create("dist_sync") as kv:
        kv.init("w", np.zeros((ROWS, COLS), np.float32))
        for step in range(steps):
            kv.push("w", pushed(kv.rank, step))
            total = pushed(0, step)
            for rank in range(1, kv.num_workers):
                total = total + pushed(rank, step)
            exact.append(bool(np.array_equal(kv.pull("w"), total)))
        kv.barrier()
        stats = kv.backend.server_stats()[0]["w"]
        return {"rank": kv.rank, "exact": exact, "received": stats["received"], "applied": stats["applied"],
                "puts": stats["puts"]}


def main(address: str) -> None:
    import ray

    from kvcli.store.ray.launch import launch

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.pathsep.join(filter(None, [here, os.path.dirname(os.path.dirname(here)), os.environ.get("PYTHONPATH")]))
    ray.init(address=address, logging_level=logging.WARNING, include_dashboard=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    nodes = {n["NodeManagerAddress"]: n["NodeID"] for n in ray.nodes() if n["Alive"]}
    placement = {
        "server_resources": [{"node0": 0.01}, {"node1": 0.01}],
        "worker_resources": [{"node0": 0.01}, {"node1": 0.01}],
    }
    if len(sys.argv) > 2:  # the partition case
        from kvcli.errors import DistributedError

        started = time.monotonic()
        try:
            launch(train, 2, num_servers=2, args=(3, False, sys.argv[2]), timeout=60, **placement)
            error = None
        except DistributedError as failure:
            error = str(failure)
        print(json.dumps({"error": error, "seconds": time.monotonic() - started}), flush=True)
        return
    one_server = {"server_resources": [{"node0": 0.01}]}
    report = {
        "presum": {
            workers: launch(presum, workers, args=(3,), timeout=60, worker_resources=[{"node1": 0.01}] * workers,
                            **one_server)
            for workers in (2, 4)
        },
        "nodes": nodes,
        "results": launch(train, 2, num_servers=2, args=(3, False), timeout=60, **placement),
        "compressed": launch(train, 2, num_servers=2, args=(2, True), timeout=60, **placement),
    }
    print(json.dumps(report), flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
