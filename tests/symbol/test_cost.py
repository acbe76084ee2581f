"""The model's cost (issue 34): multiply-accumulates and output bytes per node, checked against
MXNet 1.9.1's shape inference (tests/data/make_mxnet_cost_reference.py) with the papers'
formulas written out here, and against the papers' totals (ResNet-50 v1: 3.86 G MACs at
224x224, He et al. 2015, table 1, "3.8 x 10^9 FLOPs", which count multiply-adds; MobileNet 1.0:
569 M mult-adds, Howard et al. 2017, table 8)."""

from __future__ import annotations

import io
import json
import math

import pytest

from kvcli.symbol.cost import ITEM_BYTES, binary, compute_cost, si
from kvcli.symbol.graph import load_file
from kvcli.symbol.names import visible_outputs
from kvcli.symbol.shapes import infer_shapes
from kvcli.symbol.summary import summarize

from .conftest import DATA, run_kvcli

REFERENCE = json.loads((DATA / "mxnet_cost_reference.json").read_text(encoding="utf-8"))["models"]
GATES = {"lstm": 4, "gru": 3, "rnn_relu": 1, "rnn_tanh": 1}


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.strip("()[] ").replace(" ", "").split(",") if x]


def expected_macs(node: dict) -> int:
    """The papers' convention from MXNet's shapes and the node's attributes (not kvcli's code)."""
    a, ins, outs = node["attrs"], node["inputs"], node["outputs"]
    if node["op"] == "Convolution":  # Kh·Kw·Cin/groups·Cout·Ho·Wo per sample
        n, cin = ins[0][0], ins[0][1]
        cout, spatial = outs[0][1], outs[0][2:]
        return n * math.prod(_ints(a["kernel"])) * cin // int(a.get("num_group", 1)) * cout * math.prod(spatial)
    if node["op"] == "Deconvolution":  # every input pixel meets Kh·Kw·Cout/groups weights per channel
        n, cin, spatial = ins[0][0], ins[0][1], ins[0][2:]
        cout = int(a["num_filter"])
        return n * math.prod(_ints(a["kernel"])) * cin * cout // int(a.get("num_group", 1)) * math.prod(spatial)
    if node["op"] == "FullyConnected":
        data, hidden = ins[0], int(a["num_hidden"])
        if a.get("flatten", "True") in ("False", "false", "0"):
            return math.prod(data[:-1]) * data[-1] * hidden
        return data[0] * math.prod(data[1:]) * hidden
    if node["op"] == "RNN":
        steps, batch, width = ins[0]
        hidden, layers = int(a["state_size"]), int(a.get("num_layers", 1))
        dirs = 2 if a.get("bidirectional", "False") in ("True", "true", "1") else 1
        total = 0
        for layer in range(layers):
            x = width if layer == 0 else dirs * hidden
            total += GATES[a["mode"]] * hidden * (x + hidden)
        # cross-check with the size of the flat parameter vector MXNet inferred: weights + 2 biases per gate
        biases = layers * dirs * 2 * GATES[a["mode"]] * hidden
        assert total * dirs == math.prod(ins[1]) - biases
        return steps * batch * dirs * total
    return 0


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_macs_and_bytes_equal_the_papers_formulas_on_mxnets_shapes(name: str) -> None:
    model = REFERENCE[name]
    graph = load_file(DATA / model["file"])
    result = infer_shapes(graph, {k: tuple(v) for k, v in model["inputs"].items()})
    cost = compute_cost(result)
    index = {node.name: i for i, node in enumerate(graph.nodes) if not node.is_variable}
    total = total_bytes = 0
    costed = 0
    for node in model["nodes"]:
        i = index[node["name"]]
        want = expected_macs(node)
        assert cost.macs[i] == want, node["name"]
        costed += want > 0
        total += want
        outs = node["outputs"][:visible_outputs(graph, i)]
        want_bytes = sum(math.prod(s) for s in outs) * ITEM_BYTES["float32"]
        assert cost.out_bytes[i] == want_bytes, node["name"]
        total_bytes += want_bytes
    assert costed > 0
    assert (cost.total_macs, cost.macs_exact) == (total, True)
    assert (cost.total_out_bytes, cost.bytes_exact) == (total_bytes, True)


def test_totals_agree_with_the_papers() -> None:
    def macs(name: str) -> int:
        model = REFERENCE[name]
        graph = load_file(DATA / model["file"])
        return compute_cost(infer_shapes(graph, {k: tuple(v) for k, v in model["inputs"].items()})).total_macs

    resnet, mobilenet = macs("resnet50_v1"), macs("mobilenet1.0")
    assert resnet == pytest.approx(3.86e9, rel=0.005)  # 3,858,... : the papers' "3.8 x 10^9"
    assert mobilenet == pytest.approx(569e6, rel=0.002)  # table 8: 569 million mult-adds
    assert (si(resnet), si(mobilenet)) == ("3.86 G", "569 M")


def test_unknown_shapes_and_ops_make_a_lower_bound() -> None:
    model = REFERENCE["resnet50_v1"]
    cost = compute_cost(infer_shapes(load_file(DATA / model["file"])))  # no input shape
    assert cost.total_macs == 0 and not cost.macs_exact and not cost.bytes_exact
    assert all(m is None for m, node in zip(cost.macs, load_file(DATA / model["file"]).nodes)
               if node.op == "Convolution")


def test_summary_columns_totals_and_json() -> None:
    model = REFERENCE["mobilenet1.0"]
    path = DATA / model["file"]
    summary = summarize(infer_shapes(load_file(path), {"data": (1, 3, 224, 224)}))
    js = run_kvcli("--json", "summary", str(path), "--shape", "data=1,3,224,224")
    assert js.returncode == 0, js.stderr
    report = json.loads(js.stdout)
    assert report["totals"]["macs"] == summary.macs and report["totals"]["macs_exact"] is True
    assert sum(layer["macs"] for layer in report["layers"]) == summary.macs
    assert report["totals"]["out_bytes"] == sum(layer["out_bytes"] for layer in report["layers"]
                                                if layer["op"] not in ("input", "label"))
    first_conv = next(layer for layer in report["layers"] if layer["op"] == "Convolution")
    assert first_conv["macs"] == 3 * 3 * 3 * 32 * 112 * 112  # MobileNet's table 1: 3x3x3x32, stride 2
    assert first_conv["out_bytes"] == 32 * 112 * 112 * 4
    table = run_kvcli("summary", str(path), "--shape", "data=1,3,224,224")
    lines = table.stdout.splitlines()
    assert lines[1].split() == ["Layer", "Op", "Output", "shape", "Params", "Aux", "MACs", "Output", "bytes",
                                "Previous", "layers"]
    conv_line = next(line for line in lines if line.startswith(first_conv["name"] + " "))
    assert f"{first_conv['macs']:,}" in conv_line.split() and f"{first_conv['out_bytes']:,}" in conv_line.split()
    assert f"MACs:                 {summary.macs:,} (569 M)" in table.stdout
    assert f"Output bytes:         {summary.out_bytes:,} ({binary(summary.out_bytes)})" in table.stdout


@pytest.mark.parametrize("op", ["Convolution", "Deconvolution", "FullyConnected", "RNN"])
def test_a_weighted_op_with_no_inputs_has_unknown_macs(op: str) -> None:
    """A hostile file may give a weighted operator no inputs at all (the stress fuzzer found
    FullyConnected with ``inputs: []``): its MACs are unknown, never an IndexError."""
    text = json.dumps({"nodes": [{"op": "null", "name": "data", "inputs": []},
                                 {"op": op, "name": "node", "attrs": {}, "inputs": []}], "heads": [[1, 0, 0]]})
    from kvcli.symbol.graph import load_json

    cost = compute_cost(infer_shapes(load_json(text, source="t"), {}))
    assert cost.macs[1] is None and not cost.macs_exact


def test_an_integer_attribute_of_thousands_of_digits_is_an_attribute_error() -> None:
    """Python refuses int() of over 4,300 digits with a ValueError; kvcli says what is wrong."""
    from kvcli.errors import AttrError
    from kvcli.symbol.attrs import parse_int_tuple

    with pytest.raises(AttrError, match="5,000 digits"):
        parse_int_tuple("3" * 5000, "kernel")
    assert parse_int_tuple("1" + "0" * 30, "kernel") == (10**30,)


def _rnn_graph(num_layers: str, bidirectional: bool = False, projection: str = "") -> str:
    attrs = {"mode": "lstm", "state_size": "8", "num_layers": num_layers, "bidirectional": str(bidirectional)}
    if projection:
        attrs["projection_size"] = projection
    nodes = [{"op": "null", "name": n, "inputs": []} for n in ("data", "p", "s", "c")]
    nodes.append({"op": "RNN", "name": "r", "attrs": attrs, "inputs": [[i, 0, 0] for i in range(4)]})
    return json.dumps({"nodes": nodes, "arg_nodes": [0, 1, 2, 3], "heads": [[4, 0, 0]]})


@pytest.mark.parametrize("layers,bidirectional,projection", [(1, False, ""), (3, False, ""), (2, True, ""),
                                                              (4, True, "")])
def test_rnn_macs_closed_form_equals_the_layer_by_layer_sum(layers: int, bidirectional: bool,
                                                             projection: str) -> None:
    from kvcli.symbol.graph import load_json

    result = infer_shapes(load_json(_rnn_graph(str(layers), bidirectional, projection), source="t"),
                          {"data": (5, 2, 4)})
    directions, hidden = (2 if bidirectional else 1), 8
    per_step = sum(4 * hidden * ((4 if layer == 0 else directions * hidden) + hidden) for layer in range(layers))
    assert compute_cost(result).macs[4] == 5 * 2 * directions * per_step


def test_an_rnn_of_a_billion_layers_costs_no_time_and_prints() -> None:
    """A hostile file's num_layers=10**20 once looped per layer (the summary never returned)."""
    import time

    from rich.console import Console

    from kvcli.symbol.graph import load_json
    from kvcli.symbol.summary import print_table, summarize

    started = time.perf_counter()
    result = infer_shapes(load_json(_rnn_graph("100000000000000000000"), source="t"), {"data": (5, 2, 4)})
    per_step = 4 * 8 * ((4 + 8) + (10**20 - 1) * (8 + 8))
    assert compute_cost(result).macs[4] == 5 * 2 * per_step
    print_table(summarize(result), Console(file=io.StringIO(), width=160), title="t")
    assert time.perf_counter() - started < 5
    assert si(10**400) == "1.000e+385 P" and binary(10**400).endswith(" PiB")


def test_small_totals_are_not_repeated_in_brackets() -> None:
    """``288`` and ``512 B``, not ``288 (288)`` and ``512 (512 B)``; big ones keep the short form."""
    summary = summarize(infer_shapes(load_file(DATA / "mxnet_checkpoint" / "small_cnn-symbol.json"),
                                     {"data": (1, 1, 8, 8)}))
    assert (summary.macs_text(), summary.bytes_text()) == ("1,608 (1.61 k)", "1,960 (1.91 KiB)")
    summary.macs, summary.out_bytes = 288, 512
    assert (summary.macs_text(), summary.bytes_text()) == ("288", "512 B")
