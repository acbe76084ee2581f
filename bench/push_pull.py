"""Push from 4 devices × 64 MiB float32, then pull: ``device`` vs ``local`` vs numpy.

The floor is a plain in-process numpy reduce of the same arrays plus the copy a pull makes.
With ``--mxnet-python PATH`` (a Python that has MXNet 1.9.1) MXNet's own local KVStore with
four ``cpu(i)`` contexts runs the same work, side by side. Not a test: it prints a table.

    python bench/push_pull.py [--mib 64] [--devices 4] [--repeat 7] [--mxnet-python PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import textwrap
import time
from typing import Callable

import numpy as np

import kvcli
from kvcli.store.device.shm import device_array


def median_seconds(run: Callable[[], None], repeat: int) -> float:
    run()  # warm-up: first-touch page faults and lazy process start are not the steady state
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def numpy_floor(values: list[np.ndarray], repeat: int) -> float:
    merged = np.empty_like(values[0])
    out = np.empty_like(values[0])

    def run() -> None:
        np.add(values[0], values[1], out=merged)
        for value in values[2:]:
            np.add(merged, value, out=merged)
        np.copyto(out, merged)

    return median_seconds(run, repeat)


def on_devices(values: list[np.ndarray]) -> list[np.ndarray]:
    """The same values placed in device memory, as MXNet's arrays live on cpu(i)."""
    placed = []
    for value in values:
        array = device_array(value.shape, value.dtype)
        np.copyto(array, value)
        placed.append(array)
    return placed


def kvcli_store(kind: str, values: list[np.ndarray], repeat: int, devices: int) -> float:
    options = {"num_devices": devices} if kind == "device" else {}
    out = np.empty_like(values[0])
    with kvcli.create(kind, **options) as kv:
        kv.init(0, np.zeros_like(values[0]))

        def run() -> None:
            kv.push(0, values)
            kv.pull(0, out=out)

        seconds = median_seconds(run, repeat)
        np.testing.assert_array_equal(out, sum(values[1:], values[0]))
    return seconds


MXNET_SCRIPT = textwrap.dedent(
    """
    import json, statistics, sys, time
    import mxnet as mx
    n, devices, repeat = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    kv = mx.kv.create("local")
    kv.init(0, mx.nd.zeros((n,)))
    values = [mx.nd.ones((n,), ctx=mx.cpu(i)) for i in range(devices)]
    out = mx.nd.empty((n,))
    def run():
        kv.push(0, values)
        kv.pull(0, out=out)
        out.wait_to_read()
    run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter(); run(); times.append(time.perf_counter() - start)
    assert float(out[0].asscalar()) == devices
    print(json.dumps({"seconds": statistics.median(times), "version": mx.__version__}))
    """
)


def mxnet_local(python: str, elements: int, devices: int, repeat: int) -> tuple[float, str]:
    result = subprocess.run(
        [python, "-c", MXNET_SCRIPT, str(elements), str(devices), str(repeat)],
        capture_output=True, text=True, check=True, timeout=600,
    )
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    return payload["seconds"], payload["version"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=64, help="MiB per device (default 64)")
    parser.add_argument("--devices", type=int, default=4, help="devices pushing (default 4)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs; the median is kept")
    parser.add_argument("--mxnet-python", help="a Python interpreter with MXNet 1.9.1 installed")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    elements = args.mib * 1024 * 1024 // 4
    values = [np.full(elements, 1.0, np.float32) for _ in range(args.devices)]
    pushed_bytes = args.mib * 1024 * 1024 * args.devices
    rows: dict[str, float] = {
        "numpy floor": numpy_floor(values, args.repeat),
        "kvcli local": kvcli_store("local", values, args.repeat, args.devices),
        "kvcli device": kvcli_store("device", on_devices(values), args.repeat, args.devices),
        "kvcli device (copy in)": kvcli_store("device", values, args.repeat, args.devices),
    }
    if args.mxnet_python:
        seconds, version = mxnet_local(args.mxnet_python, elements, args.devices, args.repeat)
        rows[f"mxnet {version} local"] = seconds
    floor = rows["numpy floor"]
    report = {
        name: {
            "ms": round(seconds * 1e3, 2),
            "GiB_per_s": round(pushed_bytes / seconds / 2**30, 2),
            "x_floor": round(seconds / floor, 2),
        }
        for name, seconds in rows.items()
    }
    mx_name = next((n for n in rows if n.startswith("mxnet")), None)
    if mx_name:
        report["device_vs_mxnet_throughput"] = round(rows[mx_name] / rows["kvcli device"], 2)
    if args.json:
        print(json.dumps(report))
        return
    print(f"push {args.devices} x {args.mib} MiB float32 + pull, median of {args.repeat}")
    print(f"{'':22} {'ms':>9} {'GiB/s':>8} {'x floor':>8}")
    for name in rows:
        r = report[name]
        print(f"{name:22} {r['ms']:9.2f} {r['GiB_per_s']:8.2f} {r['x_floor']:8.2f}")
    if mx_name:
        print(f"kvcli device throughput / MXNet local: {report['device_vs_mxnet_throughput']:.2f}x")


if __name__ == "__main__":
    main()
