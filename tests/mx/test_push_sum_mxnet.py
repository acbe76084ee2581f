"""The sum of a push from 1 to 9 devices on ``local`` and ``device`` stores gives MXNet
1.9.1's bits: ``local`` adds in CommCPU's groups of four, ``device`` left to right, so the
two differ in the last bits from three devices on, as MXNet's do
(tests/data/make_mxnet_push_sum_reference.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import kvcli.mx as mx

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "mxnet_push_sum_reference.json"
CASES = json.loads(REFERENCE.read_text())["cases"]


@pytest.mark.parametrize("kvtype", ["local", "device"])
def test_push_from_several_devices_sums_in_mxnets_order(make_kv: Callable[..., Any], kvtype: str) -> None:
    kv = make_kv(kvtype)
    wrong = []
    for key, case in enumerate(CASES):
        dtype, inputs = case["dtype"], case["inputs"]
        size = len(inputs[0])
        kv.init(key, mx.nd.zeros((size,), dtype=dtype))
        kv.push(key, [mx.nd.array(np.array(v), ctx=mx.cpu(k), dtype=dtype) for k, v in enumerate(inputs)])
        out = mx.nd.zeros((size,), dtype=dtype)
        kv.pull(key, out=out)
        expected = np.array(case[kvtype], dtype=dtype)
        if not np.array_equal(out.asnumpy(), expected):
            wrong.append(f"{dtype} x{len(inputs)}")
    assert wrong == []
    # the recorded sums themselves differ between the store types from three devices on
    assert any(c["local"] != c["device"] for c in CASES if len(c["inputs"]) == 3)
