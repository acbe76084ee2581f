"""``kvcli summary`` piped (one line per layer, names whole) and names that try to style or
control the terminal (printed as text), plus mx.viz.print_summary's column on ResNet-50."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

import kvcli.mx as mx
from kvcli.symbol.graph import from_dict
from kvcli.symbol.shapes import infer_shapes
from kvcli.symbol.summary import print_table, summarize

from .conftest import run_kvcli


def _resnet_like(path: Path) -> list[str]:
    """Blocks named like MXNet's ResNets (stage1_unit1_conv1 ...): long enough to wrap."""
    nodes = [{"op": "null", "name": "data", "inputs": []}]
    names = []
    prev = 0
    for stage in range(1, 3):
        for unit in range(1, 3):
            for conv in range(1, 3):
                name = f"stage{stage}_unit{unit}_conv{conv}_with_a_long_descriptive_suffix"
                nodes.append({"op": "null", "name": f"{name}_weight", "inputs": []})
                nodes.append({"op": "Convolution", "name": name,
                              "attrs": {"kernel": "(3, 3)", "pad": "(1, 1)", "num_filter": "4", "no_bias": "True"},
                              "inputs": [[prev, 0, 0], [len(nodes) - 1, 0, 0]]})
                prev = len(nodes) - 1
                names.append(name)
    path.write_text(json.dumps({"nodes": nodes, "arg_nodes": [], "heads": [[prev, 0, 0]]}))
    return names


def test_piped_summary_has_one_line_per_layer_with_names_whole(tmp_path: Path) -> None:
    f = tmp_path / "net.json"
    names = _resnet_like(f)
    result = run_kvcli("summary", str(f), "--shape", "data=1,3,16,16")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for i, name in enumerate(names):
        found = [line for line in lines if line.startswith(name + " ")]
        assert len(found) == 1, (name, result.stdout)  # grep finds the whole name, on one line
        assert found[0].split()[:2] == [name, "Convolution"]
        previous = "data" if i == 0 else names[i - 1]
        assert found[0].split()[-1] == previous
    # title, header, rule, 9 rows (data + 8 convolutions), 4 totals: nothing wrapped
    assert len(lines) == 3 + 1 + len(names) + 4, result.stdout
    assert not any(c in result.stdout for c in "│┃━─")


HOSTILE = {"nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "Activation", "name": "evil\x1b[2J\x1b[31mred", "attrs": {"act_type": "relu"}, "inputs": [[0, 0, 0]]},
    {"op": "[bold red]Boom[/]", "name": "[link=https://x.invalid]click[/link]", "inputs": [[1, 0, 0]]},
    {"op": "null", "name": "w[/]\x07_weight", "inputs": []},
    {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "2"}, "inputs": [[2, 0, 0], [3, 0, 0]]}],
    "heads": [[4, 0, 0]]}


@pytest.mark.parametrize("terminal", [True, False])
def test_names_cannot_style_or_control_the_terminal(terminal: bool) -> None:
    graph = from_dict(json.loads(json.dumps(HOSTILE)))
    summary = summarize(infer_shapes(graph, {"data": (2, 3)}))
    buf = io.StringIO()
    print_table(summary, Console(file=buf, width=300, color_system=None, force_terminal=terminal),
                title="[blink]t\x1b[5m")
    text = buf.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "evil\\x1b[2J\\x1b[31mred" in text  # shown, escaped
    assert "[bold red]Boom[/]" in text  # the unknown op's name, in the totals line too
    assert "Unknown operators (shapes not inferred): [bold red]Boom[/]" in text
    assert "[link=https://x.invalid]click[/link]" in text
    assert "[blink]t\\x1b[5m" in text


def test_piped_cli_escapes_names(tmp_path: Path) -> None:
    f = tmp_path / "hostile.json"
    f.write_text(json.dumps(HOSTILE))
    result = run_kvcli("summary", str(f), "--shape", "data=2,3", "--allow-unknown-ops")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "evil\\x1b[2J\\x1b[31mred" in result.stdout
    assert "Unknown operators (shapes not inferred): [bold red]Boom[/]" in result.stdout


def test_print_summary_column_adds_up_on_resnet50(models: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's numbers: the column summed to 23,675,147 (aux included) for a total of 23,629,573."""
    net = mx.sym.load(str(models / "mxnet_v1.3_resnet50_attrs.json"))
    mx.viz.print_summary(net, shape={"data": (1, 3, 224, 224)})
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "(" in line[:52] and not line.startswith("Layer (type)")]
    assert sum(int(line[76:88]) for line in rows) == 23_629_573
    assert out.splitlines()[-2] == "Total params: 23629573"
    bn = next(line for line in rows if line.startswith("bn_data(BatchNorm)"))
    assert int(bn[76:88]) == 6  # gamma and beta of 3 channels; the moving statistics are not params


def test_warnings_escape_names(tmp_path: Path) -> None:
    f = tmp_path / "h.json"
    f.write_text(json.dumps({"nodes": [{"op": "null", "name": "data", "inputs": []},
                                       {"op": "Bo\x1b[31mom", "name": "x\x1b[2Jy", "inputs": [[0, 0, 0]]}],
                             "heads": [[1, 0, 0]]}))
    for extra in ((), ("--strict",)):
        result = run_kvcli("summary", str(f), "--allow-unknown-ops", "--shape", "data=1,2", *extra)
        assert "\x1b" not in result.stderr + result.stdout
        assert "unknown operator Bo\\x1b[31mom ('x\\x1b[2Jy')" in result.stderr


def test_totals_footer_cuts_huge_names_of_unknown_ops_and_params() -> None:
    """The footer's warnings name unknown ops and shapeless parameters: a 1 MB name from the
    file is cut with its length, and at most ten unknown ops are listed."""
    long = "q" * 1_000_000
    nodes = [{"op": "null", "name": "data", "inputs": []},
             {"op": "null", "name": "w" + long, "inputs": []}]
    for i in range(12):
        nodes.append({"op": f"NoSuchOp{i}" + long, "name": f"n{i}", "inputs": [[len(nodes) - 1, 0, 0]]})
    nodes.append({"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "2"},
                  "inputs": [[len(nodes) - 1, 0, 0], [1, 0, 0]]})
    graph = from_dict({"nodes": nodes, "arg_nodes": [0, 1], "heads": [[len(nodes) - 1, 0, 0]]})
    buf = io.StringIO()
    print_table(summarize(infer_shapes(graph, {})), Console(file=buf, width=200, color_system=None))
    footer = buf.getvalue().split("Learnable parameters:")[1]
    assert max(len(line) for line in footer.splitlines()) < 2_000
    assert "(1,000,009 chars)" in footer and "and 2 more" in footer
