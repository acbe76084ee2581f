"""Property tests: for random shapes, dtypes and device counts, every backend sums, copies
and calls the updater exactly like the reference (numpy, in MXNet's order: left to right on
``device``, CommCPU's groups of four on ``local``)."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kvcli
from kvcli.store.api import KVStore

DTYPES = [np.float32, np.float64, np.int32, np.int64]


@pytest.fixture(scope="module", params=["local", "device"])
def shared_store(request: pytest.FixtureRequest) -> Iterator[KVStore]:
    options = {"num_devices": 3} if request.param == "device" else {}
    with kvcli.create(request.param, **options) as kv:
        yield kv


@st.composite
def pushes(draw: st.DrawFn) -> tuple[np.ndarray, list[np.ndarray]]:
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6))
    elements = (
        st.floats(-1e3, 1e3, width=32) if np.dtype(dtype).kind == "f" else st.integers(-1000, 1000)
    )
    initial = draw(hnp.arrays(dtype, shape, elements=elements))
    devices = draw(st.integers(1, 5))
    values = [draw(hnp.arrays(dtype, shape, elements=elements)) for _ in range(devices)]
    return initial, values


def reference_sum(values: list[np.ndarray], kind: str = "device") -> np.ndarray:
    """MXNet 1.9.1's order: ``device`` left to right; ``local`` the first value plus each
    following group of up to four, summed left to right (CommCPU's ReduceSumCPU)."""
    if kind == "device":
        total = values[0].copy()
        for value in values[1:]:
            total = total + value
        return total
    total = values[0].copy()
    for start in range(1, len(values), 4):
        total = total + reference_sum(values[start:start + 4])
    return total


@settings(max_examples=60, deadline=None)
@given(case=pushes())
def test_push_of_a_list_stores_the_sum(shared_store: KVStore, case) -> None:
    initial, values = case
    shared_store.init("k", initial)
    shared_store.push("k", values if len(values) > 1 else values[0])
    result = shared_store.pull("k")
    np.testing.assert_array_equal(result, reference_sum(values, shared_store.type))
    assert result.dtype == initial.dtype and result.shape == initial.shape


@settings(max_examples=40, deadline=None)
@given(case=pushes(), outputs=st.integers(1, 4))
def test_pull_copies_and_never_aliases_the_store(shared_store: KVStore, case, outputs: int) -> None:
    initial, _ = case
    shared_store.init("k", initial)
    outs = [np.zeros_like(initial) for _ in range(outputs)]
    shared_store.pull("k", out=outs if outputs > 1 else outs[0])
    for out in outs:
        np.testing.assert_array_equal(out, initial)
        out[...] = 1
    np.testing.assert_array_equal(shared_store.pull("k"), initial)


@settings(max_examples=30, deadline=None)
@given(
    key_count=st.integers(1, 6),
    devices=st.integers(1, 4),
    dtype=st.sampled_from(DTYPES),
)
def test_updater_called_once_per_key_in_order(shared_store: KVStore, key_count: int, devices: int, dtype) -> None:
    keys = [f"key{i}" for i in range(key_count)]
    shared_store.init(keys, [np.zeros(3, dtype) for _ in keys])
    calls: list[tuple[str, np.ndarray]] = []

    def updater(key, merged, stored):
        calls.append((key, merged.copy()))
        stored += merged

    shared_store.set_updater(updater)
    try:
        shared_store.push(keys, [[np.full(3, i + 1, dtype)] * devices for i in range(key_count)])
    finally:
        shared_store.set_updater(None)
    assert [k for k, _ in calls] == keys
    for i, (_, merged) in enumerate(calls):
        np.testing.assert_array_equal(merged, np.full(3, (i + 1) * devices, dtype))
    for i, value in enumerate(shared_store.pull(keys)):
        np.testing.assert_array_equal(value, np.full(3, (i + 1) * devices, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_large_multi_device_push_sums_in_mxnets_order(dtype) -> None:
    """Big enough that every device sums a slice (the parallel path), and summed in blocks."""
    rng = np.random.default_rng(0)
    values = [(rng.standard_normal((700, 300)) * 100).astype(dtype) for _ in range(5)]
    results = []
    for kind, options in (("local", {}), ("device", {"num_devices": 3})):
        with kvcli.create(kind, **options) as kv:
            kv.init(0, np.zeros((700, 300), dtype))
            kv.push(0, values)
            kv.push(0, values[:3])  # fewer values than before: slots are reused
            results.append(kv.pull(0))
            if kind == "device":
                assert len(kv.backend.device_pids) == 3
    np.testing.assert_array_equal(results[0], reference_sum(values[:3], "local"))
    np.testing.assert_array_equal(results[1], reference_sum(values[:3], "device"))
