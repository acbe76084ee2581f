"""Time ``nd``'s element-wise maths on 1M-value arrays: kvcli, numpy's own ufuncs, or MXNet.

kvcli computes each value as MXNet's C library does (``kvcli.arrays.fmath``: glibc's float
algorithms replayed in numpy; the C library itself for float64), which costs more than
numpy's SIMD ufuncs; this prints what it costs. ``--engine numpy`` times the numpy ufunc
(what kvcli called before, float32 in float32), ``--engine mxnet`` MXNet itself (run it with a
Python that has mxnet 1.9.1).

    python bench/nd_math.py [--engine kvcli|numpy|mxnet] [--size 1000000] [--repeat 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

FUNCTIONS = ("exp", "log", "log10", "expm1", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "arcsin", "arctan",
             "sinh", "arcsinh", "erf", "cbrt", "sqrt", "power", "gamma")
NUMPY: dict[str, Callable[..., Any]] = {
    "exp": np.exp, "log": np.log, "log10": np.log10, "expm1": np.expm1, "log1p": np.log1p, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "arcsin": np.arcsin,
    "arctan": np.arctan, "sinh": np.sinh, "arcsinh": np.arcsinh, "erf": None, "cbrt": np.cbrt, "sqrt": np.sqrt,
    "power": np.power, "gamma": None,
}


def inputs(name: str, dtype: str, size: int) -> tuple[np.ndarray, ...]:
    """Values inside each function's domain (where the work is), fixed by a seed."""
    rng = np.random.default_rng(7)
    low, high = {"log": (0.01, 100), "log10": (0.01, 100), "log1p": (-0.9, 100), "arcsin": (-1, 1), "sqrt": (0, 100),
                 "gamma": (0.1, 20), "power": (0.1, 10)}.get(name, (-10, 10))
    x = rng.uniform(low, high, size).astype(dtype)
    return (x, rng.uniform(-3, 3, size).astype(dtype)) if name == "power" else (x,)


def caller(engine: str, name: str) -> Callable[..., Any] | None:
    if engine == "numpy":
        return NUMPY[name]
    module: Any
    if engine == "mxnet":
        import mxnet  # noqa: F401 - only in MXNet's Python

        module = sys.modules["mxnet"].nd
    else:
        from kvcli.mx import nd as module
    function = getattr(module, name, None)
    if function is None:
        return None
    return lambda *arrays: function(*arrays).wait_to_read()


def measure(engine: str, size: int, repeat: int, dtypes: list[str]) -> dict[str, dict[str, float | None]]:
    results: dict[str, dict[str, float | None]] = {}
    for name in FUNCTIONS:
        row: dict[str, float | None] = {}
        call = caller(engine, name)
        for dtype in dtypes:
            if call is None or (name == "gamma" and dtype == "float64" and engine == "kvcli" and size > 200_000):
                row[dtype] = None
                continue
            arrays = inputs(name, dtype, size)
            if engine != "numpy":
                module = sys.modules["mxnet"].nd if engine == "mxnet" else __import__("kvcli.mx", fromlist=["nd"]).nd
                arrays = tuple(module.array(a, dtype=dtype) for a in arrays)
            call(*arrays)  # warm up
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                call(*arrays)
                times.append(time.perf_counter() - start)
            row[dtype] = statistics.median(times) * 1e3
        results[name] = row
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("kvcli", "numpy", "mxnet"), default="kvcli")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dtypes", default="float32,float64,float16")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    dtypes = args.dtypes.split(",")
    with np.errstate(all="ignore"):
        results = measure(args.engine, args.size, args.repeat, dtypes)
    if args.json:
        print(json.dumps({"engine": args.engine, "size": args.size, "ms": results}))
        return
    print(f"{args.engine}: median ms per call on {args.size:,} values")
    print("function   " + "".join(f"{d:>10}" for d in dtypes))
    for name, row in results.items():
        print(f"{name:10} " + "".join(f"{row[d]:10.1f}" if row[d] is not None else f"{'-':>10}" for d in dtypes))


if __name__ == "__main__":
    main()
