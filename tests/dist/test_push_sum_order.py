"""A dist worker's push from several devices sums them in MXNet 1.9.1's order: its dist store
merges a worker's devices with CommCPU, as the local store does (only a type naming "device"
gets CommDevice: src/kvstore/kvstore.cc), so one worker's sum equals the recorded ``local``
sums of tests/data/mxnet_push_sum_reference.json, bit for bit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

import kvcli

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "mxnet_push_sum_reference.json"
CASES = json.loads(REFERENCE.read_text())["cases"]


def test_a_dist_push_from_several_devices_sums_in_mxnets_cpu_order(ray_cluster: Any) -> None:
    wrong = []
    with kvcli.create("dist_sync") as kv:
        for key, case in enumerate(CASES):
            dtype, inputs = case["dtype"], case["inputs"]
            kv.init(key, np.zeros(len(inputs[0]), dtype=dtype))
            kv.push(key, [np.array(v, dtype=dtype) for v in inputs])
            if not np.array_equal(kv.pull(key), np.array(case["local"], dtype=dtype)):
                wrong.append(f"{dtype} x{len(inputs)}")
    assert wrong == []
    assert any(c["local"] != c["device"] for c in CASES if len(c["inputs"]) >= 3)  # the order matters
