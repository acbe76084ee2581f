"""Loading symbol JSON of every MXNet era into one Graph model, and saving it back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvcli.errors import SymbolError
from kvcli.symbol.graph import load_file, load_json
from kvcli.symbol.summary import AUX, INPUT, LABEL, PARAM, variable_roles


def test_old_08_format_params_attrs_and_aux_added(models: Path) -> None:
    graph = load_file(models / "mxnet_v0.8_mlp_batchnorm.json")
    assert graph.format == "param"
    names = [n.name for n in graph.nodes if n.is_variable]
    # MXNet 1.9.1 lists exactly these after upgrading the file (aux states added on load).
    assert [n for n in names if "moving" not in n] == [
        "data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "fc3_weight", "fc3_bias",
        "batchnorm0_gamma", "batchnorm0_beta", "softmax_label"]
    assert [n for n in names if "moving" in n] == ["batchnorm0_moving_mean", "batchnorm0_moving_var"]
    assert all(len(e) == 3 for n in graph.nodes for e in n.inputs)
    fc1 = next(n for n in graph.nodes if n.name == "fc1")
    assert fc1.attrs == {"no_bias": "False", "num_hidden": "128"}  # from 'param'
    # 'attr' (user attributes) become hidden __key__ attributes, as MXNet's upgrade does.
    assert fc1.hidden == {"__ctx_group__": "stage1", "__wd_mult__": "0.3", "__weight_lr_mult__": "1.2"}
    data = graph.nodes[0]
    assert data.hidden == {"__ctx_group__": "stage1", "__lr_mult__": "0.2"}
    assert variable_roles(graph)[0] == INPUT  # an lr_mult does not make data a parameter


def test_nnvm_09_format_and_hidden_shape(models: Path) -> None:
    graph = load_file(models / "mxnet_v0.9_ssd300_vgg16_attr.json")
    assert graph.format == "attr" and graph.mxnet_version == 904
    scale = next(n for n in graph.nodes if n.name == "relu4_3_scale")
    assert scale.hidden == {"__shape__": "(1, 512, 1, 1)"} and scale.attrs == {}
    assert len(graph.heads) == 3


def test_new_format_keeps_gluon_hidden_attributes(models: Path) -> None:
    graph = load_file(models / "mxnet_v1.6_gluon_lenet_mnist_attrs.json")
    weight = next(n for n in graph.nodes if n.name == "hybridsequential9_conv0_weight")
    assert weight.hidden["__shape__"] == "(10, 0, 5, 5)"
    assert {"__dtype__", "__lr_mult__", "__wd_mult__"} <= set(weight.hidden)
    assert not any(k.startswith("__") for k in weight.attrs)


def test_variable_roles(models: Path) -> None:
    graph = load_file(models / "mxnet_v0.9_ssd300_vgg16_attr.json")
    roles = {graph.nodes[i].name: r for i, r in variable_roles(graph).items()}
    assert roles["data"] == INPUT and roles["label"] == LABEL
    assert roles["conv1_1_weight"] == PARAM
    assert roles["relu4_3_scale"] == PARAM  # a free-standing learnable scale, as MXNet counts it
    resnet = load_file(models / "mxnet_v1.3_resnet50_attrs.json")
    roles = {resnet.nodes[i].name: r for i, r in variable_roles(resnet).items()}
    assert roles["bn0_moving_mean"] == AUX and roles["bn0_gamma"] == PARAM


@pytest.mark.parametrize("name", ["mxnet_v0.8_vgg16_reduced_param.json", "mxnet_v0.9_ocr_lstm_warpctc_attr.json",
                                  "mxnet_v1.3_resnet50_attrs.json"])
def test_save_round_trip_is_stable(models: Path, tmp_path: Path, name: str) -> None:
    # Saved files were checked with MXNet 1.9.1 during development: every re-saved sample
    # loads and gives the same list_arguments / list_auxiliary_states / list_outputs.
    first = load_file(models / name)
    out = tmp_path / name
    first.save(out)
    again = load_file(out)
    assert again.format == "attrs"
    assert [(n.op, n.name, n.attrs, n.hidden, n.inputs) for n in again.nodes] == \
           [(n.op, n.name, n.attrs, n.hidden, n.inputs) for n in first.nodes]
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["attrs"] == {"mxnet_version": ["int", 10901]}
    assert doc["node_row_ptr"][-1] == sum(first.num_outputs(i) for i in range(len(first.nodes)))


def test_node_row_ptr_counts_outputs(models: Path) -> None:
    # SOURCES.md: ResNet-50 436 nodes -> 538; OCR LSTM 802 -> 1011; char-LSTM 6084 -> 7632.
    # MXNet 1.9.1 (pip, oneDNN) re-saves ResNet-50 with 539: its max Pooling has a hidden
    # workspace output, which MXNet 1.3 did not count (measured: mx.sym.load(...).tojson()).
    for name, last in [("mxnet_v1.3_resnet50_attrs.json", 539), ("mxnet_v0.9_ocr_lstm_warpctc_attr.json", 1011),
                       ("mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json", 7632)]:
        assert load_file(models / name).to_dict()["node_row_ptr"][-1] == last


def test_forward_references_are_reordered() -> None:
    text = json.dumps({"nodes": [
        {"op": "Activation", "name": "act", "attrs": {"act_type": "relu"}, "inputs": [[1, 0, 0]]},
        {"op": "null", "name": "data", "inputs": []}], "heads": [[0, 0, 0]]})
    graph = load_json(text)
    assert [n.name for n in graph.nodes] == ["data", "act"]
    assert graph.heads == [(1, 0, 0)]


BAD = [
    ("not json {", "not JSON"),
    ("[1, 2]", "top level is a JSON list"),
    ('{"nodes": []}', "no 'heads' key"),
    ('{"heads": [[0,0,0]]}', "no 'nodes' key"),
    ('{"nodes": [{"op": "null", "name": "a", "inputs": []}], "heads": [[3, 0, 0]]}', "head points to node 3"),
    ('{"nodes": [{"op": "null", "name": "a", "inputs": []},'
     ' {"op": "relu", "name": "r", "inputs": [[7, 0, 0]]}], "heads": [[1, 0, 0]]}', "input index out of range"),
    ('{"nodes": [{"op": "null", "name": "a", "inputs": []},'
     ' {"op": "relu", "name": "r", "inputs": [[0, 2, 0]]}], "heads": [[1, 0, 0]]}', "reads output 2 of 'a'"),
    ('{"nodes": [{"op": "relu", "name": "r1", "inputs": [[1, 0, 0]]},'
     ' {"op": "relu", "name": "r2", "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]}', "has a cycle"),
    ('{"nodes": [{"op": "null", "name": "a", "inputs": []}], "heads": [[0, 1, 0]]}', "head points to output 1"),
    ('{"nodes": [{"op": "null", "name": "a", "inputs": [[0, 0]]}], "heads": [[0, 0, 0]]}', "has inputs"),
    ('{"nodes": [{"name": "a"}], "heads": [[0, 0, 0]]}', "not an object with 'op' and 'name'"),
    ('{"nodes": [{"op": "null", "name": "a", "inputs": []}], "heads": [["x"]]}', "not [node, index]"),
]


@pytest.mark.parametrize("text,message", BAD, ids=[b[1] for b in BAD])
def test_malformed_graphs_give_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(SymbolError) as error:
        load_json(text, source="bad.json")
    assert message in str(error.value)
    assert str(error.value).startswith("bad.json: ") and "\n" not in str(error.value)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(SymbolError, match="no such file"):
        load_file(tmp_path / "nope.json")
    with pytest.raises(SymbolError, match="is a folder"):
        load_file(tmp_path)
