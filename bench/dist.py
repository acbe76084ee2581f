"""``dist_sync`` push+pull per step, W = 1, 2, 4 workers on one machine, vs ``device`` and
(with ``--mxnet-python``) vs MXNet 1.9.1's own ``dist_sync`` parameter server.

Each of W workers (Ray actors started by :func:`kvcli.store.launch.launch`) pushes
``--keys`` float32 arrays of ``--kib`` KiB each and pulls the step's sums back, ``--steps``
times (default: one key of 16 MiB; the many-small-keys pattern is ``--keys 100 --kib 64``).
The ``device`` row does the same work in one process. The MXNet row runs ps-lite as MXNet
users do: a scheduler, ``--servers`` servers and W workers started with the ``DMLC_*``
variables on 127.0.0.1 (bench/mxnet_dist_worker.py). Throughput is pushed bytes per second
over all workers. Not a test: it prints a table.

    python bench/dist.py [--kib 16384] [--keys 1] [--workers 1 2 4] [--steps 20]
                         [--servers 1] [--mxnet-python PY] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

import kvcli


def dist_worker(elements: int, steps: int, count: int) -> list[float]:
    """One rank: per-step seconds of push + pull of ``count`` keys (dist_sync keeps lockstep)."""
    with kvcli.create("dist_sync") as kv:
        keys = list(range(count))
        values = [np.full(elements, 1.0, np.float32) for _ in keys]
        outs = [np.empty_like(v) for v in values]
        kv.init(keys, [np.zeros_like(v) for v in values])
        for _ in range(3):  # warm-up: object store pages, actor code paths
            kv.push(keys, values)
            kv.pull(keys, out=outs)
        kv.barrier()
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            kv.push(keys, values)
            kv.pull(keys, out=outs)
            times.append(time.perf_counter() - start)
        assert (outs[0] == kv.num_workers).all(), "dist_sync pull did not see every worker's push"
        kv.barrier()
        return times


def run_dist(workers: int, servers: int, elements: int, steps: int, count: int) -> float:
    """Median step time over the workers (they run in lockstep)."""
    from kvcli.store.launch import launch

    per_rank = launch(dist_worker, workers, num_servers=servers, args=(elements, steps, count))
    return statistics.median(max(times) for times in zip(*per_rank))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_mxnet(python: str, workers: int, servers: int, elements: int, steps: int, count: int) -> float:
    """Median step time of MXNet's ps-lite dist_sync (scheduler + servers + workers here)."""
    env = {
        **os.environ,
        "DMLC_PS_ROOT_URI": "127.0.0.1",
        "DMLC_PS_ROOT_PORT": str(_free_port()),
        "DMLC_NUM_SERVER": str(servers),
        "DMLC_NUM_WORKER": str(workers),
        "OMP_NUM_THREADS": "1",
    }
    script = str(Path(__file__).with_name("mxnet_dist_worker.py"))
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    others = [subprocess.Popen([python, "-c", "import mxnet"], env={**env, "DMLC_ROLE": "scheduler"}, **quiet)]
    others += [
        subprocess.Popen([python, "-c", "import mxnet"], env={**env, "DMLC_ROLE": "server"}, **quiet)
        for _ in range(servers)
    ]
    ranks = [
        subprocess.Popen(
            [python, script, str(elements), str(steps), str(count)],
            env={**env, "DMLC_ROLE": "worker"}, stdout=subprocess.PIPE, text=True,
        )
        for _ in range(workers)
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


def run_device(workers: int, elements: int, steps: int, count: int) -> float | None:
    """Median step time of the ``device`` store doing the same work, or None without it."""
    from kvcli.store.shm import device_array

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
        kv.init(keys, [np.zeros(elements, np.float32) for _ in keys])
        times = []
        for index in range(steps + 3):
            start = time.perf_counter()
            kv.push(keys, per_key)
            kv.pull(keys, out=outs)
            if index >= 3:
                times.append(time.perf_counter() - start)
        assert (outs[0][0] == workers).all()
    return statistics.median(times)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1e3, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kib", type=int, default=16384, help="KiB per key pushed by each worker (default 16384)")
    parser.add_argument("--keys", type=int, default=1, help="keys pushed and pulled per step (default 1)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="values of W (default 1 2 4)")
    parser.add_argument("--servers", type=int, default=1, help="server actors / ps-lite servers (default 1)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps (default 20)")
    parser.add_argument("--mxnet-python", help="a Python with mxnet 1.9.1: adds MXNet's ps-lite dist_sync")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    import ray

    from kvcli.store.dist_group import ray_init_options

    ray.init(**ray_init_options("local"))  # as kvcli starts Ray (its workers at nice 0)
    elements = args.kib * 1024 // 4
    rows = []
    for workers in args.workers:
        pushed = args.kib * 1024 * args.keys * workers
        dist_seconds = run_dist(workers, args.servers, elements, args.steps, args.keys)
        device_seconds = run_device(workers, elements, args.steps, args.keys)
        mxnet_seconds = (
            run_mxnet(args.mxnet_python, workers, args.servers, elements, args.steps, args.keys)
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
        })
    ray.shutdown()
    if args.json:
        print(json.dumps(rows))
        return
    size = f"{args.keys} key(s) of {args.kib} KiB"
    print(f"dist_sync push+pull, {size} per worker, {args.servers} server(s), median of {args.steps} steps")
    print(f"{'W':>3} {'dist ms':>9} {'MiB/s':>9} {'device ms':>10} {'MXNet ms':>9} {'MXNet/dist':>11}")
    for r in rows:
        def cell(value: float | None, width: int) -> str:
            return f"{'-':>{width}}" if value is None else f"{value:{width}.2f}"

        print(
            f"{r['workers']:>3} {r['dist_ms']:9.2f} {r['dist_MiB_per_s']:9.1f} {cell(r['device_ms'], 10)} "
            f"{cell(r['mxnet_ms'], 9)} {cell(r['dist_vs_mxnet'], 11)}"
        )


if __name__ == "__main__":
    main()
