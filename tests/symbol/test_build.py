"""The builder (``kvcli.mx.sym``) against MXNet 1.9.1, and the seed tutorial's code.

Literal expectations were printed by real MXNet 1.9.1 for the same Python code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import kvcli.mx as mx
from kvcli.errors import SymbolError
from kvcli.mx import sym
from kvcli.symbol.build import NameManager

from .conftest import DATA, needs_dot

SEED_IMPORT = "import mxnet as mx\nfrom mxnet import sym"


@pytest.fixture(autouse=True)
def fresh_names() -> None:
    NameManager.reset()


def seed_visualisation_code() -> str:
    """The tutorial's visualisation example, exactly as printed, import line swapped."""
    code = (DATA / "seed_visualisation_example.txt").read_text(encoding="utf-8")
    assert code.startswith(SEED_IMPORT) and "sum_ reducción" in code
    return code.replace(SEED_IMPORT, "import kvcli.mx as mx\nfrom kvcli.mx import sym", 1)


# What MXNet 1.9.1's network_symbol.tojson() gives for the seed's network.
SEED_MXNET_NODES = [
    {"op": "null", "name": "user", "inputs": []},
    {"op": "null", "name": "user_embedding_weight", "attrs": {"input_dim": "1000", "output_dim": "64"}, "inputs": []},
    {"op": "Embedding", "name": "user_embedding", "attrs": {"input_dim": "1000", "output_dim": "64"},
     "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "null", "name": "item", "inputs": []},
    {"op": "null", "name": "item_embedding_weight", "attrs": {"input_dim": "500", "output_dim": "64"}, "inputs": []},
    {"op": "Embedding", "name": "item_embedding", "attrs": {"input_dim": "500", "output_dim": "64"},
     "inputs": [[3, 0, 0], [4, 0, 0]]},
    {"op": "elemwise_mul", "name": "_mul0", "inputs": [[2, 0, 0], [5, 0, 0]]},
    {"op": "sum", "name": "sum_ reducción", "attrs": {"axis": "1"}, "inputs": [[6, 0, 0]]},
    {"op": "Flatten", "name": "flatten_output", "inputs": [[7, 0, 0]]},
    {"op": "null", "name": "score", "inputs": []},
    {"op": "LinearRegressionOutput", "name": "lro", "inputs": [[8, 0, 0], [9, 0, 0]]},
]


def test_seed_code_runs_with_only_the_import_changed(capsys: pytest.CaptureFixture[str]) -> None:
    scope: dict = {}
    exec(compile(seed_visualisation_code(), "seed", "exec"), scope)
    out = capsys.readouterr().out
    assert "Textual description of the network symbol:" in out
    assert "1. 'user' -> Embedding (name='user_embedding', input_dim=1000, output_dim=64)" in out
    net = scope["network_symbol"]
    doc = json.loads(net.tojson())
    assert doc["nodes"] == SEED_MXNET_NODES
    assert doc["arg_nodes"] == [0, 1, 3, 4, 9]
    assert doc["node_row_ptr"] == list(range(12))
    assert doc["heads"] == [[10, 0, 0]]
    assert doc["attrs"] == {"mxnet_version": ["int", 10901]}


@needs_dot
def test_seed_commented_plot_lines_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = seed_visualisation_code()
    code = code.replace("# viz_graph = mx.viz", "viz_graph = mx.viz").replace("# viz_graph.render", "viz_graph.render")
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "seed", "exec"), scope)
    pdf = tmp_path / "matrix_factorization_network.pdf"
    assert pdf.read_bytes().startswith(b"%PDF")
    source = scope["viz_graph"].source
    assert '"sum_ reducción" [label="sum_ reducción"' in source


def test_seed_network_api_matches_mxnet() -> None:
    scope: dict = {}
    exec(compile(seed_visualisation_code().split('print("Textual')[0], "seed", "exec"), scope)
    net = scope["network_symbol"]
    assert net.list_arguments() == ["user", "user_embedding_weight", "item", "item_embedding_weight", "score"]
    assert net.list_outputs() == ["lro_output"]
    assert net.get_internals().list_outputs() == [
        "user", "user_embedding_weight", "user_embedding_output", "item", "item_embedding_weight",
        "item_embedding_output", "_mul0_output", "sum_ reducción_output", "flatten_output_output",
        "score", "lro_output"]
    assert net.infer_shape(user=(4,), item=(4,), score=(4,)) == (
        [(4,), (1000, 64), (4,), (500, 64), (4,)], [(4, 1)], [])


def test_seed_print_summary_does_not_crash_and_counts_right(capsys: pytest.CaptureFixture[str]) -> None:
    # MXNet 1.9.1's print_summary raises on this network; ours prints correct totals.
    scope: dict = {}
    exec(compile(seed_visualisation_code().split('print("Textual')[0], "seed", "exec"), scope)
    capsys.readouterr()
    mx.viz.print_summary(scope["network_symbol"], shape={"user": (4,), "item": (4,), "score": (4,)})
    out = capsys.readouterr().out
    assert "Total params: 96000\n" in out  # MXNet's format: no thousands separators
    assert re.search(r"user_embedding\(Embedding\)\s+64\s+64000\s+user", out)


def test_auto_names_and_arithmetic_match_mxnet() -> None:
    a, b = sym.Variable("a"), sym.Variable("b")
    # (symbol, MXNet 1.9.1's op and name, in this order from a fresh NameManager)
    expected = [
        (a * b, "elemwise_mul", "_mul0"), (a + b, "elemwise_add", "_plus0"),
        (a - b, "elemwise_sub", "_minus0"), (a / b, "elemwise_div", "_div0"),
        (a + 1, "_plus_scalar", "_plusscalar0"), (1 + a, "_plus_scalar", "_plusscalar1"),
        (a * 2, "_mul_scalar", "_mulscalar0"), (2 - a, "_rminus_scalar", "_rminusscalar0"),
        (a - 2, "_minus_scalar", "_minusscalar0"), (2 / a, "_rdiv_scalar", "_rdivscalar0"),
        (a / 2, "_div_scalar", "_divscalar0"), (a ** 2, "_power_scalar", "_powerscalar0"),
        (-a, "_mul_scalar", "_mulscalar1"),
        (sym.FullyConnected(a, num_hidden=3), "FullyConnected", "fullyconnected0"),
        (sym.split(a, num_outputs=2), "SliceChannel", "split0"),
        (sym.sum_axis(a, axis=1), "sum", "sum_axis0"),
        (sym.Softmax(a), "SoftmaxOutput", "softmax0"),
        (sym.ElementWiseSum(a, b), "add_n", "elementwisesum0"),
    ]
    for s, op, name in expected:
        node = json.loads(s.tojson())["nodes"][-1]
        assert (node["op"], node["name"]) == (op, name)
    assert json.loads((-a).tojson())["nodes"][-1]["attrs"] == {"scalar": "-1.0"}


def test_operators_create_missing_variables_like_mxnet() -> None:
    data = sym.Variable("data")
    assert sym.FullyConnected(data, num_hidden=3).list_arguments() == [
        "data", "fullyconnected0_weight", "fullyconnected0_bias"]
    assert sym.Convolution(data, kernel=(3, 3), num_filter=4, no_bias=True).list_arguments() == [
        "data", "convolution0_weight"]
    assert sym.Deconvolution(data, kernel=(2, 2), num_filter=3).list_arguments() == ["data", "deconvolution0_weight"]
    bn = sym.BatchNorm(data, name="bn", fix_gamma=False)
    assert bn.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    nodes = json.loads(bn.tojson())["nodes"]
    # MXNet copies the op's attributes to created variables and marks aux inputs version 1.
    assert nodes[3] == {"op": "null", "name": "bn_moving_mean",
                        "attrs": {"fix_gamma": "False", "__init__": '["zero", {}]'}, "inputs": []}
    assert nodes[-1]["inputs"] == [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]
    assert json.loads(bn.tojson())["node_row_ptr"] == [0, 1, 2, 3, 4, 5, 8]
    assert sym.RNN(data, state_size=3, num_layers=1, mode="lstm").list_arguments() == [
        "data", "rnn0_parameters", "rnn0_state", "rnn0_state_cell"]
    assert sym.SoftmaxOutput(data).list_arguments() == ["data", "softmaxoutput0_label"]
    rnn = sym.RNN(data, state_size=3, num_layers=2, mode="lstm", state_outputs=True, name="r")
    assert rnn.list_outputs() == ["r_output", "r_state_output", "r_statecell_output"]


def test_variable_hints_written_like_mxnet() -> None:
    a = sym.Variable("a", shape=(1, 784), lr_mult=2.0, wd_mult=0.5, dtype="float32")
    attrs = json.loads(a.tojson())["nodes"][0]["attrs"]
    assert attrs == {"__shape__": "(1, 784)", "__lr_mult__": "2.0", "__wd_mult__": "0.5", "__dtype__": "0"}
    assert a.attr("__shape__") == "(1, 784)"
    net = sym.FullyConnected(a, num_hidden=5, name="fc")
    assert net.infer_shape() == ([(1, 784), (5, 784), (5,)], [(1, 5)], [])  # the hint is used


def test_group_indexing_and_names() -> None:
    a = sym.Variable("a")
    parts = sym.SliceChannel(a, num_outputs=3, name="s")
    assert len(parts) == 3 and parts.name == "s"  # MXNet names a one-node symbol even with 3 outputs
    assert parts[1].list_outputs() == ["s_output1"]
    assert parts["s_output2"].list_outputs() == ["s_output2"]
    group = sym.Group([a, sym.Variable("b")])
    assert group.name is None and group.list_outputs() == ["a", "b"]
    assert repr(a) == "<Symbol a>"


def test_incomplete_infer_shape_returns_nones_like_mxnet() -> None:
    net = sym.FullyConnected(sym.Variable("x"), num_hidden=4, name="f")
    assert net.infer_shape() == (None, None, None)
    # as MXNet: nothing, not even the bias, before the data shape is known
    assert net.infer_shape_partial() == ([(), (), ()], [()], [])


def test_save_load_round_trip(tmp_path: Path) -> None:
    net = sym.SoftmaxOutput(sym.FullyConnected(sym.Variable("data"), num_hidden=10, name="fc"), name="sm")
    path = tmp_path / "net-symbol.json"
    net.save(path)
    again = sym.load(path)
    assert again.tojson() == net.tojson()
    assert sym.load_json(net.tojson()).list_arguments() == ["data", "fc_weight", "fc_bias", "sm_label"]


def test_builder_rejects_misuse() -> None:
    a = sym.Variable("a")
    with pytest.raises(TypeError, match="no input 'bogus'"):
        sym.FullyConnected(a, bogus=a, num_hidden=2)
    with pytest.raises(SymbolError, match="group of 2 outputs"):
        sym.relu(sym.split(a, num_outputs=2))
    with pytest.raises(SymbolError, match="not an argument"):
        sym.relu(a).infer_shape(b=(1,))
