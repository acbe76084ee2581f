"""``dist_sync`` push+pull of 16 MiB per worker, W = 1, 2, 4 on one machine, vs ``device``.

Each of W workers (Ray actors started by :func:`kvcli.store.launch.launch`) pushes a
16 MiB float32 array to one key and pulls the step's sum back, ``--steps`` times. The
``device`` row does the same work in one process: a push of W arrays (one per device, in
device memory) and a pull into W outputs. Throughput is pushed bytes per second over all
workers (W x 16 MiB per step); the ratio is dist / device. Not a test: it prints a table.

    python bench/dist.py [--mib 16] [--workers 1 2 4] [--steps 20] [--servers 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time

import numpy as np

import kvcli


def dist_worker(elements: int, steps: int) -> list[float]:
    """One rank: per-step seconds of push + pull (steps kept in lockstep by dist_sync)."""
    with kvcli.create("dist_sync") as kv:
        value = np.full(elements, 1.0, np.float32)
        out = np.empty_like(value)
        kv.init(0, np.zeros_like(value))
        for _ in range(3):  # warm-up: object store pages, actor code paths
            kv.push(0, value)
            kv.pull(0, out=out)
        kv.barrier()
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            kv.push(0, value)
            kv.pull(0, out=out)
            times.append(time.perf_counter() - start)
        assert (out == kv.num_workers).all(), "dist_sync pull did not see every worker's push"
        kv.barrier()
        return times


def run_dist(workers: int, servers: int, elements: int, steps: int) -> float:
    """Median step time over the workers (they run in lockstep)."""
    from kvcli.store.launch import launch

    per_rank = launch(dist_worker, workers, num_servers=servers, args=(elements, steps))
    return statistics.median(max(times) for times in zip(*per_rank))


def run_device(workers: int, elements: int, steps: int) -> float | None:
    """Median step time of the ``device`` store doing the same work, or None without it."""
    try:
        from kvcli.store.shm import device_array
    except ImportError:
        return None
    values = []
    for _ in range(workers):
        array = device_array((elements,), np.float32)
        array[...] = 1.0
        values.append(array)
    outs = [np.empty(elements, np.float32) for _ in range(workers)]
    with kvcli.create("device", num_devices=max(workers, 1)) as kv:
        kv.init(0, np.zeros(elements, np.float32))
        push = values if workers > 1 else values[0]
        times = []
        for index in range(steps + 3):
            start = time.perf_counter()
            kv.push(0, push)
            kv.pull(0, out=outs)
            if index >= 3:
                times.append(time.perf_counter() - start)
        assert (outs[0] == workers).all()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=16, help="MiB pushed per worker per step (default 16)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="values of W (default 1 2 4)")
    parser.add_argument("--servers", type=int, default=1, help="server actors (default 1)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps (default 20)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    import ray

    ray.init(include_dashboard=False, logging_level=logging.WARNING)
    elements = args.mib * 1024 * 1024 // 4
    rows = []
    for workers in args.workers:
        pushed = args.mib * 1024 * 1024 * workers
        dist_seconds = run_dist(workers, args.servers, elements, args.steps)
        device_seconds = run_device(workers, elements, args.steps)
        row = {
            "workers": workers,
            "dist_ms": round(dist_seconds * 1e3, 2),
            "dist_MiB_per_s": round(pushed / dist_seconds / 2**20, 1),
            "device_ms": None if device_seconds is None else round(device_seconds * 1e3, 2),
            "device_MiB_per_s": None if device_seconds is None else round(pushed / device_seconds / 2**20, 1),
        }
        row["dist_vs_device"] = None if device_seconds is None else round(device_seconds / dist_seconds, 3)
        rows.append(row)
    ray.shutdown()
    if args.json:
        print(json.dumps(rows))
        return
    print(f"dist_sync push+pull, {args.mib} MiB float32 per worker, {args.servers} server(s), median of {args.steps} steps")
    print(f"{'W':>3} {'dist ms':>9} {'dist MiB/s':>11} {'device ms':>10} {'device MiB/s':>13} {'dist/device':>12}")
    for r in rows:
        device_ms = "-" if r["device_ms"] is None else f"{r['device_ms']:.2f}"
        device_rate = "-" if r["device_MiB_per_s"] is None else f"{r['device_MiB_per_s']:.1f}"
        ratio = "-" if r["dist_vs_device"] is None else f"{r['dist_vs_device']:.3f}"
        print(
            f"{r['workers']:>3} {r['dist_ms']:9.2f} {r['dist_MiB_per_s']:11.1f} {device_ms:>10} {device_rate:>13} {ratio:>12}"
        )


if __name__ == "__main__":
    main()
