"""``kvcli viz`` / ``kvcli summary`` through the real CLI (subprocess), including bad input."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from .conftest import SAMPLES, needs_dot, run_kvcli
from .graphs import big_chain

# MXNet 1.9.1's infer_shape totals for the generated samples (loaded with mx.sym.load; the
# __shape__ hints on their inputs are enough, no --shape needed). Learnable = argument shapes
# minus inputs/labels/RNN initial states.
SAMPLE_TOTALS = {
    "matrix_factorization.json": (96_000, 0, {"lro_output": [1, 1]}),
    "mlp.json": (109_386, 0, {"softmax_output": [1, 10]}),
    "lenet.json": (431_180, 100, {"softmax_output": [1, 10]}),
    "mini_resnet.json": (19_994, 288, {"softmax_output": [1, 10]}),
    "lstm_unrolled.json": (17_298, 0, {f"t{t}_sm_output": [1, 50] for t in range(4)}),
    "rnn_fused.json": (165_604, 0, {"softmax_output": [10, 100]}),
}


def one_line_error(result, *needles: str) -> None:
    """Exit 1 and one error line: ``error: ...``, or with --json one JSON object."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    if "--json" in result.args:
        message = json.loads(lines[0])["error"]
    else:
        assert lines[0].startswith("error: ")
        message = lines[0]
    for needle in needles:
        assert needle in message, message


@pytest.mark.parametrize("name", sorted(SAMPLE_TOTALS))
def test_sample_graph_totals_without_shape(name: str) -> None:
    result = run_kvcli("summary", str(SAMPLES / name), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    params, aux, outputs = SAMPLE_TOTALS[name]
    assert (doc["totals"]["params"], doc["totals"]["aux"], doc["totals"]["exact"]) == (params, aux, True)
    assert doc["outputs"] == outputs
    assert result.stderr == ""  # complete: no warnings


def test_samples_are_reproducible(tmp_path: Path) -> None:
    import shutil
    import subprocess

    copy = tmp_path / "sample_graphs"
    shutil.copytree(SAMPLES, copy)
    for f in copy.glob("*.json"):
        f.unlink()
    subprocess.run([sys.executable, str(copy / "make_samples.py")], check=True, capture_output=True)
    for f in SAMPLES.glob("*.json"):
        assert (copy / f.name).read_text(encoding="utf-8") == f.read_text(encoding="utf-8"), f.name


def test_summary_table_and_global_json(models: Path) -> None:
    f = str(models / "mxnet_v1.3_resnet50_attrs.json")
    table = run_kvcli("summary", f, "--shape", "data=1,3,224,224")
    assert table.returncode == 0, table.stderr
    assert "Learnable parameters: 23,629,573" in table.stdout
    assert "Auxiliary states:     45,574" in table.stdout
    assert "1x64x112x112" in table.stdout
    as_json = run_kvcli("--json", "summary", f, "--shape", "data=(1, 3, 224, 224)")
    doc = json.loads(as_json.stdout)
    assert doc["totals"] == {"params": 23_629_573, "aux": 45_574, "exact": True,
                             "params_text": "23,629,573", "aux_text": "45,574",
                             "macs": 4_087_265_280, "macs_exact": True, "macs_text": "4,087,265,280 (4.09 G)",
                             "out_bytes": 146_430_456, "out_bytes_exact": True,
                             "out_bytes_text": "146,430,456 (140 MiB)"}
    conv0 = next(layer for layer in doc["layers"] if layer["name"] == "conv0")
    assert conv0 == {"name": "conv0", "op": "Convolution", "output_shapes": [[1, 64, 112, 112]],
                     "params": 9408, "aux": 0, "unknown_params": [], "previous": ["bn_data"],
                     "macs": 7 * 7 * 3 * 64 * 112 * 112, "out_bytes": 64 * 112 * 112 * 4}


def test_summary_glob_shapes_for_rnn_states(models: Path) -> None:
    result = run_kvcli("summary", str(models / "mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json"), "--json",
                       "--shape", "data/*=32", "--shape", "l*_init_*=32,512")
    doc = json.loads(result.stdout)
    assert doc["totals"]["params"] == 5_844_052 and doc["totals"]["exact"]
    assert doc["inputs"]["l2_init_h"] == [32, 512]
    assert set(map(tuple, doc["outputs"].values())) == {(32, 84)}


@needs_dot
def test_viz_svg_default_name_in_current_folder(tmp_path: Path) -> None:
    result = run_kvcli("viz", str(SAMPLES / "matrix_factorization.json"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    svg = (tmp_path / "matrix_factorization.svg").read_text(encoding="utf-8")
    assert "sum_ reducción" in svg and "#8dd3c7" in svg
    assert "1x64" in svg  # edge shapes from the file's __shape__ hints


@needs_dot
@pytest.mark.parametrize("ext,magic", [(".pdf", b"%PDF"), (".png", b"\x89PNG")])
def test_viz_formats(tmp_path: Path, models: Path, ext: str, magic: bytes) -> None:
    out = tmp_path / "sub" / f"net{ext}"
    result = run_kvcli("viz", str(models / "mxnet_v1.6_gluon_lenet_mnist_attrs.json"), "-o", str(out),
                       "--shape", "data=1,1,28,28", "--rankdir", "lr", "--title", "LeNet")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes().startswith(magic)


def test_viz_dot_output_has_title_rankdir_weights(tmp_path: Path) -> None:
    out = tmp_path / "mlp.dot"
    result = run_kvcli("viz", str(SAMPLES / "mlp.json"), "-o", str(out), "--title", "MLP",
                       "--rankdir", "LR", "--show-weights", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"file": str(SAMPLES / "mlp.json"), "output": str(out),
                                         "format": "dot", "file_nodes": 15, "nodes": 15, "drawn": 15, "shapes": True}
    source = out.read_text(encoding="utf-8")
    assert "rankdir=RL" in source  # the inputs on the left: dot's edges run from consumer back to input
    assert '<FONT POINT-SIZE="20">MLP</FONT>' in source  # the title, over the colour legend
    assert 'fc1_weight [label=fc1_weight fillcolor="#8dd3c7"' in source
    assert 'fc1 -> fc1_weight [label="128x784"' in source
    # the CLI labels every op node with its name and op (readable mode), boxes grow to fit
    assert 'fc1 [label="fc1\nFullyConnected\n128" fillcolor="#fb8072" fixedsize=false' in source


def test_viz_without_dot_writes_dot_and_explains(tmp_path: Path) -> None:
    out = tmp_path / "mlp.svg"
    result = run_kvcli("viz", str(SAMPLES / "mlp.json"), "-o", str(out),
                       env={"PATH": str(tmp_path / "empty"), "KVCLI_DOT": ""})
    one_line_error(result, "'dot' program was not found", "install graphviz", str(tmp_path / "mlp.dot"))
    assert (tmp_path / "mlp.dot").read_text(encoding="utf-8").startswith("digraph")
    assert not out.exists()


# ---------------------------------------------------------------------------- bad input

def write(tmp_path: Path, name: str, content: str | dict) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return str(path)


def nodes(*items: dict) -> list[dict]:
    return list(items)


VAR = {"op": "null", "name": "data", "inputs": []}


@pytest.mark.parametrize("command", ["summary", "viz"])
@pytest.mark.parametrize("content,needle", [
    ("this is not json", "not JSON"),
    ({"nodes": [VAR]}, "no 'heads' key"),
    ({"heads": [[0, 0, 0]]}, "no 'nodes' key"),
    ({"nodes": [VAR, {"op": "relu", "name": "r", "inputs": [[5, 0, 0]]}], "heads": [[1, 0, 0]]},
     "input index out of range"),
    ({"nodes": [{"op": "relu", "name": "a", "inputs": [[1, 0, 0]]}, {"op": "relu", "name": "b", "inputs": [[0, 0, 0]]}],
      "heads": [[1, 0, 0]]}, "cycle"),
    ({"nodes": [VAR], "heads": [[9, 0, 0]]}, "points nowhere"),
], ids=["not-json", "no-heads", "no-nodes", "index-out-of-range", "cycle", "head-nowhere"])
def test_bad_files_one_line_error(tmp_path: Path, command: str, content, needle: str) -> None:
    path = write(tmp_path, "bad model.json", content)
    result = run_kvcli(command, path, "-o" if command == "viz" else "--json",
                       *([str(tmp_path / "o.dot")] if command == "viz" else []))
    one_line_error(result, path, needle)


@pytest.mark.parametrize("spec,needle", [
    ("data=1,a", "'a' is not a positive whole number"),
    ("data", "has no NAME="),
    ("data=", "gives no dimensions"),
    ("data=0,3", "'0' is not a positive whole number"),
    ("dta=1,784", "'dta', which is not a variable"),
    ("x*=3", "pattern 'x*' matches no variable"),
])
def test_bad_shape_strings(spec: str, needle: str) -> None:
    path = str(SAMPLES / "mlp.json")
    one_line_error(run_kvcli("summary", path, "--shape", spec), path, needle)


def test_shape_conflict_like_mxnet(models: Path) -> None:
    path = str(models / "mxnet_v1.4_gluon_mlp_dropout_attrs.json")
    one_line_error(run_kvcli("summary", path, "--shape", "data=1,784"), path, "(1024, 625)", "(1024, 784)")


UNKNOWN_OP = {"nodes": [VAR, {"op": "null", "name": "fc_weight", "inputs": []},
                        {"op": "null", "name": "fc_bias", "inputs": []},
                        {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "4"},
                         "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
                        {"op": "null", "name": "mystery_weight", "inputs": []},
                        {"op": "MysteryOp", "name": "magic", "inputs": [[3, 0, 0], [4, 0, 0]]}],
              "heads": [[5, 0, 0]]}


def test_an_op_mxnet_never_had_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "unknown.json", UNKNOWN_OP)
    for command in ("summary", "viz"):
        result = run_kvcli(command, path, "--shape", "data=2,3", "-o", str(tmp_path / "u.dot")) if command == "viz" \
            else run_kvcli(command, path, "--shape", "data=2,3")
        one_line_error(result, path, "unknown operator 'MysteryOp' at node 'magic'", "--allow-unknown-ops")
    assert not (tmp_path / "u.dot").exists()


def test_an_mxnet_op_without_a_shape_rule_gives_at_least(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(UNKNOWN_OP).replace("MysteryOp", "BilinearSampler"))
    path = write(tmp_path, "sampler.json", doc)
    result = run_kvcli("summary", path, "--shape", "data=2,3")
    assert result.returncode == 0, result.stderr
    assert "Learnable parameters: at least 16" in result.stdout
    assert "unknown operator BilinearSampler ('magic')" in result.stderr


def test_unknown_op_shows_unknown_and_at_least(tmp_path: Path) -> None:
    path = write(tmp_path, "unknown.json", UNKNOWN_OP)
    result = run_kvcli("summary", path, "--shape", "data=2,3", "--allow-unknown-ops")
    assert result.returncode == 0, result.stderr
    assert "Learnable parameters: at least 16" in result.stdout  # fc: 4x3 + 4; mystery unknown
    assert "MysteryOp (unknown op)" in result.stdout
    warning = result.stderr.strip().splitlines()
    assert len(warning) == 1 and "unknown operator MysteryOp ('magic')" in warning[0] and path in warning[0]
    doc = json.loads(run_kvcli("summary", path, "--shape", "data=2,3", "--json", "--allow-unknown-ops").stdout)
    assert doc["totals"]["exact"] is False and doc["totals"]["params_text"] == "at least 16"
    assert doc["outputs"] == {"magic_output": None}
    strict = run_kvcli("summary", path, "--shape", "data=2,3", "--strict", "--allow-unknown-ops")
    one_line_error(strict, path, "unknown operator MysteryOp", ": --strict makes this an error")


def test_unknown_op_still_draws(tmp_path: Path) -> None:
    path = write(tmp_path, "unknown.json", UNKNOWN_OP)
    out = tmp_path / "u.dot"
    result = run_kvcli("viz", path, "--shape", "data=2,3", "-o", str(out), "--allow-unknown-ops")
    assert result.returncode == 0, result.stderr
    source = out.read_text(encoding="utf-8")
    assert 'magic -> fc [label="2x4"' in source and 'magic [label="magic\nMysteryOp" fillcolor="#fccde5"' in source


def test_missing_file() -> None:
    one_line_error(run_kvcli("summary", "/nonexistent/model.json"), "/nonexistent/model.json", "no such file")


@pytest.fixture(scope="module")
def fifty_mb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("big") / "big-symbol.json"
    n = big_chain(path, 50_000_000)
    assert path.stat().st_size >= 49_000_000
    return path, n


def test_fifty_mb_truncated_file_is_one_error(fifty_mb: tuple[Path, int], tmp_path: Path) -> None:
    # how long it takes: `python bench/scale.py` (budget 10 s)
    big, _ = fifty_mb
    cut = tmp_path / "cut.json"
    with big.open("rb") as src, cut.open("wb") as dst:
        dst.write(src.read(os.path.getsize(big) - 1000))
    result = run_kvcli("summary", str(cut))
    one_line_error(result, str(cut), "not JSON")
    assert len(result.stderr) < 400  # the message never echoes the file's content


def test_fifty_mb_graph_is_summarised_and_viz_refuses_layout(fifty_mb: tuple[Path, int]) -> None:
    # how long the summary takes (linear in the file): `python bench/scale.py` (budget 30 s)
    big, n = fifty_mb
    result = run_kvcli("summary", str(big), "--shape", "data=1,10", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert len(doc["layers"]) == n and doc["layers"][-1]["name"] == f"activation_layer_{n - 1:07d}"
    assert doc["totals"]["params"] == 0 and doc["totals"]["exact"]
    assert doc["outputs"] == {f"activation_layer_{n - 1:07d}_output": [1, 10]}
    # --full folds nothing: refused before any work (folded, the limit is on the folded boxes)
    viz = run_kvcli("viz", str(big), "-o", "never.svg", "--full")
    one_line_error(viz, str(big), "more than 20,000", "or raise --max-nodes")


def test_help_has_examples() -> None:
    for command in ("viz", "summary"):
        result = run_kvcli(command, "--help")
        assert result.returncode == 0
        assert "Examples" in result.stdout and "--shape" in result.stdout


def test_viz_and_summary_run_on_the_fast_path_repeated_shapes_included() -> None:
    """No typer import for a plain `kvcli viz`/`summary` (half the start-up CPU): the fast
    path gathers a repeatable option's values into a list and makes the model a Path, as typer does."""
    from kvcli.cli.fast import parse

    parsed = parse(["viz", "m-symbol.json", "--shape", "data/*=32", "--shape", "l*_init_*=32,512", "-o", "x.html"])
    assert parsed is not None
    command, _, values = parsed
    assert command.name == "viz"
    assert values["file"] == Path("m-symbol.json") and values["shape"] == ["data/*=32", "l*_init_*=32,512"]
    assert values["out"] == Path("x.html")
    assert values["rankdir"] == "tb" and values["values"] is None and values["no_params"] is False
    summary = parse(["summary", "m.json", "--shape", "data=1,3"])
    assert summary is not None and summary[2]["shape"] == ["data=1,3"]
    assert parse(["viz", "m.json", "-o", "a.svg", "-o", "b.svg"]) is None  # a repeated single option: typer says so
