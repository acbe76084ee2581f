"""Pushes of key lists give MXNet 1.9.1's values: a key listed twice in one push or pushpull
is pushed once with all its values (summed: one update, not two), keys are updated in MXNet's
order (int keys ascending, str keys in the order they were first initialised), and a custom
updater receives a str key as bytes. Recorded from MXNet by
``tests/data/make_mxnet_kv_key_lists.py`` over ``kv_key_list_programs.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

import kvcli.mx as mx

from . import kv_key_list_programs as programs

REFERENCE = json.loads((Path(__file__).resolve().parents[1] / "data" / "mxnet_kv_key_lists.json").read_text())
CASES = REFERENCE["cases"]


def test_reference_is_from_mxnet_191_and_has_duplicate_keys() -> None:
    assert REFERENCE["mxnet"] == "1.9.1"
    steps = [s for c in CASES for s in c["plan"]["steps"]]
    assert sum(len(s["entries"]) > len({e["key"] for e in s["entries"]}) for s in steps) > 50
    # the cases are the plans the programs make now
    assert [c["plan"] for c in CASES] == [programs.make_plan(c["plan"]["seed"]) for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['plan']['seed']}-{c['plan']['kvtype']}-{c['plan']['mode']}"
                                             for c in CASES])
def test_key_lists_as_mxnet(make_kv: Callable[..., Any], case: dict[str, Any]) -> None:
    plan = case["plan"]
    got = programs.run(mx, plan, make_kv(plan["kvtype"], num_devices=4) if plan["kvtype"] == "device"
                       else make_kv(plan["kvtype"]))
    assert got["calls"] == case["mxnet"]["calls"]
    assert got["pushpulled"] == case["mxnet"]["pushpulled"]
    assert got["pulled"] == case["mxnet"]["pulled"]


def test_a_key_listed_twice_is_one_push(make_kv: Callable[..., Any]) -> None:
    kv = make_kv("local")
    kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.1))
    kv.init("w", mx.nd.ones((2,)))
    kv.push(["w", "w"], [mx.nd.ones((2,)) * 0.5, mx.nd.ones((2,)) * -2])
    out = mx.nd.zeros((2,))
    kv.pull("w", out=out)
    assert out.asnumpy().tolist() == [1.1000006198883057] * 2  # one Adam step on -1.5 (MXNet 1.9.1)
