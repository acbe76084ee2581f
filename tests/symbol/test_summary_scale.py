"""Summary tables stay linear and readable: huge fan-in, very long names, many outputs."""

from __future__ import annotations

import io
import time

from rich.console import Console

from kvcli.symbol.graph import from_dict
from kvcli.symbol.shapes import infer_shapes
from kvcli.symbol.summary import print_table, summarize


def _table(graph, given) -> tuple[str, float]:
    start = time.perf_counter()
    summary = summarize(infer_shapes(graph, given))
    buf = io.StringIO()
    # a terminal (the rich table); piped output is tested in test_summary_pipe.py
    print_table(summary, Console(file=buf, width=400, color_system=None, force_terminal=True), title="t")
    return buf.getvalue(), time.perf_counter() - start


def test_two_hundred_thousand_inputs_is_linear() -> None:
    n = 200_000
    nodes = [{"op": "null", "name": f"x{i}", "inputs": []} for i in range(n)]
    nodes.append({"op": "add_n", "name": "sum", "attrs": {"num_args": str(n)},
                  "inputs": [[i, 0, 0] for i in range(n)]})
    graph = from_dict({"nodes": nodes, "heads": [[n, 0, 0]]})
    text, elapsed = _table(graph, {f"x{i}": (2,) for i in range(n)})
    assert elapsed < 30, f"{elapsed:.1f} s (quadratic code took > 180 s)"
    last = [line for line in text.splitlines() if line.startswith("sum ")]
    assert last and last[0].endswith("x0, x1, x2, x3, … (+199,996 more)")


def test_four_megabyte_names_are_cut_in_the_table() -> None:
    long = "a" * 4_000_000
    graph = from_dict({"nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "Activation", "name": long, "attrs": {"act_type": "relu"}, "inputs": [[0, 0, 0]]},
        {"op": "null", "name": "fc_weight", "inputs": []},
        {"op": "null", "name": "fc_bias", "inputs": []},
        {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "3"},
         "inputs": [[1, 0, 0], [2, 0, 0], [3, 0, 0]]}],
        "heads": [[4, 0, 0]]})
    text, elapsed = _table(graph, {"data": (2, 5)})
    assert elapsed < 10, f"{elapsed:.1f} s"
    assert len(text) < 10_000
    assert "(4,000,000 chars)" in text
    # separate param and aux columns; the fc row holds 3*5 + 3 = 18 learnable parameters
    header = [line for line in text.splitlines() if "Layer" in line][0]
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "Layer", "Op", "Output shape", "Params", "Aux", "Previous layers"]
    fc = [line for line in text.splitlines() if line.startswith("│ fc ")]
    assert fc and [c.strip() for c in fc[0].strip("│").split("│")][3:5] == ["18", ""]


def test_thirty_outputs_do_not_squeeze_the_other_columns() -> None:
    graph = from_dict({"nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "SliceChannel", "name": "split0", "attrs": {"num_outputs": "30", "axis": "1"},
         "inputs": [[0, 0, 0]]},
        {"op": "Concat", "name": "cat", "attrs": {"num_args": "30", "dim": "1"},
         "inputs": [[1, k, 0] for k in range(30)]}],
        "heads": [[2, 0, 0]]})
    text, _ = _table(graph, {"data": (8, 30 * 32)})
    row = [line for line in text.splitlines() if line.startswith("│ split0")][0]
    assert "8x32, 8x32, 8x32, … (30 outputs)" in row
    assert "SliceChannel" in row and "data" in row  # op and previous columns are still there


def test_rows_add_up_to_the_totals(models) -> None:
    """Per-row learnable params and aux (separate columns) sum to the totals, shared weights once."""
    from kvcli.symbol.graph import load_file

    for name, shape, params, aux in (("mxnet_v1.3_resnet50_attrs.json", (1, 3, 224, 224), 23_629_573, 45_574),
                                     ("mxnet_v0.8_vgg16_reduced_param.json", (1, 3, 300, 300), None, 0)):
        summary = summarize(infer_shapes(load_file(models / name), {"data": shape}))
        assert summary.exact
        assert sum(layer.params for layer in summary.layers) == summary.params
        assert sum(layer.aux for layer in summary.layers) == summary.aux == aux
        if params is not None:
            assert summary.params == params
