"""One-operator symbols built with ``kvcli.mx.sym`` write MXNet 1.9.1's JSON, as recorded by
tests/data/make_mxnet_compose_reference.py: the ``__init__`` MXNet puts on some input
variables while composing (BatchNorm's moving statistics, PReLU's gamma; created or given) and
``node_row_ptr`` (every output a node has, hidden ones included), also for MXNet's own JSON
loaded and written back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kvcli.mx as mx

DATA = Path(__file__).resolve().parents[1] / "data"
CASES = json.loads((DATA / "mxnet_compose_reference.json").read_text())


def _id(case: dict[str, Any]) -> str:
    return f"{case['op']}-{json.dumps(case['kwargs'], sort_keys=True)}-{sorted(case['given'])}"


def _build(case: dict[str, Any]) -> Any:
    data = [mx.sym.Variable(f"data{i}") for i in range(case["n_data"])]
    inputs = {slot: mx.sym.Variable(var) for slot, var in case["given"].items()}
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    return getattr(mx.sym, case["op"])(*data, **inputs, **kwargs, name="n")


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_built_symbol_json_is_mxnets(case: dict[str, Any]) -> None:
    built = _build(case)
    assert json.loads(built.tojson()) == case["json"]
    assert built.list_outputs() == case["outputs"]


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_loaded_json_written_back_keeps_node_row_ptr(case: dict[str, Any]) -> None:
    loaded = mx.sym.load_json(json.dumps(case["json"]))
    assert json.loads(loaded.tojson()) == case["json"]


def test_given_variable_takes_the_init_of_its_slot() -> None:
    """MXNet sets ``__init__`` on the caller's own variable (every symbol sharing it sees it),
    unless that variable already has one."""
    g = mx.sym.Variable("g")
    mx.sym.LeakyReLU(mx.sym.Variable("x"), gamma=g, act_type="prelu")
    assert g.attr("__init__") == '["Constant", {"value": 0.25}]'
    mine = mx.sym.Variable("mm", init='["one", {}]')
    mx.sym.BatchNorm(mx.sym.Variable("x"), moving_mean=mine)
    assert mine.attr("__init__") == '["one", {}]'
