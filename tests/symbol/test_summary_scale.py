"""Summary tables stay readable: huge fan-in, very long names, many outputs (their speed: bench/scale.py)."""

from __future__ import annotations

import io

from rich.console import Console

from kvcli.symbol.graph import from_dict
from kvcli.symbol.shapes import infer_shapes
from kvcli.symbol.summary import print_table, summarize

from .graphs import fan_in, long_name


def _table(graph, given) -> str:
    summary = summarize(infer_shapes(graph, given))
    buf = io.StringIO()
    # a terminal (the rich table); piped output is tested in test_summary_pipe.py
    print_table(summary, Console(file=buf, width=400, color_system=None, force_terminal=True), title="t")
    return buf.getvalue()


def test_two_hundred_thousand_inputs_are_listed_in_short() -> None:
    # how long it takes (linear; quadratic code took > 180 s): `python bench/scale.py` (budget 30 s)
    n = 200_000
    text = _table(from_dict(fan_in(n)), {f"x{i}": (2,) for i in range(n)})
    last = [line for line in text.splitlines() if line.startswith("sum ")]
    assert last and last[0].endswith("x0, x1, x2, x3, … (+199,996 more)")


def test_four_megabyte_names_are_cut_in_the_table() -> None:
    text = _table(from_dict(long_name(4_000_000)), {"data": (2, 5)})
    assert len(text) < 10_000
    assert "(4,000,000 chars)" in text
    # separate param and aux columns; the fc row holds 3*5 + 3 = 18 learnable parameters
    header = [line for line in text.splitlines() if "Layer" in line][0]
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "Layer", "Op", "Output shape", "Params", "Aux", "MACs", "Output bytes", "Previous layers"]
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
    text = _table(graph, {"data": (8, 30 * 32)})
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
