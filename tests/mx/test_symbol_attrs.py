"""Symbol attributes as MXNet 1.9.1 stores them: ``attr={'lr_mult': ...}`` on an operator
reaches its weight and bias as ``__lr_mult__``, ``Variable(lr_mult=)`` and ``mx.AttrScope``
too; ``list_attr`` / ``attr_dict`` / ``attr`` show hidden keys under both names; an optimizer
made with ``sym=`` scales those weights' rates; and the JSON is MXNet's (Pooling's and LRN's
hidden outputs counted in ``node_row_ptr``), which MXNet loads. Recorded from MXNet by
``tests/data/make_mxnet_symbol_attr_reference.py`` over ``symbol_attr_programs.py``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import kvcli.mx as mx
from kvcli.errors import SymbolError

from . import symbol_attr_programs as programs

REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "mxnet_symbol_attr_reference.json").read_text())


def _describe(name: str) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return programs.describe(mx, programs.PROGRAMS[name](mx))


def test_reference_is_from_mxnet_191() -> None:
    assert REFERENCE["mxnet_version"] == "1.9.1" and set(REFERENCE["programs"]) == set(programs.PROGRAMS)


@pytest.mark.parametrize("name", sorted(programs.PROGRAMS))
def test_attributes_and_json_are_mxnets(name: str) -> None:
    want = dict(REFERENCE["programs"][name])
    want.pop("kvcli_json_in_mxnet")
    got = _describe(name)
    for part in want:
        assert got[part] == pytest.approx(want[part]) if part in ("lrs", "wds") else got[part] == want[part], part


@pytest.mark.parametrize("name", sorted(programs.PROGRAMS))
def test_mxnet_loaded_the_json_kvcli_writes(name: str) -> None:
    loaded = REFERENCE["programs"][name]["kvcli_json_in_mxnet"]
    assert loaded["loaded"], loaded.get("error")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = programs.PROGRAMS[name](mx).tojson()
    # the JSON MXNet loaded at recording time is the one kvcli writes now
    assert text == loaded["kvcli_json"], "kvcli's JSON changed: re-record with make_mxnet_symbol_attr_reference.py"


def test_a_scaled_rate_reaches_the_update() -> None:
    net = programs.dense_with_multipliers(mx)
    names = net.list_arguments()
    opt = mx.optimizer.SGD(sym=net, learning_rate=1.0, param_idx2name=dict(enumerate(names)))
    updater = mx.optimizer.get_updater(opt)
    weight, grad = mx.nd.ones((8, 4)), mx.nd.ones((8, 4))
    updater(names.index("fc1_weight"), grad, weight)
    assert weight.asnumpy()[0, 0] == pytest.approx(1 - 0.01)  # fc1's lr_mult 0.01 scaled the step


@pytest.mark.parametrize("name", sorted(programs.REFUSED))
def test_refused_as_mxnet_refuses(name: str) -> None:
    want = REFERENCE["refused"][name]
    assert want is not None
    with pytest.raises((SymbolError, ValueError)) as info:
        programs.REFUSED[name](mx)
    assert isinstance(info.value, ValueError)
    if name == "deprecated_suffix_key":
        assert "setting variable attributes with fc_weight_lr_mult is deprecated" in want["message"]
        assert "setting variable attributes with fc_weight_lr_mult is deprecated" in str(info.value)
