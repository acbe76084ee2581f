"""kvcli.mx.viz against what MXNet 1.9.1 did (recorded in tests/data/mxnet_viz_reference.json by
tests/data/make_mxnet_viz_reference.py): creation-op shapes, refused shape dicts, the
repeated-name warning, dtype edge labels."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import kvcli.mx as mx
from kvcli.errors import ShapeInferenceError
from kvcli.mx import sym
from kvcli.symbol.shapes import infer_shapes

REF = json.loads((Path(__file__).resolve().parents[1] / "data" / "mxnet_viz_reference.json").read_text())


def _net():
    fc = sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc")
    return fc + sym.zeros(shape=(0, 4))


def test_zeros_begin_state_takes_its_consumers_shape() -> None:
    result = infer_shapes(_net().to_graph(), {"data": (5, 7)})
    assert result.complete
    heads = _net().to_graph().heads
    assert [list(result.entry(n, k)) for n, k, _ in heads] == REF["zeros_begin_state"]["outputs"]


def test_ones_full_zeros_like() -> None:
    ones = sym.ones(shape=(2, 3)) * 2
    full = sym.full(shape=(3, 1), val=7.0)
    for s, ref in ((ones, REF["ones"]), (full, REF["full"])):
        result = infer_shapes(s.to_graph(), {})
        assert [list(result.entry(n, k)) for n, k, _ in s.to_graph().heads] == ref
    zl = sym.zeros_like(sym.Variable("x"))
    result = infer_shapes(zl.to_graph(), {"x": (4, 2)})
    assert [list(result.entry(n, k)) for n, k, _ in zl.to_graph().heads] == REF["zeros_like"]


def test_misspelled_shape_name_raises_like_mxnet() -> None:
    assert "InferShapeKeyword argument name dta not found" in REF["misspelled"]["text"]
    with pytest.raises(ShapeInferenceError, match="InferShapeKeyword argument name dta not found. "
                                                  "Candidate arguments: data, fc_weight, fc_bias"):
        mx.viz.plot_network(_net(), shape={"dta": (5, 7)})


def test_empty_shape_dict_raises_like_mxnet() -> None:
    assert REF["empty"]["type"] == "ValueError"
    with pytest.raises(ValueError, match="^" + REF["empty"]["text"] + "$"):
        mx.viz.plot_network(_net(), shape={})


def test_repeated_names_warn_like_mxnet() -> None:
    a = sym.Variable("a")
    rep = sym.Activation(a, act_type="relu", name="same") + sym.Activation(a, act_type="tanh", name="same")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mx.viz.plot_network(rep)
    assert [(w.category.__name__, str(w.message)) for w in caught] == [
        (r["category"], r["message"]) for r in REF["repeated"]]


def test_dtype_labels_edges() -> None:
    net = sym.Cast(sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc"), dtype="float16", name="half")
    dot = mx.viz.plot_network(net, shape={"data": (2, 5)}, dtype={"data": "float32"})
    edges = sorted(line.strip() for line in dot.source.splitlines() if "->" in line)
    # MXNet drops the batch dimension ("5(float32)"), and so does mx.viz (the CLI shows it)
    assert edges == REF["dtype_edges"] == ['fc -> data [label="5(float32)" arrowtail=open dir=back]',
                                           'half -> fc [label="3(float32)" arrowtail=open dir=back]']
    with pytest.raises(ValueError, match="Input type is incomplete"):
        mx.viz.plot_network(net, dtype={})


def test_lstm_lm_with_zeros_begin_states_has_exact_totals() -> None:
    from kvcli.symbol.graph import load_file
    from kvcli.symbol.summary import summarize

    graph = load_file(Path(__file__).resolve().parents[1] / "data" / "mxnet_lstm_lm_zeros-symbol.json")
    assert [n.name for n in graph.nodes if n.op == "_zeros"] == REF["lstm_lm"]["zeros_nodes"]
    result = infer_shapes(graph, {"data": (4, 3)})
    assert result.complete and not result.unknown_ops
    summary = summarize(result)
    assert summary.exact and summary.total_text(summary.params) == f"{REF['lstm_lm']['params']:,}"
    assert summary.aux == REF["lstm_lm"]["aux"]
    zeros = [i for i, n in enumerate(graph.nodes) if n.op == "_zeros"]
    assert [result.entry(i) for i in zeros] == [(4, 24), (4, 24)]  # the 0 filled from the consumer
