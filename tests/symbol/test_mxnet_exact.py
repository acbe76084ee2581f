"""``kvcli.mx.viz`` and ``kvcli.mx.sym`` give MXNet 1.9.1's output exactly, as recorded by
tests/data/make_mxnet_symviz_reference.py in tests/data/mxnet_symviz_reference.json: the DOT
source of plot_network, the print_summary table, infer_shape_partial, infer_type, reprs."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import kvcli.mx as mx
from kvcli.errors import SymbolError

DATA = Path(__file__).resolve().parents[1] / "data"
REF = json.loads((DATA / "mxnet_symviz_reference.json").read_text())


def _symbol(name: str) -> Any:
    return mx.sym.load_json(REF["symbols"][name])


def _tuples(kwargs: dict[str, Any]) -> dict[str, Any]:
    out = dict(kwargs)
    if "shape" in out:
        out["shape"] = {k: tuple(v) for k, v in out["shape"].items()}
    return out


@pytest.mark.parametrize("case", REF["plots"], ids=lambda c: f"{c['symbol']}-{'-'.join(sorted(c['kwargs']))}")
def test_plot_network_source_is_mxnets(case: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dot = mx.viz.plot_network(_symbol(case["symbol"]), **_tuples(case["kwargs"]))
    # The final newline is the graphviz package's (0.8.4, next to the recorded MXNet, omits it;
    # newer versions write it): everything MXNet decides is compared byte for byte.
    assert dot.source.rstrip("\n") == case["source"].rstrip("\n")


def _summary(name: str, shape: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    mx.viz.print_summary(_symbol(name), shape={k: tuple(v) for k, v in shape.items()})
    return capsys.readouterr().out


def _column(text: str) -> list[str]:
    """The Param # column (characters 76..88 of MXNet's default layout) of each layer row."""
    return [line[76:88].strip() for line in text.splitlines()
            if "(" in line[:52] and not line.startswith("Layer (type)")]


@pytest.mark.parametrize("case", [c for c in REF["summaries"] if c["symbol"] in ("lenet", "mini_resnet", "mlp")],
                         ids=lambda c: c["symbol"])
def test_print_summary_is_mxnets(case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    out = _summary(case["symbol"], case["shape"], capsys)
    assert out == case["stdout"]
    assert sum(int(c) for c in _column(out)) == case["params"]  # the column adds up to the total


@pytest.mark.parametrize("case", [c for c in REF["summaries"] if c["symbol"] in ("split", "fc_after_pool")],
                         ids=lambda c: c["symbol"])
def test_print_summary_keeps_the_right_count_where_mxnet_miscounts(
        case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    out = _summary(case["symbol"], case["shape"], capsys)
    ours, theirs = out.splitlines(), case["stdout"].splitlines()
    assert len(ours) == len(theirs)
    differ = [(a, b) for a, b in zip(ours, theirs) if a != b]
    # only the FullyConnected row (MXNet counts its input's channels, not C*H*W or the
    # split's output) and the total differ; the right total is infer_shape's
    assert [a.split("(")[0] for a, _ in differ] == ["fc", "Total params: " + str(case["params"])]
    assert ours[-2] == f"Total params: {case['params']}"
    assert sum(int(c) for c in _column(out)) == case["params"]
    theirs_total = int(theirs[-2].split(": ")[1])
    assert theirs_total != case["params"]


def _as_lists(result: Any) -> list[Any]:
    return [None if r is None else [list(s) for s in r] for r in result]


@pytest.mark.parametrize("case", REF["infer_shape_partial"], ids=lambda c: str(c["kwargs"]))
def test_infer_shape_partial_is_mxnets(case: dict[str, Any]) -> None:
    net = mx.sym.load_json(case["symbol"])
    kwargs = {k: tuple(v) for k, v in case["kwargs"].items()}
    assert _as_lists(net.infer_shape_partial(**kwargs)) == case["result"]
    if any(0 in s for group in case["result"] for s in group) or any(
            not s for group in case["result"][:2] for s in group):
        assert net.infer_shape(**kwargs) == (None, None, None)  # incomplete: MXNet's Nones


def test_regression_label_is_1d_for_a_single_output() -> None:
    net = _symbol("regression")
    assert _as_lists(net.infer_shape(data=(32, 5))) == REF["regression"]
    args = dict(zip(net.list_arguments(), net.infer_shape(data=(32, 5))[0]))
    assert args["lro_label"] == (32,)


@pytest.mark.parametrize("case", REF["infer_type"], ids=lambda c: str(c["kwargs"]))
def test_infer_type_is_mxnets(case: dict[str, Any]) -> None:
    import numpy as np

    net = mx.sym.load_json(case["symbol"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = net.infer_type(**case["kwargs"])
    assert [None if r is None else [np.dtype(t).name for t in r] for r in result] == case["result"]
    if case["result"][0] is None:
        assert "Cannot decide type for the following arguments" in str(caught[0].message)
    else:
        assert all(isinstance(t, type) and issubclass(t, np.generic) for t in result[0])


def test_reprs_are_mxnets() -> None:
    ref = REF["repr"]
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=10, name="fc1")
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn")
    parts = mx.sym.SliceChannel(mx.sym.Variable("data"), num_outputs=3, name="sp")
    assert repr(fc) == ref["fc"]
    assert repr(fc.get_internals()) == ref["fc_internals"]
    assert repr(_symbol("regression").get_internals()) == ref["lro_internals"]
    assert repr(bn.get_internals()) == ref["bn_internals"]
    assert repr(parts) == ref["split"]
    assert repr(parts.get_internals()) == ref["split_internals"]
    assert repr(mx.sym.Group([fc, mx.sym.Variable("data")])) == ref["group"]


def test_composition_by_call_is_mxnets() -> None:
    ref = REF["compose"]
    fc3 = mx.sym.FullyConnected(mx.sym.Variable("fc3_data"), num_hidden=3, name="fc3")
    composed = fc3(fc3_data=mx.sym.Variable("x"))
    assert composed.list_arguments() == ref["arguments"]
    assert repr(composed) == ref["repr"] and composed.list_outputs() == ref["outputs"]
    assert _as_lists(composed.infer_shape(x=(2, 7))) == ref["shapes"]
    assert fc3.list_arguments() == ["fc3_data", "fc3_weight", "fc3_bias"]  # the original is unchanged
    positional = fc3(mx.sym.Variable("y"))
    assert positional.list_arguments() == ["y", "fc3_weight", "fc3_bias"]
    with pytest.raises(SymbolError, match="'nope' is not an argument"):
        fc3(nope=mx.sym.Variable("x"))


@pytest.mark.parametrize("key", ["spatial_transformer", "stack"])
def test_stack_and_spatial_transformer_shapes(key: str) -> None:
    ref = REF[key]
    net = mx.sym.load_json(ref["symbol"])
    given = {"spatial_transformer": {"data": (2, 3, 20, 24)}, "stack": {"a": (2, 5), "b": (2, 5)}}[key]
    assert _as_lists(net.infer_shape(**given)) == ref["shapes"]


@pytest.mark.parametrize("key", ["gluon_unroll", "gluon_fused", "gluon_fused_no_input_size"])
def test_gluon_exports_have_exact_totals(key: str) -> None:
    """A gluon unroll(merge_outputs=True) export (stack) and fused RNN exports
    (_rnn_param_concat; one with its first weight hinted (64, 0)): exact totals, no "at least"."""
    from kvcli.symbol.graph import load_file
    from kvcli.symbol.shapes import infer_shapes
    from kvcli.symbol.summary import summarize

    ref = REF[key]
    result = infer_shapes(load_file(DATA / ref["file"]), {k: tuple(v) for k, v in ref["shape"].items()})
    summary = summarize(result)
    assert not result.unknown_ops and summary.exact
    assert summary.total_text(summary.params) == f"{ref['params']:,}"
    assert [list(s) for s in summary.outputs.values()] == ref["outputs"]


def test_builder_writes_mxnets_json_for_stack_and_spatial_transformer() -> None:
    from kvcli.symbol.build import NameManager

    NameManager.reset()
    stk = mx.sym.stack(mx.sym.Variable("a"), mx.sym.Variable("b"), axis=1, name="stk")
    assert json.loads(stk.tojson())["nodes"] == json.loads(REF["stack"]["symbol"])["nodes"]
    data = mx.sym.Variable("data")
    loc = mx.sym.FullyConnected(mx.sym.Flatten(data), num_hidden=6, name="loc")
    st = mx.sym.SpatialTransformer(data, loc, target_shape=(10, 12), transform_type="affine",
                                   sampler_type="bilinear", name="st")
    mine, theirs = json.loads(st.tojson()), json.loads(REF["spatial_transformer"]["symbol"])
    assert (mine["nodes"], mine["node_row_ptr"]) == (theirs["nodes"], theirs["node_row_ptr"])
    assert st.list_arguments() == REF["spatial_transformer"]["arguments"]


@pytest.mark.parametrize("name", ["palette", "lenet", "mini_resnet"])
def test_cli_drawing_uses_mxnets_colours(name: str) -> None:
    """kvcli viz keeps its own labels but paints every node as MXNet does."""
    import re

    from kvcli.symbol.plan import build_plan

    source = next(p["source"] for p in REF["plots"] if p["symbol"] == name)
    theirs = dict(re.findall(r'^\t(\S+) \[label=.*?fillcolor="(#[0-9a-f]+)"', source, re.M | re.S))
    plan = build_plan(_symbol(name).to_graph(), readable=True)
    ours = {node.name: node.fill for node in plan.nodes if node.name in theirs}
    assert ours == theirs and len(theirs) > 5


def test_infer_type_partial_and_a_cast_are_mxnets() -> None:
    import numpy as np

    ref = REF["infer_type_partial"]
    net = mx.sym.load_json(ref["symbol"])

    def names(result: Any) -> list[Any]:
        return [[None if t is None else np.dtype(t).name for t in r] for r in result]

    assert names(net.infer_type_partial()) == ref["result"]
    assert names(net.infer_type(data="float16")) == ref["float16"]


def test_partial_shape_hint_is_carried_like_mxnet() -> None:
    """Variable("data", shape=(1, 0, 0, 0)) into a convolution: weight (64, 0, 7, 7)."""
    net = mx.sym.load_json(REF["partial_hint"]["symbol"])
    assert _as_lists(net.infer_shape_partial()) == REF["partial_hint"]["result"]
    assert net.infer_shape() == (None, None, None)


def test_print_summary_refuses_incomplete_shapes_like_mxnet() -> None:
    net = mx.sym.FullyConnected(mx.sym.Variable("a") + mx.sym.Variable("b"), num_hidden=2, name="fc")
    assert REF["summary_incomplete"] == {"type": "ValueError", "text": "Input shape is incomplete"}
    with pytest.raises(ValueError, match="^Input shape is incomplete$"):
        mx.viz.print_summary(net, shape={})


@pytest.mark.parametrize("name", sorted(REF["shared_models"]))
def test_shared_models_draw_and_summarise_as_mxnet(name: str, models: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real models of tests/data/sample_models: plot_network's source has MXNet's
    SHA-256; print_summary is MXNet's table but for the FullyConnected rows MXNet miscounts."""
    import hashlib

    ref = REF["shared_models"][name]
    shape = {k: tuple(v) for k, v in ref["shape"].items()} if ref["shape"] else None
    net = mx.sym.load(str(models / name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, hide in (("plot", True), ("plot_weights", False)):
            source = mx.viz.plot_network(net, shape=shape, hide_weights=hide).source
            assert hashlib.sha256(source.rstrip("\n").encode()).hexdigest() == ref[key], key
    if "summary" not in ref:
        return
    capsys.readouterr()
    mx.viz.print_summary(net, shape=shape)
    ours, theirs = capsys.readouterr().out.splitlines(), ref["summary"].splitlines()
    assert len(ours) == len(theirs)
    differ = [a for a, b in zip(ours, theirs) if a != b]
    assert all("(FullyConnected)" in a for a in differ[:-1])
    if differ:
        assert differ[-1].startswith("Total params: ")
    total = int(ours[-2].split(": ")[1])
    rows = [line for line in ours if "(" in line[:52] and not line.startswith("Layer (type)")]
    assert sum(int(line[76:88]) for line in rows) == total
