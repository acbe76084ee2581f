"""``kvcli.symbol.visualize`` / ``summarize_file``: what ``kvcli viz`` and ``kvcli summary`` do,
as one Python call returning values (issue 24, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kvcli.symbol
from kvcli.errors import ShapeInferenceError, SymbolError
from kvcli.symbol.graph import from_dict
from kvcli.symbol.pipeline import FOLDED, PARAMS, SHAPES_UNKNOWN, UNKNOWN_OPS, Note

from .conftest import REPO, needs_dot
from .graphs import unrolled
from .test_cli import UNKNOWN_OP

CHECKPOINT = REPO / "tests" / "data" / "mxnet_checkpoint"
SYMBOL = CHECKPOINT / "small_cnn-symbol.json"
GOOD, BAD = CHECKPOINT / "small_cnn-0000.params", CHECKPOINT / "small_cnn-bad.params"
MLP = REPO / "sample_graphs" / "mlp.json"


def test_exported_from_kvcli_symbol() -> None:
    from kvcli.symbol import pipeline

    assert kvcli.symbol.visualize is pipeline.visualize
    assert kvcli.symbol.summarize_file is pipeline.summarize_file
    with pytest.raises(AttributeError):
        kvcli.symbol.no_such_thing  # noqa: B018


@needs_dot
def test_a_big_graph_is_folded_and_the_note_is_returned(tmp_path: Path) -> None:
    seen: list[Note] = []
    # 4,501 boxes: more than a trial layout is worth, so folded at once (no timing involved)
    done = kvcli.symbol.visualize(from_dict(unrolled(1500)), tmp_path / "u.svg", on_note=seen.append)
    assert (done.output, done.format) == (tmp_path / "u.svg", "svg")
    assert (done.file_nodes, done.hidden, done.nodes, done.boxes) == (6001, 1500, 4501, 4)
    assert done.folded and done.shapes is False and done.params is None
    assert [(n.kind, n.warning) for n in done.notes] == [(SHAPES_UNKNOWN, True), (FOLDED, False)]
    assert done.notes[1].text == ("4,501 nodes (more than the 4,000 boxes whose exact layout kvcli tries): "
                                  "drew repeated blocks folded into 4 boxes")
    assert str(done.notes[1]).endswith("boxes; full=True draws every node exactly")  # Python's advice
    assert seen == done.notes  # given to on_note as they arose, in the same order
    assert done.counts_text() == "6,001 nodes in the file (1,500 weights hidden): 4,501 drawn as 4 boxes"
    assert (tmp_path / "u.svg").read_text(encoding="utf-8").count('class="node"') == 4
    full = kvcli.symbol.visualize(from_dict(unrolled(1500)), tmp_path / "u.dot", full=True)
    assert (full.nodes, full.boxes, full.folded) == (4501, 4501, False)


def test_collapse_focus_and_depth_to_dot(tmp_path: Path) -> None:
    graph = from_dict(unrolled(6))
    done = kvcli.symbol.visualize(graph, tmp_path / "c.dot", collapse=["l0_t*"], shape=["data=2,4"])
    assert done.shapes is True and done.nodes == 19 and done.boxes < done.nodes
    assert [n.kind for n in done.notes] == [FOLDED] and done.notes[0].text.startswith("collapsed l0_t*: 19 nodes")
    near = kvcli.symbol.visualize(graph, tmp_path / "f.dot", focus="l0_t3", radius=1, shape=["data=2,4"])
    assert near.notes[0].text.startswith(f"showing {near.nodes} of 19 nodes within 1 ")


@needs_dot
def test_html_viewer_written_atomically(tmp_path: Path) -> None:
    done = kvcli.symbol.visualize(MLP, tmp_path / "out" / "mlp.html", shape=["data=1,784"])
    assert (done.output, done.format, done.shapes) == (tmp_path / "out" / "mlp.html", "html", True)
    page = done.output.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "default-src 'none'" in page
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["mlp.html"]  # no temporary file left
    assert done.notes == []


def test_the_params_check_is_returned_as_values(tmp_path: Path) -> None:
    bad = kvcli.symbol.visualize(SYMBOL, tmp_path / "bad.dot", shape=["data=1,1,8,8"], params=BAD)
    assert bad.params is not None and not bad.params.ok
    assert [(p.kind, p.name) for p in bad.params.problems] == [
        ("shape", "conv1_weight"), ("missing", "fc2_bias"), ("extra", "extra_weight")]
    assert [(n.kind, n.warning) for n in bad.notes] == [(PARAMS, True)] * 3
    assert bad.notes[1].text == f"{BAD}: missing parameter 'fc2_bias' (3)"
    assert bad.to_dict()["params"]["matched"] == 8
    good = kvcli.symbol.visualize(SYMBOL, tmp_path / "good.dot", shape=["data=1,1,8,8"], params=GOOD)
    assert good.params is not None and good.params.ok and good.params.matched == 10
    assert [(n.kind, n.warning) for n in good.notes] == [(PARAMS, False)]
    with pytest.raises(SymbolError, match=r"'arg:conv1_weight' is 4x1x5x5; the graph needs 4x1x3x3 \(strict=True\)$"):
        kvcli.symbol.visualize(SYMBOL, tmp_path / "strict.dot", shape=["data=1,1,8,8"], params=BAD, strict=True)
    assert not (tmp_path / "strict.dot").exists()  # strict fails before anything is written


def test_summarize_file_with_params() -> None:
    found = kvcli.symbol.summarize_file(SYMBOL, shape=["data=1,1,8,8"], params=GOOD)
    assert found.params is not None and found.params.ok and found.notes[0].warning is False
    assert found.summary.to_dict()["totals"] == json.loads(json.dumps(found.summary.to_dict()["totals"]))
    assert len(found.graph.nodes) == len(kvcli.symbol.summarize_file(SYMBOL).graph.nodes)
    unknown = kvcli.symbol.summarize_file(SYMBOL)
    assert [n.kind for n in unknown.notes] == [SHAPES_UNKNOWN]
    with pytest.raises(ShapeInferenceError, match=r"some shapes are unknown.*\(strict=True\)$"):
        kvcli.symbol.summarize_file(SYMBOL, strict=True)


def test_an_unknown_op_is_refused_unless_allowed(tmp_path: Path) -> None:
    graph = from_dict(UNKNOWN_OP, source="unknown.json")
    with pytest.raises(SymbolError, match="unknown.json: unknown operator 'MysteryOp' at node 'magic'"):
        kvcli.symbol.visualize(graph, tmp_path / "u.dot", shape=["data=2,3"])
    assert not (tmp_path / "u.dot").exists()
    with pytest.raises(SymbolError, match="unknown operator 'MysteryOp'"):
        kvcli.symbol.summarize_file(graph)
    done = kvcli.symbol.visualize(graph, tmp_path / "u.dot", shape=["data=2,3"], allow_unknown_ops=True)
    assert [(n.kind, n.warning) for n in done.notes] == [(UNKNOWN_OPS, True)]
    assert "unknown operator MysteryOp ('magic')" in done.notes[0].text
    assert 'magic -> fc [label="2x4"' in (tmp_path / "u.dot").read_text(encoding="utf-8")
    found = kvcli.symbol.summarize_file(graph, shape=["data=2,3"], allow_unknown_ops=True)
    assert found.summary.to_dict()["totals"]["params_text"] == "at least 16"


def test_an_mx_symbol_is_drawn(tmp_path: Path) -> None:
    from kvcli.mx import sym

    net = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc")
    done = kvcli.symbol.visualize(net, tmp_path / "n.dot", shape=["data=2,5"])
    assert (done.source, done.file_nodes, done.hidden, done.nodes) == ("<symbol>", 4, 2, 2)
    assert 'fc -> data [label="2x5"' in (tmp_path / "n.dot").read_text(encoding="utf-8")


def test_errors_come_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(SymbolError, match="unknown output format '.txt'"):
        kvcli.symbol.visualize(MLP, tmp_path / "m.txt")
    with pytest.raises(SymbolError, match="use a positive number of seconds"):
        kvcli.symbol.visualize(MLP, tmp_path / "m.svg", layout_timeout=0)
    with pytest.raises(SymbolError, match="9 boxes to lay out is more than 5: .* or raise max_nodes$"):
        kvcli.symbol.visualize(MLP, tmp_path / "m.svg", max_nodes=5)
    assert list(tmp_path.iterdir()) == []
