"""Row-sparse pull of 1,000 rows vs a pull of the whole 1,000,000 × 64 float32 table.

The key is a row-sparse value holding every row (an embedding table); the figure is how much
faster ``row_sparse_pull(key, out=..., row_ids=1000 random ids)`` is than ``pull(key,
out=dense)`` of the whole table. Target: at least 50×, on each store type. With
``--mxnet-python PATH`` (a Python that has MXNet 1.9.1) MXNet's local KVStore runs the same
two pulls. Not a test: it prints a table (``--json`` for bench/report.py).

    python bench/row_sparse_pull.py [--rows 1000000] [--width 64] [--pull 1000]
        [--types local,device] [--repeat 7] [--mxnet-python PATH] [--json]
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
from kvcli.arrays.sparse import RowSparse

TARGET = 50.0


def median_seconds(run: Callable[[], None], repeat: int) -> float:
    run()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def kvcli_pulls(kind: str, table: np.ndarray, ids: np.ndarray, repeat: int) -> dict[str, float]:
    options = {"num_devices": 2} if kind == "device" else {}
    with kvcli.create(kind, **options) as kv:
        kv.init("emb", RowSparse.all_rows(table))
        dense = np.empty_like(table)
        rows = RowSparse.zeros(table.shape, table.dtype)
        whole = median_seconds(lambda: kv.pull("emb", out=dense), repeat)
        some = median_seconds(lambda: kv.row_sparse_pull("emb", out=rows, row_ids=ids), repeat)
        wanted = np.unique(ids)
        assert np.array_equal(rows.indices, wanted) and np.array_equal(rows.data, table[wanted])
        assert np.array_equal(dense, table)
    return {"whole_ms": whole * 1e3, "rows_ms": some * 1e3, "speedup": whole / some}


MXNET_SCRIPT = textwrap.dedent(
    """
    import json, statistics, sys, time
    import numpy as np
    import mxnet as mx
    rows, width, pull, repeat = (int(a) for a in sys.argv[1:5])
    rng = np.random.default_rng(0)
    table = rng.standard_normal((rows, width), dtype=np.float32)
    ids = rng.integers(0, rows, pull)
    kv = mx.kv.create("local")
    kv.init("emb", mx.nd.array(table).tostype("row_sparse"))
    dense = mx.nd.empty((rows, width))
    out = mx.nd.sparse.zeros("row_sparse", (rows, width))
    row_ids = mx.nd.array(ids, dtype="int64")
    def whole():
        kv.pull("emb", out=dense); dense.wait_to_read()
    def some():
        kv.row_sparse_pull("emb", out=out, row_ids=row_ids); out.wait_to_read()
    def median(run):
        run(); times = []
        for _ in range(repeat):
            start = time.perf_counter(); run(); times.append(time.perf_counter() - start)
        return statistics.median(times)
    w, s = median(whole), median(some)
    print(json.dumps({"whole_ms": w * 1e3, "rows_ms": s * 1e3, "speedup": w / s}))
    """
)


def mxnet_pulls(python: str, rows: int, width: int, pull: int, repeat: int) -> dict[str, float]:
    done = subprocess.run(
        [python, "-c", MXNET_SCRIPT, str(rows), str(width), str(pull), str(repeat)],
        capture_output=True, text=True, timeout=1800, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"MXNet run failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--pull", type=int, default=1000, help="row ids per row_sparse_pull")
    parser.add_argument("--types", default="local,device", help="comma-separated store types")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--mxnet-python", help="a Python with MXNet 1.9.1, for the same pulls")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    table = rng.standard_normal((args.rows, args.width), dtype=np.float32)
    ids = rng.integers(0, args.rows, args.pull)
    results = {kind: kvcli_pulls(kind, table, ids, args.repeat) for kind in args.types.split(",")}
    if args.mxnet_python:
        results["mxnet 1.9.1 local"] = mxnet_pulls(args.mxnet_python, args.rows, args.width, args.pull, args.repeat)
    if args.json:
        print(json.dumps({"rows": args.rows, "width": args.width, "pull": args.pull, "results": results}))
        return
    mib = table.nbytes / 2**20
    print(f"row_sparse_pull of {args.pull} rows vs pull of the whole {args.rows:,} x {args.width} float32 table ({mib:.0f} MiB)")
    print(f"{'store':<20} {'whole pull':>12} {'rows pull':>12} {'speedup':>9}  target >= {TARGET:g}x")
    for name, r in results.items():
        mark = "" if name.startswith("mxnet") else ("met" if r["speedup"] >= TARGET else "MISSED")
        print(f"{name:<20} {r['whole_ms']:>9.1f} ms {r['rows_ms']:>9.3f} ms {r['speedup']:>8.0f}x  {mark}")


if __name__ == "__main__":
    main()
