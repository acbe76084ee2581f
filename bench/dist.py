"""``dist_sync`` push+pull per step, W = 1, 2, 4 workers on one machine, vs ``device`` and
(with ``--mxnet-python``) vs MXNet 1.9.1's own ``dist_sync`` parameter server.

Each of W workers (Ray actors started by :func:`kvcli.store.ray.launch.launch`) pushes
``--keys`` float32 arrays of ``--kib`` KiB each and pulls the step's sums back, ``--steps``
times (default: one key of 16 MiB; the many-small-keys pattern is ``--keys 100 --kib 64``).
The ``device`` row does the same work in one process. The MXNet row runs ps-lite as MXNet
users do: a scheduler, ``--servers`` servers and W workers started with the ``DMLC_*``
variables on 127.0.0.1 (bench/mxnet_dist_worker.py). Throughput is pushed bytes per second
over all workers. By default the servers keep each step's sum; ``--sgd`` makes both systems'
servers update the weights by SGD, as training with the optimizer on the store does (then
every step's result is new weights, put once and sent to every worker). Not a test: it
prints a table.

    python bench/dist.py [--kib 16384] [--keys 1] [--workers 1 2 4] [--steps 20]
                         [--servers 1] [--mxnet-python PY] [--json]
                         [--object-store-mib MIB] [--nodes N [--rate 10gbit]] [--sgd]

``--nodes N`` (root) runs both on N network namespaces joined by links shaped to
``--rate`` (bench/netns.py), a Ray node in each: servers (and ps-lite's scheduler) from
node 0, workers on the others, so every byte of a step crosses a link. It reports each
system's throughput and the link bound: the bytes the busiest link direction must carry
per step ÷ its rate — both for the per-worker layout (what ps-lite must move) and for
kvcli's node-local pre-sum (one value per worker node each way; ``KVCLI_DIST_NO_PRESUM=1``
turns the pre-sum off). The ``load`` column is the machine's load average when the row began.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import kvcli


#: ``--sgd``: the learning rate of the SGD both systems' servers run on each step's sum.
SGD_LEARNING_RATE = 0.1
SGD_SPEC = f"sgd:lr={SGD_LEARNING_RATE}"


def check_pulled(pulled: np.ndarray, workers: int, updates: int, sgd: bool) -> None:
    """What every step pulls back after ``updates`` steps of W pushes of ones: their sum,
    or with ``sgd`` the weights SGD made of those sums (float32 steps: close, not exact)."""
    if sgd:
        expected = -SGD_LEARNING_RATE * workers * updates
        assert np.allclose(pulled, expected, rtol=1e-3), "dist_sync pull did not see every step's update"
    else:
        assert (pulled == workers).all(), "dist_sync pull did not see every worker's push"


def dist_worker(elements: int, steps: int, count: int, warmup: int = 3, sgd: bool = False) -> list[float]:
    """One rank: per-step seconds of push + pull of ``count`` keys (dist_sync keeps lockstep),
    after ``warmup`` untimed steps; with ``sgd`` the servers update the weights by SGD."""
    with kvcli.create("dist_sync") as kv:
        keys = list(range(count))
        values = [np.full(elements, 1.0, np.float32) for _ in keys]
        outs = [np.empty_like(v) for v in values]
        if sgd:
            kv.set_optimizer(SGD_SPEC)
        kv.init(keys, [np.zeros_like(v) for v in values])
        for _ in range(warmup):  # warm-up: object store pages, actor code paths
            kv.push(keys, values)
            kv.pull(keys, out=outs)
        kv.barrier()
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            kv.push(keys, values)
            kv.pull(keys, out=outs)
            times.append(time.perf_counter() - start)
        check_pulled(outs[0], kv.num_workers, warmup + steps, sgd)
        kv.barrier()
        return times


def warmup_steps(object_store_mib: int | None, workers: int, elements: int, count: int) -> int:
    """Untimed steps before the timed ones: 3, or with a known object store size enough
    to fill it once, so the timed steps run in the steady state of a long job.

    Why: Ray's object store keeps the objects of past steps (freed, not yet evicted) until
    it is full, so until then every ``ray.put`` lands in pages never touched before (a page
    fault per 4 KiB: a 16 MiB put takes ~10 ms instead of ~3). Once the store has been
    filled, puts reuse its pages for the rest of the job. A step puts W values per node
    (the pushes; the server's result too when W > 1: counted low, so the store fills).
    """
    if not object_store_mib:
        return 3
    per_step = workers * elements * 4 * count
    return 3 + -(-(object_store_mib << 20) // per_step)


def run_dist(
    workers: int, servers: int, elements: int, steps: int, count: int, nodes: int = 0, warmup: int = 3,
    sgd: bool = False,
) -> float:
    """Median step time over the workers (they run in lockstep). With ``nodes``, the
    servers and workers are placed on the namespace cluster's nodes (:func:`placement`)."""
    from kvcli.store.ray.launch import launch

    where: dict = {}
    if nodes:
        server_nodes, worker_nodes = placement(nodes, servers, workers)
        where = {
            "server_resources": [{f"node{n}": 0.01} for n in server_nodes],
            "worker_resources": [{f"node{n}": 0.01} for n in worker_nodes],
        }
    per_rank = launch(dist_worker, workers, num_servers=servers, args=(elements, steps, count, warmup, sgd), **where)
    return statistics.median(max(times) for times in zip(*per_rank))


def placement(nodes: int, servers: int, workers: int) -> tuple[list[int], list[int]]:
    """Nodes of the servers and of the workers in a ``--nodes`` run, the same for kvcli and
    ps-lite: servers round-robin from node 0 (with ps-lite's scheduler), workers
    round-robin over the other nodes — every worker's bytes cross a link."""
    return [i % nodes for i in range(servers)], [1 + r % (nodes - 1) for r in range(workers)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_mxnet(
    python: str, workers: int, servers: int, elements: int, steps: int, count: int, cluster: Any = None,
    sgd: bool = False,
) -> float:
    """Median step time of MXNet's ps-lite dist_sync (scheduler + servers + workers here,
    or, given a :class:`bench.netns.NetCluster`, placed on its nodes as :func:`placement`)."""
    root = "127.0.0.1" if cluster is None else cluster.addresses[0]
    env = {
        **os.environ,
        "DMLC_PS_ROOT_URI": root,
        "DMLC_PS_ROOT_PORT": str(_free_port() if cluster is None else 9091),
        "DMLC_NUM_SERVER": str(servers),
        "DMLC_NUM_WORKER": str(workers),
        "OMP_NUM_THREADS": "1",
    }
    script = str(Path(__file__).with_name("mxnet_dist_worker.py"))
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    server_nodes, worker_nodes = placement(cluster and len(cluster.addresses) or 2, servers, workers)

    def on(node: int, argv: list[str]) -> tuple[list[str], dict[str, str]]:
        if cluster is None:
            return argv, {}
        return cluster.command(node, argv), {"DMLC_NODE_HOST": cluster.addresses[node]}

    def start(node: int, argv: list[str], role: str, **kwargs: Any) -> subprocess.Popen:
        command, host = on(node, argv)
        return subprocess.Popen(command, env={**env, **host, "DMLC_ROLE": role}, **kwargs)

    others = [start(0, [python, "-c", "import mxnet"], "scheduler", **quiet)]
    others += [start(node, [python, "-c", "import mxnet"], "server", **quiet) for node in server_nodes]
    ranks = [
        start(node, [python, script, str(elements), str(steps), str(count), str(SGD_LEARNING_RATE if sgd else 0)], "worker",
              stdout=subprocess.PIPE, text=True)
        for node in worker_nodes
    ]
    try:
        outputs = [rank.communicate(timeout=600)[0] for rank in ranks]
        if any(rank.returncode for rank in ranks):
            raise SystemExit(f"MXNet dist_sync workers failed (exit codes {[r.returncode for r in ranks]})")
        per_rank = [json.loads(out.strip().splitlines()[-1])["times"] for out in outputs]
    finally:
        for process in [*ranks, *others]:
            if process.poll() is None:
                process.kill()
            process.wait()
    return statistics.median(max(times) for times in zip(*per_rank))


def run_device(workers: int, elements: int, steps: int, count: int, sgd: bool = False) -> float | None:
    """Median step time of the ``device`` store doing the same work, or None without it."""
    from kvcli.store.device.shm import device_array

    keys = list(range(count))
    per_key = []
    for _ in keys:
        values = []
        for _ in range(workers):
            array = device_array((elements,), np.float32)
            array[...] = 1.0
            values.append(array)
        per_key.append(values if workers > 1 else values[0])
    outs = [[np.empty(elements, np.float32) for _ in range(workers)] for _ in keys]
    with kvcli.create("device", num_devices=max(workers, 1)) as kv:
        if sgd:
            kv.set_optimizer(SGD_SPEC)
        kv.init(keys, [np.zeros(elements, np.float32) for _ in keys])
        times = []
        for index in range(steps + 3):
            start = time.perf_counter()
            kv.push(keys, per_key)
            kv.pull(keys, out=outs)
            if index >= 3:
                times.append(time.perf_counter() - start)
        check_pulled(outs[0][0], workers, steps + 3, sgd)
    return statistics.median(times)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1e3, 2)


def load_averages() -> str:
    """The machine's load averages (``uptime``), printed with every figure."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def tcp_probe(cluster: Any, mib: int = 256) -> float:
    """MiB/s of one TCP stream from node 1 to node 0 (what the shaped link and this
    machine's CPUs carry without Ray or ps-lite)."""
    receive = (
        "import socket,sys;s=socket.socket();s.bind((sys.argv[1],9099));s.listen();c,_=s.accept()\n"
        "while c.recv(1<<20): pass"
    )
    send = (
        "import socket,sys,time\nfor _ in range(100):\n try: s=socket.create_connection((sys.argv[1],9099));break\n"
        " except OSError: time.sleep(0.05)\nb=b'x'*(1<<20);t=time.perf_counter()\n"
        f"for _ in range({mib}): s.sendall(b)\n"
        "s.close();print(time.perf_counter()-t)"
    )
    server = subprocess.Popen(cluster.command(0, [sys.executable, "-c", receive, cluster.addresses[0]]))
    try:
        sent = cluster.run(1, [sys.executable, "-c", send, cluster.addresses[0]], capture_output=True, text=True, timeout=120)
        return mib / float(sent.stdout.strip())
    finally:
        server.wait(timeout=30)


def inner(args: argparse.Namespace) -> None:
    """``--inner``: the kvcli part of a ``--nodes`` run, as a driver inside node 0."""
    import ray

    from kvcli.store.ray.group import ray_init_options

    root = str(Path(__file__).resolve().parents[1])
    passed = {name: os.environ[name] for name in ("KVCLI_DIST_NO_PRESUM", "KVCLI_DIST_NO_SHM") if name in os.environ}
    ray.init(**ray_init_options(args.inner), runtime_env={"env_vars": {"PYTHONPATH": root, **passed}})
    elements = args.kib * 1024 // 4
    warmup = warmup_steps(args.object_store_mib, args.workers[0], elements, args.keys)
    seconds = run_dist(args.workers[0], args.servers, elements, args.steps, args.keys, nodes=args.nodes, warmup=warmup,
                       sgd=args.sgd)
    print(json.dumps({"seconds": seconds}))


def run_nodes(args: argparse.Namespace) -> list[dict[str, Any]]:
    """``--nodes N``: kvcli and ps-lite side by side on a namespace cluster."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.netns import RAY_ENV, link_bound, netns_cluster

    rows = []
    store_mib = args.object_store_mib or 600
    with netns_cluster(args.nodes, rate=args.rate, object_store_mib=store_mib) as cluster:
        tcp = tcp_probe(cluster)
        for workers in args.workers:
            load = load_averages()
            server_nodes, worker_nodes = placement(args.nodes, args.servers, workers)
            pushed = args.kib * 1024 * args.keys
            bound = link_bound(pushed, worker_nodes, server_nodes, cluster.gbit)
            presummed = not os.environ.get("KVCLI_DIST_NO_PRESUM")
            presum_bound = link_bound(pushed, worker_nodes, server_nodes, cluster.gbit, presum=presummed)
            argv = [sys.executable, __file__, "--inner", cluster.ray_address, "--nodes", str(args.nodes),
                    "--workers", str(workers), "--servers", str(args.servers), "--steps", str(args.steps),
                    "--kib", str(args.kib), "--keys", str(args.keys), "--object-store-mib", str(store_mib),
                    *(["--sgd"] if args.sgd else [])]
            done = cluster.run(0, argv, capture_output=True, text=True, timeout=900,
                               env={**os.environ, **RAY_ENV})
            if done.returncode != 0:
                raise SystemExit(f"kvcli on the namespace cluster failed: {done.stderr[-3000:]}")
            dist_seconds = json.loads(done.stdout.strip().splitlines()[-1])["seconds"]
            mxnet_seconds = (
                run_mxnet(args.mxnet_python, workers, args.servers, args.kib * 256, args.steps, args.keys, cluster,
                          sgd=args.sgd)
                if args.mxnet_python else None
            )
            rows.append({
                "nodes": args.nodes, "workers": workers, "servers": args.servers, "keys": args.keys,
                "kib": args.kib, "rate": cluster.rate, "delay": cluster.delay, "tcp_MiB_per_s": round(tcp, 1),
                "bound_ms": _ms(bound), "dist_ms": _ms(dist_seconds),
                "dist_MiB_per_s": round(pushed * workers / dist_seconds / 2**20, 1),
                "dist_vs_bound": round(dist_seconds / bound, 2) if bound else None,
                "presum": presummed,
                "presum_bound_ms": _ms(presum_bound),
                "dist_vs_presum_bound": round(dist_seconds / presum_bound, 2) if presum_bound else None,
                "mxnet_ms": _ms(mxnet_seconds),
                "mxnet_MiB_per_s": None if mxnet_seconds is None else round(pushed * workers / mxnet_seconds / 2**20, 1),
                "dist_vs_mxnet": None if mxnet_seconds is None else round(mxnet_seconds / dist_seconds, 3),
                "load": load,
            })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kib", type=int, default=16384, help="KiB per key pushed by each worker (default 16384)")
    parser.add_argument("--keys", type=int, default=1, help="keys pushed and pulled per step (default 1)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="values of W (default 1 2 4)")
    parser.add_argument("--servers", type=int, default=1, help="server actors / ps-lite servers (default 1)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps (default 20)")
    parser.add_argument("--mxnet-python", help="a Python with mxnet 1.9.1: adds MXNet's ps-lite dist_sync")
    parser.add_argument("--nodes", type=int, default=0,
                        help="run on N network namespaces joined by shaped links (root; see bench/netns.py)")
    parser.add_argument("--rate", default="10gbit", help="the emulated link rate of --nodes (default 10gbit)")
    parser.add_argument("--object-store-mib", type=int, default=None,
                        help="Ray object store size per node (default: Ray's own locally, 600 with --nodes); "
                        "given, the warm-up fills it once, for the steady state of a long job")
    parser.add_argument("--sgd", action="store_true",
                        help="the servers update by SGD (lr 0.1) on each step's sum, as training with the "
                        "optimizer on the store does (default: they keep the sum)")
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    if args.inner:
        inner(args)
        return
    if args.nodes:
        if args.nodes < 2:
            parser.error("--nodes needs at least 2 (the servers' node and the workers')")
        rows = run_nodes(args)
        if args.json:
            print(json.dumps(rows))
            return
        first = rows[0]
        print(f"dist_sync push+pull across {args.nodes} namespaces ({first['rate']} links, delay "
              f"{first['delay'] or 'not emulated'}; one TCP stream: {first['tcp_MiB_per_s']} MiB/s), "
              f"{args.keys} key(s) of {args.kib} KiB per worker, {args.servers} server(s), "
              f"{'SGD on the servers' if args.sgd else 'servers keep the sum'}, median of {args.steps} steps")
        print("bound: the per-worker layout's link bound (what ps-lite moves); presum bound: with each "
              "worker node's pushes summed on the node first" + ("" if first["presum"] else " (off: KVCLI_DIST_NO_PRESUM)"))
        print(f"{'W':>3} {'bound ms':>9} {'presum ms':>9} {'dist ms':>9} {'MiB/s':>8} {'/bound':>7} {'/presum':>8} "
              f"{'MXNet ms':>9} {'MiB/s':>8} {'MXNet/dist':>11}  load")
        for r in rows:
            print(f"{r['workers']:>3} {r['bound_ms']:9.2f} {r['presum_bound_ms']:9.2f} {r['dist_ms']:9.2f} "
                  f"{r['dist_MiB_per_s']:8.1f} {r['dist_vs_bound']:7.2f} {r['dist_vs_presum_bound']:8.2f} "
                  f"{r['mxnet_ms'] or 0:9.2f} {r['mxnet_MiB_per_s'] or 0:8.1f} {r['dist_vs_mxnet'] or 0:11.2f}  {r['load']}")
        return

    import ray

    from kvcli.store.ray.group import start_local_ray

    store = {"object_store_memory": args.object_store_mib << 20} if args.object_store_mib else {}
    start_local_ray(ray, **store)  # as kvcli starts Ray (a private token and temp folder, workers at nice 0)
    elements = args.kib * 1024 // 4
    rows = []
    for workers in args.workers:
        load = load_averages()
        pushed = args.kib * 1024 * args.keys * workers
        warmup = warmup_steps(args.object_store_mib, workers, elements, args.keys)
        dist_seconds = run_dist(workers, args.servers, elements, args.steps, args.keys, warmup=warmup, sgd=args.sgd)
        device_seconds = run_device(workers, elements, args.steps, args.keys, sgd=args.sgd)
        mxnet_seconds = (
            run_mxnet(args.mxnet_python, workers, args.servers, elements, args.steps, args.keys, sgd=args.sgd)
            if args.mxnet_python else None
        )
        rows.append({
            "workers": workers,
            "keys": args.keys,
            "kib": args.kib,
            "dist_ms": _ms(dist_seconds),
            "dist_MiB_per_s": round(pushed / dist_seconds / 2**20, 1),
            "device_ms": _ms(device_seconds),
            "dist_vs_device": None if device_seconds is None else round(device_seconds / dist_seconds, 3),
            "mxnet_ms": _ms(mxnet_seconds),
            "dist_vs_mxnet": None if mxnet_seconds is None else round(mxnet_seconds / dist_seconds, 3),
            "load": load,
        })
    ray.shutdown()
    if args.json:
        print(json.dumps(rows))
        return
    size = f"{args.keys} key(s) of {args.kib} KiB"
    shm = "object store (KVCLI_DIST_NO_SHM)" if os.environ.get("KVCLI_DIST_NO_SHM") else "shared memory"
    warm = f"object store {args.object_store_mib} MiB, filled once before timing" if args.object_store_mib else "3 warm-up steps"
    update = "SGD on the servers" if args.sgd else "servers keep the sum"
    print(f"dist_sync push+pull, {size} per worker, {args.servers} server(s), {update}, {shm}, {warm}, "
          f"median of {args.steps} steps")
    print(f"{'W':>3} {'dist ms':>9} {'MiB/s':>9} {'device ms':>10} {'MXNet ms':>9} {'MXNet/dist':>11}  load")
    for r in rows:
        def cell(value: float | None, width: int) -> str:
            return f"{'-':>{width}}" if value is None else f"{value:{width}.2f}"

        print(
            f"{r['workers']:>3} {r['dist_ms']:9.2f} {r['dist_MiB_per_s']:9.1f} {cell(r['device_ms'], 10)} "
            f"{cell(r['mxnet_ms'], 9)} {cell(r['dist_vs_mxnet'], 11)}  {r['load']}"
        )


if __name__ == "__main__":
    main()
