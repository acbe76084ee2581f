"""Cost of a persisted push: ``Session.push`` of a 256 MiB float32 value vs a raw write.

The raw write is the floor: the same bytes written to a new file and fsynced. A persisted
push also reads nothing it does not need, runs the updater, writes the new .npy beside the
old one, fsyncs, renames the manifest and removes the old file. Target: <= 1.3x the raw write.

    python bench/session_push.py [--mib 256] [--repeat 5] [--updater assign] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kvcli.session import Session


def raw_write(folder: Path, array: np.ndarray, index: int) -> float:
    """Write the bytes to a new file and fsync: the floor the issue names."""
    path = folder / f"raw-{index}.bin"
    start = time.perf_counter()
    with open(path, "wb") as handle:
        handle.write(memoryview(array).cast("B"))
        handle.flush()
        os.fsync(handle.fileno())
    elapsed = time.perf_counter() - start
    path.unlink()
    return elapsed


def raw_overwrite(path: Path, array: np.ndarray) -> float:
    """Rewrite an existing file of the same size in place and fsync: the stricter floor,
    since a session push of a big value reuses a spare file the same way."""
    start = time.perf_counter()
    with os.fdopen(os.open(path, os.O_WRONLY), "wb") as handle:
        handle.write(memoryview(array).cast("B"))
        handle.flush()
        os.fsync(handle.fileno())
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--updater", default="assign")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    n = args.mib * (1 << 20) // 4
    values = [np.full(n, i, np.float32) for i in range(2)]
    with tempfile.TemporaryDirectory(prefix="kvcli-bench-", dir=os.environ.get("KVCLI_BENCH_DIR")) as tmp:
        home = Path(tmp)
        raw_times, overwrite_times, push_times = [], [], []
        scratch = home / "overwrite.bin"
        scratch.write_bytes(memoryview(values[0]).cast("B"))
        with Session("bench", home) as session:
            session.init(["big"], [values[0]])
            session.set_updater(args.updater)
        for i in range(args.repeat + 1):
            raw = raw_write(home, values[i % 2], i)
            overwrite = raw_overwrite(scratch, values[i % 2])
            with Session("bench", home) as session:  # a fresh process-like session each time
                start = time.perf_counter()
                session.push(["big"], [values[i % 2]])
                pushed = time.perf_counter() - start
            if i:  # the first round warms the page cache
                raw_times.append(raw)
                overwrite_times.append(overwrite)
                push_times.append(pushed)
    result = {
        "mib": args.mib,
        "updater": args.updater,
        "raw_write_median_s": statistics.median(raw_times),
        "raw_overwrite_median_s": statistics.median(overwrite_times),
        "persisted_push_median_s": statistics.median(push_times),
    }
    result["ratio"] = result["persisted_push_median_s"] / result["raw_write_median_s"]
    result["ratio_to_overwrite"] = result["persisted_push_median_s"] / result["raw_overwrite_median_s"]
    if args.json:
        print(json.dumps(result))
        return
    print(f"raw write + fsync of {args.mib} MiB   median {result['raw_write_median_s'] * 1000:7.1f} ms")
    print(f"raw overwrite in place + fsync  median {result['raw_overwrite_median_s'] * 1000:7.1f} ms")
    print(f"persisted push ({args.updater})       median {result['persisted_push_median_s'] * 1000:7.1f} ms")
    print(f"ratio to a raw write {result['ratio']:.2f} (target <= 1.3); "
          f"to an in-place overwrite {result['ratio_to_overwrite']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
