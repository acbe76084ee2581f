"""A two-node Ray cluster on this machine (``ray.cluster_utils.Cluster``: each node has its
own raylet and object store) running a kvcli job; prints one JSON line for the test.

    python multinode_job.py results|fault|serverfault FLAG_FILE
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
        servers = [s.ping.remote() for s in kv._servers]
        import ray

        return {"rank": kv.rank, "node": node_id(), "seen": seen, "servers": [p["node"] for p in ray.get(servers)]}


def main(mode: str, flag: str) -> None:
    import ray
    from ray.cluster_utils import Cluster

    from kvcli.errors import DistributedError
    from kvcli.store.dist.launch import launch

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.pathsep.join(filter(None, [here, os.path.dirname(os.path.dirname(here)), os.environ.get("PYTHONPATH")]))
    os.environ["PYTHONPATH"] = path
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
