"""Parameter totals and output shapes equal MXNet 1.9.1's ``infer_shape`` on real models.

The expected numbers were recorded with MXNet 1.9.1 by
``tests/data/make_mxnet_model_reference.py`` into ``tests/data/mxnet_model_reference.json``
(learnable = sum of argument shapes minus the given inputs and labels; aux = auxiliary
states). Two files need a change before stock MXNet loads them, made by that script in memory:
the SSD graph's 0.9 op names (``MultiBoxPrior`` -> ``_contrib_MultiBoxPrior``) and the OCR
graph's WarpCTC plugin (cut at its input; WarpCTC has no parameters). kvcli reads both files
as published.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvcli.errors import ShapeInferenceError
from kvcli.symbol.graph import load_file
from kvcli.symbol.shapes import infer_shapes
from kvcli.symbol.summary import summarize

from .conftest import DATA

REFERENCE = json.loads((DATA / "mxnet_model_reference.json").read_text(encoding="utf-8"))["models"]
CHAR_LSTM = {f"data/{t}": (1,) for t in range(129)}


def test_every_kept_model_has_a_reference() -> None:
    kept = {f"{p.parent.name}/{p.name}" for folder in ("sample_models", "mxnet_models")
            for p in (DATA / folder).glob("*.json")}
    assert kept == set(REFERENCE)


@pytest.mark.parametrize("key", sorted(REFERENCE))
def test_totals_equal_mxnet_infer_shape(key: str) -> None:
    expected = REFERENCE[key]
    inputs = {name: tuple(shape) for name, shape in expected["inputs"].items()}
    summary = summarize(infer_shapes(load_file(DATA / key), inputs))
    assert (summary.params, summary.aux) == (expected["learnable"], expected["aux"])
    assert summary.exact, summary.unknown_params
    assert next(iter(summary.outputs.values())) == tuple(expected["outputs"][0])


def test_ssd_all_three_heads(models: Path) -> None:
    result = infer_shapes(load_file(models / "mxnet_v0.9_ssd300_vgg16_attr.json"),
                          {"data": (1, 3, 300, 300), "label": (1, 58, 6)})
    outputs = [(1, 3, 7308), (1, 29232), (1, 7308)]
    assert [tuple(o) for o in REFERENCE["sample_models/mxnet_v0.9_ssd300_vgg16_attr.json"]["outputs"]] == outputs
    assert list(summarize(result).outputs.values()) == outputs


def test_char_lstm_has_129_heads_and_init_states_follow(models: Path) -> None:
    graph = load_file(models / "mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json")
    result = infer_shapes(graph, CHAR_LSTM)
    summary = summarize(result)
    assert len(summary.outputs) == 129 and set(summary.outputs.values()) == {(1, 84)}
    # init_c is inferred through the elementwise products, as MXNet does; init_h (only
    # consumed by FullyConnected) stays unknown, which does not touch the totals.
    assert summary.inputs["l0_init_c"] == (1, 512)
    assert summary.inputs["l0_init_h"] is None


def test_gluon_mlp_rejects_784_like_mxnet(models: Path) -> None:
    graph = load_file(models / "mxnet_v1.4_gluon_mlp_dropout_attrs.json")
    with pytest.raises(ShapeInferenceError, match=r"\(1024, 625\).*\(1024, 784\)"):
        infer_shapes(graph, {"data": (1, 784)})


def test_gluon_hints_alone_give_param_totals(models: Path) -> None:
    # No --shape: the Gluon MLP's __shape__ hints are complete, so totals are exact.
    summary = summarize(infer_shapes(load_file(models / "mxnet_v1.4_gluon_mlp_dropout_attrs.json")))
    assert summary.params == 1_297_409 and summary.exact


def test_gluon_partial_hints_are_lower_bound_without_shape(models: Path) -> None:
    # The LeNet export hints (10, 0, 5, 5): 0 = deferred dim, so without --shape the conv
    # weights are unknown and the total is a lower bound.
    summary = summarize(infer_shapes(load_file(models / "mxnet_v1.6_gluon_lenet_mnist_attrs.json")))
    assert not summary.exact
    assert summary.total_text(summary.params).startswith("at least ")
    assert "hybridsequential9_conv0_weight" in summary.unknown_params


def test_no_shapes_still_counts_params_that_need_none(models: Path) -> None:
    # Embedding weights do not depend on the input shape.
    summary = summarize(infer_shapes(load_file(models / "mxnet_v0.9_embedding_bag_ffn_attr.json")))
    assert not summary.exact
    assert summary.params >= 80963 * 50
