"""What Ray itself costs between two nodes: the floor under a ``dist_sync`` step across a link.

On a two-namespace cluster (bench/netns.py, as root), with no kvcli code in the timed calls:
a *client* actor on node 1 (where the workers run) and a *server* actor on node 0 time

* an empty actor call (the round trip every push and pull pays at least once);
* ``ray.put`` of the value on node 1;
* the push direction: ``ray.put`` on node 1, a call, the server's ``ray.get`` of it (Ray's
  object manager carries it across the link);
* the pull direction: a call, the server's ``ray.put`` on node 0, the client's ``ray.get``
  of it and a copy out;
* a bare step as kvcli makes one at W=1 (put, call, the server fetches it, copies it into
  its value and puts the result, the client fetches that and copies it out), whole and
  split into ``--chunks`` objects per direction (one call per chunk, served concurrently:
  chunk ``i``'s result can cross back while chunk ``i+1`` still crosses over).

beside one TCP stream over the same link and the link's own time for the bytes (size ÷
rate). Medians of ``--steps`` runs (``bench.dist_profile.timed``), after a warm-up that
fills each node's object store once (see bench/dist.py) and a first, untimed pass over every
row (the first transfers between two nodes are slower). Not a test: it prints a table.

    python bench/netns_profile.py [--mib 16] [--steps 10] [--chunks 1 2 4 8] [--rate 10gbit]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np


def measure(address: str, mib: int, steps: int, chunks: list[int], store_mib: int) -> dict[str, float]:
    """Run inside node 0's namespace: the timings, with actors placed on nodes 0 and 1."""
    import logging

    import ray

    root = str(Path(__file__).resolve().parents[1])  # the actors import bench.dist_profile
    ray.init(address=address, logging_level=logging.ERROR, runtime_env={"env_vars": {"PYTHONPATH": root}})
    elements = mib << 18  # float32

    @ray.remote(resources={"node0": 0.01}, max_concurrency=max(chunks))
    class Server:
        def __init__(self) -> None:
            self.value = np.ones(elements, np.float32)

        def ping(self) -> None:
            return None

        def fetch(self, refs: list[Any]) -> None:
            ray.get(refs[0])

        def put_value(self) -> list[Any]:
            return [ray.put(self.value)]

        def step(self, index: int, count: int, refs: list[Any]) -> list[Any]:
            part = np.array_split(self.value, count)[index]
            np.copyto(part, ray.get(refs[0]))
            return [ray.put(part)]

    @ray.remote(resources={"node1": 0.01})
    class Client:
        def run(self, server: Any) -> dict[str, float]:
            from bench.dist_profile import timed

            value = np.ones(elements, np.float32)
            out = np.empty_like(value)
            for _ in range(store_mib // mib + 2):  # fill both object stores once
                ray.put(value)
                ray.get(server.put_value.remote())

            def pull() -> None:
                np.copyto(out, ray.get(ray.get(server.put_value.remote())[0]))

            def step(count: int) -> Callable[[], None]:
                def run() -> None:
                    pieces = np.array_split(value, count)
                    answers = [server.step.remote(i, count, [ray.put(p)]) for i, p in enumerate(pieces)]
                    results = ray.get([answer[0] for answer in ray.get(answers)])
                    np.concatenate(results, out=out)
                return run

            rows = {
                "actor call (empty)": lambda: ray.get(server.ping.remote()),
                "ray.put on node 1": lambda: ray.put(value),
                "push direction: put, call, server's ray.get": lambda: ray.get(server.fetch.remote([ray.put(value)])),
                "pull direction: call, put, ray.get, copy out": pull,
                **{f"bare step, {count} chunk(s)": step(count) for count in chunks},
            }
            for run in rows.values():  # untimed first pass
                run()
            return {name: round(timed(steps, run), 2) for name, run in rows.items()}

    server = Server.remote()
    ray.get(server.ping.remote())
    return ray.get(Client.remote().run.remote(server))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=16, help="MiB per value (default 16)")
    parser.add_argument("--steps", type=int, default=10, help="timed runs per row (default 10)")
    parser.add_argument("--chunks", type=int, nargs="+", default=[1, 2, 4, 8], help="chunk counts of the bare step")
    parser.add_argument("--rate", default="10gbit", help="the emulated link rate (default 10gbit)")
    parser.add_argument("--object-store-mib", type=int, default=600, help="Ray object store per node (default 600)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        print(json.dumps(measure(args.inner, args.mib, args.steps, args.chunks, args.object_store_mib)))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.dist import load_averages, tcp_probe
    from bench.netns import RAY_ENV, netns_cluster, unavailable

    reason = unavailable()
    if reason is not None:
        raise SystemExit(f"cannot run: {reason}")
    load = load_averages()
    with netns_cluster(2, rate=args.rate, object_store_mib=args.object_store_mib) as cluster:
        tcp = tcp_probe(cluster)
        argv = [sys.executable, __file__, "--inner", cluster.ray_address, "--mib", str(args.mib),
                "--steps", str(args.steps), "--object-store-mib", str(args.object_store_mib),
                "--chunks", *map(str, args.chunks)]
        done = cluster.run(0, argv, capture_output=True, text=True, timeout=900, env={**os.environ, **RAY_ENV})
        if done.returncode != 0:
            raise SystemExit(f"the profile on the namespace cluster failed: {done.stderr[-3000:]}")
        rows: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
        link_ms = args.mib * 2**20 * 8 / (cluster.gbit * 1e9) * 1e3
        rows = {"link time (size / rate)": round(link_ms, 2), "one TCP stream": round(args.mib / tcp * 1e3, 2), **rows}
    if args.json:
        print(json.dumps({"mib": args.mib, "rate": args.rate, "load": load, "ms": rows}))
        return
    print(f"{args.mib} MiB between two namespaces ({args.rate}), median of {args.steps}, load {load} at the start")
    for name, ms in rows.items():
        print(f"{name:48} {ms:8.2f} ms  {ms / link_ms:5.2f}x link")


if __name__ == "__main__":
    main()
