"""Where a 16 MiB ``dist_sync`` step goes on the object-store path (one worker, one server,
``KVCLI_DIST_NO_SHM=1`` on one machine): the store's push and pull phases beside the Ray
operations they are made of and a plain memory copy of the same bytes. Not a test.

    KVCLI_DIST_NO_SHM=1 python bench/dist_profile.py [--kib 16384] [--steps 10] [--object-store-mib 512]

``push`` = the worker's ``ray.put`` of its value + the server's call, which reads it
(zero-copy) and sums it into the value; ``pull`` = the server's ``ray.put`` of the step's
result + the worker's ``ray.get`` (zero-copy) and copy into ``out`` (the result comes back
with the push's answer when the worker pulled after its last push). The object store is
filled once before timing (``--object-store-mib``, 0 for Ray's default size and no filling):
until then every put lands in pages never touched, as at the start of a job.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def timed(steps: int, step: object) -> float:
    """Median milliseconds of ``step()`` over ``steps`` runs, after one warm-up."""
    step()  # type: ignore[operator]
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kib", type=int, default=16384)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--object-store-mib", type=int, default=512)
    args = parser.parse_args()
    os.environ["KVCLI_DIST_NO_SHM"] = "1"
    import ray

    import kvcli
    from kvcli.store.ray.group import start_local_ray

    store = {"object_store_memory": args.object_store_mib << 20} if args.object_store_mib else {}
    start_local_ray(ray, **store)  # a private token and temp folder, as kvcli starts Ray
    value = np.ones(args.kib * 256, np.float32)
    out = np.empty_like(value)
    fill = -(-args.object_store_mib * 1024 // args.kib) + 2 if args.object_store_mib else 0  # puts
    for _ in range(fill):
        ray.put(value)  # fill the store once: later puts reuse its pages
    ref = ray.put(value)
    rows = {
        "memcpy (numpy copyto)": timed(args.steps, lambda: np.copyto(out, value)),
        "ray.put": timed(args.steps, lambda: ray.put(value)),
        "ray.get (zero-copy) + copy out": timed(args.steps, lambda: np.copyto(out, ray.get(ref))),
    }
    with kvcli.create("dist_sync") as kv:
        kv.init(0, np.zeros_like(value))

        def push() -> None:
            kv.push(0, value)
            kv.backend._settle_pushes()  # the push's call answered: the server has applied it

        def step() -> None:
            kv.push(0, value)
            kv.pull(0, out=out)

        for _ in range(fill // 2 + 1):
            step()  # two puts a step (the worker's push, the server's result)
        rows["store push (put + call + server sum)"] = timed(args.steps, push)
        rows["store push + pull (one step)"] = timed(args.steps, step)
        # the pull's cost is the difference
        rows["store pull (step - push)"] = rows["store push + pull (one step)"] - rows["store push (put + call + server sum)"]
    ray.shutdown()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.dist import load_averages

    load = load_averages()
    print(f"{args.kib} KiB, median of {args.steps}, object store {args.object_store_mib or 'default'} MiB, load {load}")
    for name, ms in rows.items():
        print(f"{name:42} {ms:8.2f} ms")


if __name__ == "__main__":
    main()
