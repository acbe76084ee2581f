"""A two-node Ray cluster on this machine (``ray.cluster_utils.Cluster``: each node has its
own raylet and object store) running a kvcli job; prints one JSON line for the test.

    python multinode_job.py results|fault|serverfault FLAG_FILE
    python multinode_job.py presum|presum2|presum-die   (node-local pre-sums, three nodes)
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time

import numpy as np


def node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def train(steps: int, flag: str) -> dict:
    """Every rank pushes rank+1 per step; returns what it pulled and where it ran."""
    import kvcli

    with kvcli.create("dist_sync") as kv:
        kv.init("w", np.zeros((1000, 300), np.float32))  # 1.2 MB: travels through the object stores
        kv.set_optimizer("sgd:lr=0.5")
        seen = []
        for step in range(steps):
            if kv.rank == 1 and flag and step == 1:
                open(flag, "w").close()  # the test removes this rank's node (or the servers') now
                time.sleep(120 if not flag.endswith("server") else 3)
            kv.push("w", np.full((1000, 300), kv.rank + 1, np.float32))
            seen.append(float(kv.pull("w")[0, 0]))
        servers = [s.ping.remote() for s in kv.backend._servers]
        import ray

        return {"rank": kv.rank, "node": node_id(), "seen": seen, "servers": [p["node"] for p in ray.get(servers)]}


ROWS, COLS = 300, 1000  # 1.2 MB of float32: through the object stores, not inline


def pushed(rank: int, step: int) -> np.ndarray:
    """What ``rank`` pushes at ``step``: fractions whose float32 sum depends on the order."""
    values = np.random.default_rng(1000 * step + rank).standard_normal((ROWS, COLS)) * 10 ** (rank % 3)
    return values.astype(np.float32)


def presum(steps: int, die: int) -> dict:
    """Every rank pushes :func:`pushed` (no optimizer: the step's sum is assigned) and pulls;
    returns, per step, whether the pull equals the node-grouped sum bit for bit. With
    ``die`` >= 0 that rank exits before its second push."""
    import ray

    import kvcli

    with kvcli.create("dist_sync") as kv:
        kv.init("w", np.zeros((ROWS, COLS), np.float32))
        nodes = ray.get(kv.backend._group.coordinator.placement.remote(30))
        groups: dict[str, list[int]] = {}
        for rank in sorted(nodes):
            groups.setdefault(nodes[rank], []).append(rank)
        exact, grouped = [], []
        for step in range(steps):
            if step == 1 and kv.rank == die:
                os._exit(3)  # dies mid-job, after the first step
            kv.push("w", pushed(kv.rank, step))
            got = kv.pull("w")
            # each node's ranks left to right, then the nodes by lowest rank, left to right
            sums = []
            for ranks in sorted(groups.values()):
                total = pushed(ranks[0], step)
                for rank in ranks[1:]:
                    total = total + pushed(rank, step)
                sums.append(total)
            expected = sums[0]
            for total in sums[1:]:
                expected = expected + total
            flat = pushed(0, step)
            for rank in range(1, kv.num_workers):
                flat = flat + pushed(rank, step)
            exact.append(bool(np.array_equal(got, expected)))
            grouped.append(bool(not np.array_equal(expected, flat)))  # the grouping shows in the bits
        kv.barrier()
        stats = kv.backend.server_stats()
        return {"rank": kv.rank, "node": node_id(), "exact": exact, "order_matters": grouped,
                "received": stats[0]["w"]["received"], "applied": stats[0]["w"]["applied"]}


def compressed(steps: int) -> dict:
    """2-bit compression (threshold 0.5) with several workers per node: each rank pushes
    0.75 and sends the code of +0.5 (its residual keeps the rest), per worker as in MXNet."""
    import kvcli

    with kvcli.create("dist_sync") as kv:
        kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
        kv.init("c", np.zeros((ROWS, COLS), np.float32))
        seen = []
        for _ in range(steps):
            kv.push("c", np.full((ROWS, COLS), 0.75, np.float32))
            seen.append(sorted(set(np.unique(kv.pull("c")).tolist())))
        kv.barrier()
        stats = kv.backend.server_stats()[0]["c"]
        return {"rank": kv.rank, "seen": seen, "received": stats["received"], "applied": stats["applied"]}


def sparse_rows(steps: int) -> dict:
    """A row-sparse key beside a dense one in the same pushes: each rank pushes rows
    ``rank`` and 10 of ``rank + 1`` (per worker: row-sparse pushes are not pre-summed) and
    ``rank + 1`` everywhere to the dense key (pre-summed); no optimizer, the sums are kept."""
    import kvcli
    from kvcli.arrays.sparse import RowSparse

    with kvcli.create("dist_sync") as kv:
        kv.init(["s", "d"], [RowSparse.all_rows(np.zeros((12, 5), np.float32)), np.zeros((ROWS, COLS), np.float32)])
        rows, dense = [], []
        for _ in range(steps):
            mine = np.full((2, 5), kv.rank + 1, np.float32)
            kv.push(["s", "d"], [RowSparse(mine, [kv.rank, 10], (12, 5)), np.full((ROWS, COLS), kv.rank + 1, np.float32)])
            got = kv.row_sparse_pull("s", row_ids=np.array([10, 0, 1, 2, 3]))
            rows.append([got.indices.tolist(), got.data[:, 0].tolist()])
            dense.append(sorted(set(np.unique(kv.pull("d")).tolist())))
        kv.barrier()
        stats = kv.backend.server_stats()[0]
        return {"rank": kv.rank, "rows": rows, "dense": dense,
                "received": {k: stats[k]["received"] for k in ("s", "d")}}


def run_presum(mode: str) -> dict:
    """Servers on the head node; W=4 (ranks 0-1 on node a, 2-3 on node b) with shared
    memory to the aggregators, or W=2 (both on node a) with KVCLI_DIST_NO_SHM=1; or
    ``presum-die``: W=4 and rank 3 exits before its second push."""
    import ray
    from ray.cluster_utils import Cluster

    from kvcli.errors import DistributedError
    from kvcli.store.ray.launch import launch

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "resources": {"servers": 1}, "object_store_memory": 80 << 20},
    )
    a = cluster.add_node(num_cpus=1, resources={"a": 4}, object_store_memory=80 << 20)
    b = cluster.add_node(num_cpus=1, resources={"b": 4}, object_store_memory=80 << 20)
    ray.init(address=cluster.address, logging_level=logging.WARNING,
             runtime_env={"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}})
    cluster.wait_for_nodes()
    report: dict = {"nodes": {"head": ray.get_runtime_context().get_node_id(), "a": a.node_id, "b": b.node_id}}
    workers = 2 if mode == "presum2" else 4
    placement = dict(
        server_resources={"servers": 0.01},
        worker_resources=[{"a": 0.01}] * 2 + [{"b": 0.01}] * (workers - 2),
    )
    env = {"KVCLI_DIST_NO_SHM": "1"} if mode == "presum2" else {}
    started = time.monotonic()
    try:
        report["results"] = launch(presum, workers, args=(3, 3 if mode == "presum-die" else -1), timeout=60,
                                   env=env, **placement)
        if mode == "presum":
            report["compressed"] = launch(compressed, workers, args=(2,), timeout=60, **placement)
            report["sparse"] = launch(sparse_rows, workers, args=(2,), timeout=60, **placement)
        report["error"] = None
    except DistributedError as error:
        report["error"] = str(error)
    report["seconds"] = time.monotonic() - started
    print(json.dumps(report), flush=True)
    ray.shutdown()
    cluster.shutdown()
    return report


def main(mode: str, flag: str) -> None:
    import ray
    from ray.cluster_utils import Cluster

    from kvcli.errors import DistributedError
    from kvcli.store.ray.launch import launch

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.pathsep.join(filter(None, [here, os.path.dirname(os.path.dirname(here)), os.environ.get("PYTHONPATH")]))
    os.environ["PYTHONPATH"] = path
    if mode.startswith("presum"):
        run_presum(mode)
        return
    head_resources = {"rank0": 1} if mode == "serverfault" else {"servers": 1, "rank0": 1}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "resources": head_resources, "object_store_memory": 80 << 20},
    )
    other = cluster.add_node(num_cpus=1, resources={"rank1": 1}, object_store_memory=80 << 20)
    servers_node = None
    if mode == "serverfault":  # the servers on a node of their own, which the test removes
        servers_node = cluster.add_node(num_cpus=1, resources={"servers": 1}, object_store_memory=80 << 20)
    ray.init(address=cluster.address, logging_level=logging.WARNING, runtime_env={"env_vars": {"PYTHONPATH": path}})
    cluster.wait_for_nodes()
    nodes = {"head": ray.get_runtime_context().get_node_id(), "other": other.node_id}
    report: dict = {"nodes": nodes}
    placement = dict(server_resources={"servers": 0.01}, worker_resources=[{"rank0": 0.01}, {"rank1": 0.01}])
    started = time.monotonic()
    if mode == "results":
        report["results"] = launch(train, 2, args=(3, ""), timeout=60, **placement)
    else:
        doomed = servers_node if servers_node is not None else other
        flag = flag + "-server" if servers_node is not None else flag

        def remove_when_flagged() -> None:
            while not os.path.exists(flag):
                time.sleep(0.05)
            cluster.remove_node(doomed)

        threading.Thread(target=remove_when_flagged, daemon=True).start()
        try:
            launch(train, 2, args=(3, flag), timeout=60, **placement)
            report["error"] = None
        except DistributedError as error:
            report["error"] = str(error)
    report["seconds"] = time.monotonic() - started
    print(json.dumps(report), flush=True)
    ray.shutdown()
    try:
        cluster.shutdown()
    except KeyError:  # Ray's Cluster also tries to remove the node the fault test removed
        cluster.head_node.kill_all_processes(check_alive=False, allow_graceful=False)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")
