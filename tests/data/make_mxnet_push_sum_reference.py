"""Record the sums MXNet 1.9.1's ``local`` and ``device`` stores make of a push from several
devices into mxnet_push_sum_reference.json.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv):

    $MXNET_PYTHON tests/data/make_mxnet_push_sum_reference.py

``local`` (CommCPU) and ``device`` (CommDevice) add the devices' values in different orders,
so their float sums differ in the last bits from three devices on. For 1 to 9 devices and
float32, float16 and float64 values, each device's value is made from integers (no random
numbers, so the inputs are the same under any numpy); the inputs are recorded next to the
sums, as Python floats, which read back to the same bits.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).with_name("mxnet_push_sum_reference.json")
SIZE = 24
DEVICES = range(1, 10)
DTYPES = ("float32", "float16", "float64")


def device_value(k: int, dtype: str) -> np.ndarray:
    """Device ``k``'s value: fractions with different denominators, signs and magnitudes."""
    i = np.arange(SIZE)
    return (((i * (k + 3)) % 23 - 11) * (1 + (k % 3) * 37) / (7.0 + 2 * k)).astype(dtype)


def main() -> None:
    cases = []
    for dtype in DTYPES:
        for n in DEVICES:
            values = [device_value(k, dtype) for k in range(n)]
            case = {"dtype": dtype, "inputs": [v.tolist() for v in values]}
            for kvtype in ("local", "device"):
                kv = mx.kv.create(kvtype)
                kv.init(0, mx.nd.zeros((SIZE,), dtype=dtype))
                kv.push(0, [mx.nd.array(v, ctx=mx.cpu(k), dtype=dtype) for k, v in enumerate(values)])
                out = mx.nd.zeros((SIZE,), dtype=dtype)
                kv.pull(0, out=out)
                case[kvtype] = out.asnumpy().tolist()
            cases.append(case)
    OUT.write_text(json.dumps({"mxnet": mx.__version__, "cases": cases}) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
