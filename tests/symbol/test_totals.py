"""Parameter totals and output shapes equal MXNet 1.9.1's ``infer_shape`` on real models.

Expected numbers: /work/shared/sample_models/SOURCES.md and mxnet_reference/README.md, plus
the four models SOURCES.md gives no totals for, measured here with MXNet 1.9.1
(``mx.sym.load`` + ``infer_shape``; learnable = sum of argument shapes minus given inputs
and labels):

* ssd300: MultiBoxPrior/MultiBoxTarget renamed to their 1.x ``_contrib_`` names,
  data=(1,3,300,300), label=(1,58,6) → 23,583,783 (includes the 512-element
  ``relu4_3_scale``), outputs (1,3,7308), (1,29232), (1,7308).
* ocr_lstm_warpctc: WarpCTC is a plugin absent from stock MXNet; with the graph cut at its
  input (the FC before it; WarpCTC has no parameters) and data=(1,30,80) → 247,743
  (data width D enters only l0_i2h_weight: 512*D; D=100 gives 257,983).
* char_lstm (6084 nodes): data/0..128=(1,) → 5,844,052, 129 outputs of (1, 84).
* embedding_bag_ffn: data=(1,200) → 4,695,085, output (1, 12635).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvcli.errors import ShapeInferenceError
from kvcli.symbol.graph import load_file
from kvcli.symbol.shapes import infer_shapes
from kvcli.symbol.summary import summarize

CHAR_LSTM = {f"data/{t}": (1,) for t in range(129)}

CASES = [
    # folder, file, inputs, learnable, aux, first output
    ("sample_models", "mxnet_v1.3_resnet50_attrs.json", {"data": (1, 3, 224, 224)}, 23_629_573, 45_574, (1, 63)),
    ("sample_models", "mxnet_v1.4_insightface_fresnet_1052nodes_attrs.json", {"data": (1, 3, 112, 112)},
     47_967_008, 121_568, (1, 384)),
    ("sample_models", "mxnet_v0.8_vgg16_reduced_param.json", {"data": (1, 3, 300, 300)}, 21_508_904, 0,
     (1, 1000, 9, 9)),
    ("sample_models", "mxnet_v1.6_gluon_lenet_mnist_attrs.json", {"data": (1, 1, 28, 28)}, 14_765, 0, (1, 10)),
    ("sample_models", "mxnet_v1.4_gluon_mlp_dropout_attrs.json", {"data": (1, 625)}, 1_297_409, 0, (1, 1)),
    ("sample_models", "mxnet_v0.8_mlp_batchnorm.json", {"data": (1, 200)}, 34_654, 20, (1, 10)),
    ("sample_models", "mxnet_v0.9_embedding_bag_ffn_attr.json", {"data": (1, 200)}, 4_695_085, 0, (1, 12635)),
    ("sample_models", "mxnet_v0.9_ssd300_vgg16_attr.json", {"data": (1, 3, 300, 300), "label": (1, 58, 6)},
     23_583_783, 0, (1, 3, 7308)),
    ("sample_models", "mxnet_v0.9_ocr_lstm_warpctc_attr.json", {"data": (1, 30, 80)}, 247_743, 0, (30, 63)),
    ("sample_models", "mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json", CHAR_LSTM, 5_844_052, 0, (1, 84)),
    ("mxnet_reference", "mlp-symbol.json", {"data": (32, 784)}, 109_386, 0, (32, 10)),
    ("mxnet_reference", "lenet-symbol.json", {"data": (32, 1, 28, 28)}, 431_080, 0, (32, 10)),
    ("mxnet_reference", "squeezenet1.0-symbol.json", {"data": (1, 3, 224, 224)}, 1_248_424, 0, (1, 1000)),
    ("mxnet_reference", "densenet121-symbol.json", {"data": (1, 3, 224, 224)}, 7_978_856, 83_648, (1, 1000)),
    ("mxnet_reference", "inceptionv3-symbol.json", {"data": (1, 3, 299, 299)}, 23_834_568, 34_432, (1, 1000)),
]


@pytest.mark.parametrize("folder,name,inputs,learnable,aux,output", CASES, ids=[c[1] for c in CASES])
def test_totals_equal_mxnet_infer_shape(shared: Path, folder: str, name: str, inputs: dict,
                                        learnable: int, aux: int, output: tuple) -> None:
    result = infer_shapes(load_file(shared / folder / name), inputs)
    summary = summarize(result)
    assert (summary.params, summary.aux) == (learnable, aux)
    assert summary.exact, summary.unknown_params
    assert next(iter(summary.outputs.values())) == output


def test_ssd_all_three_heads(models: Path) -> None:
    result = infer_shapes(load_file(models / "mxnet_v0.9_ssd300_vgg16_attr.json"),
                          {"data": (1, 3, 300, 300), "label": (1, 58, 6)})
    assert list(summarize(result).outputs.values()) == [(1, 3, 7308), (1, 29232), (1, 7308)]


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
