"""The seed tutorial's numbers (DESIGN.md), one test each, on every single-machine backend."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx import nd

ROOT = Path(__file__).resolve().parents[2]
SHAPE = (3, 3)


@pytest.fixture(params=["local", "device"])
def kv(request: pytest.FixtureRequest):
    options = {"num_devices": 2} if request.param == "device" else {}
    with mx.kv.create(request.param, **options) as store:
        yield store


def _pull(kv, key=3, shape=SHAPE) -> np.ndarray:
    a = nd.zeros(shape)
    kv.pull(key, out=a)
    return a.asnumpy()


def _stored_plus_twice_input(calls):
    def updater(key, input_value, stored_value):
        calls.append((key, input_value.shape, stored_value.shape))
        stored_value[:] += input_value * 2

    return updater


def test_init_then_pull_gives_2(kv) -> None:
    kv.init(3, nd.ones(SHAPE) * 2)
    np.testing.assert_array_equal(_pull(kv), np.full(SHAPE, 2, np.float32))


def test_push_overwrites_with_8(kv) -> None:
    kv.init(3, nd.ones(SHAPE) * 2)
    kv.push(3, nd.ones(SHAPE) * 8)
    np.testing.assert_array_equal(_pull(kv), np.full(SHAPE, 8, np.float32))


def test_reinit_zeros_then_push_from_four_devices_sums_to_4(kv) -> None:
    kv.init(3, nd.ones(SHAPE) * 8)
    kv.init(3, nd.zeros(SHAPE))
    kv.push(3, [nd.ones(SHAPE, ctx=mx.cpu(i)) for i in range(4)])
    np.testing.assert_array_equal(_pull(kv), np.full(SHAPE, 4, np.float32))


def test_custom_updater_gives_6_and_is_called_once(kv) -> None:
    calls: list = []
    kv.init(3, nd.ones(SHAPE) * 4)
    kv.set_updater(_stored_plus_twice_input(calls))
    kv.push(3, nd.ones(SHAPE))
    np.testing.assert_array_equal(_pull(kv), np.full(SHAPE, 6, np.float32))
    assert calls == [(3, SHAPE, SHAPE)]


def test_pull_into_four_devices_gives_6_each(kv) -> None:
    kv.init(3, nd.ones(SHAPE) * 6)
    outs = [nd.zeros(SHAPE, ctx=mx.cpu(i)) for i in range(4)]
    kv.pull(3, out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 6, np.float32))
    assert [o.context for o in outs] == [mx.cpu(i) for i in range(4)]


def test_three_keys_with_updater_give_3_and_call_per_key_in_order(kv) -> None:
    calls: list = []
    kv.set_updater(_stored_plus_twice_input(calls))
    keys = [5, 7, 9]
    kv.init(keys, [nd.ones((2, 2)) for _ in keys])
    kv.push(keys, [nd.ones((2, 2)) for _ in keys])
    outs = [nd.zeros((2, 2)) for _ in keys]
    kv.pull(keys, out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full((2, 2), 3, np.float32))
    assert [c[0] for c in calls] == keys


def test_three_keys_from_two_devices_give_4_5(kv) -> None:
    calls: list = []
    kv.set_updater(_stored_plus_twice_input(calls))
    keys = [10, 11, 12]
    contexts = [mx.cpu(i) for i in range(2)]
    kv.init(keys, [nd.ones((2, 2)) * 0.5 for _ in keys])
    kv.push(keys, [[nd.ones((2, 2), ctx=c) for c in contexts] for _ in keys])
    pulled = [[nd.zeros((2, 2), ctx=c) for c in contexts] for _ in keys]
    kv.pull(keys, out=pulled)
    for per_key in pulled:
        for out in per_key:
            np.testing.assert_array_equal(out.asnumpy(), np.full((2, 2), 4.5, np.float32))
    assert [c[0] for c in calls] == keys


@pytest.mark.parametrize("store_type", ["local", "device"])
def test_tutorial_script_prints_the_tutorials_numbers(store_type: str) -> None:
    """The tutorial's own code, import line changed, prints what MXNet printed."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "seed_tutorial.py"), store_type],
        capture_output=True, text=True, timeout=60, check=True,
    )
    rows = [line.strip("[] ").split() for line in result.stdout.splitlines() if line.startswith(("[", " ["))]
    values = [float(v) for row in rows for v in row]
    expected = [2] * 9 + [8] * 9 + [4] * 9 + [6] * 9 + [6] * 9 + [3] * 4 + [4.5] * 4
    assert values == expected
    assert result.stdout.count("Updater logic: key") == 1 + 3 + 3
    assert "Updater logic: key 3, input shape (3, 3), stored shape (3, 3)" in result.stdout
    assert result.stderr == ""
