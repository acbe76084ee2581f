"""Folding decided by what graphviz really costs, folds that keep the picture true, counts
said once, shared weights shown (issue 25, items 5 and 6)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from kvcli.symbol.fold import _cycles, fold_repeats
from kvcli.symbol.graph import from_dict
from kvcli.symbol.plan import build_plan, counts_text
from kvcli.symbol.shapes import infer_shapes
from kvcli.symbol.summary import summarize
from kvcli.symbol.viewer import node_data

from .conftest import needs_dot, run_kvcli
from .graphs import distinct_chain
from .test_bigviz import unrolled


def densenet_like(blocks: int = 3, layers: int = 6) -> dict:
    """A stem, dense blocks (each layer: bn, relu, conv, concat with everything before) and
    transitions (bn, conv, pool), named as Gluon's DenseNet names them."""
    nodes: list[dict] = [{"op": "null", "name": "data", "inputs": []}]

    def add(op: str, name: str, *inputs: int, **attrs: str) -> int:
        nodes.append({"op": op, "name": name, "attrs": attrs, "inputs": [[i, 0, 0] for i in inputs]})
        return len(nodes) - 1

    def conv(name: str, x: int, filters: int) -> int:
        w = add("null", name + "_weight")
        return add("Convolution", name, x, w, kernel="(1, 1)", num_filter=str(filters), no_bias="True")

    counter = {"conv": 0, "pool": 0, "bn": 0}

    def plain(kind: str) -> str:
        counter[kind] += 1
        return f"densenet0_{kind}{counter[kind] - 1}_fwd"

    x = conv(plain("conv"), 0, 8)
    x = add("Pooling", plain("pool"), x, kernel="(1, 1)", pool_type="max")
    for s in range(blocks):
        for k in range(layers):
            y = add("Activation", f"densenet0_stage{s + 1}_relu{k}_fwd", x, act_type="relu")
            y = conv(f"densenet0_stage{s + 1}_conv{k}_fwd", y, 4)
            x = add("Concat", f"densenet0_stage{s + 1}_concat{k}", x, y, dim="1", num_args="2")
        if s < blocks - 1:
            x = conv(plain("conv"), x, 8)
            x = add("Pooling", plain("pool"), x, kernel="(1, 1)", pool_type="avg")
    return {"nodes": nodes, "heads": [[x, 0, 0]]}


def _false_cycles(plan) -> list[list[str]]:
    """Cycles of boxes that are not one repeated cell (folds of one size, as an RNN's steps)."""
    succ: list[set[int]] = [set() for _ in plan.nodes]
    for e in plan.edges:
        if e.head != e.tail:
            succ[e.tail].add(e.head)
    return [[plan.nodes[i].name for i in c] for c in _cycles(succ)
            if len({len(plan.nodes[i].members) if plan.nodes[i].fold else -1 for i in c}) > 1
            or not all(plan.nodes[i].fold for i in c)]


def test_folds_never_merge_blocks_out_of_order() -> None:
    """DenseNet's stem and transition convs and pools were folded into one box each
    ("conv0 … conv2 (×3)", "pool0 … pool2 (×3)") with the blocks' layers: the picture then
    said every block feeds every other. Such folds (on a cycle of folds of different sizes)
    are undone; the blocks' own repeated layers still fold."""
    plan = build_plan(from_dict(densenet_like()), readable=True)
    folded = fold_repeats(plan)
    by_name = {n.name: n for n in folded.nodes}
    for name in ("densenet0_conv0_fwd", "densenet0_conv1_fwd", "densenet0_pool0_fwd", "densenet0_pool2_fwd"):
        assert len(by_name[name].members) == 1, name  # each where it is in the network
    assert _false_cycles(folded) == []  # cycles only within a repeated cell (a block's layers)
    layers = by_name["densenet0_stage2_conv0_fwd"]
    assert len(layers.members) == 6 and layers.fold == "repeat"  # a block's 6 layers: one box
    # an unrolled RNN's cell is one cycle of folds of the same size: it stays folded
    rnn = fold_repeats(build_plan(from_dict(unrolled(30)), readable=True))
    assert len(rnn.nodes) == 4 and {len(n.members) for n in rnn.nodes if n.fold} == {30}


def test_counts_are_said_once() -> None:
    assert counts_text(708, 0, 708, 708) == "708 nodes"
    assert counts_text(1714, 1006, 708, 708) == "1,714 nodes in the file (1,006 weights hidden): 708 drawn"
    assert counts_text(6084, 15, 6069, 49) == "6,084 nodes in the file (15 weights hidden): 6,069 drawn as 49 boxes"


@needs_dot
def test_cli_page_and_note_use_the_same_counts(tmp_path: Path) -> None:
    doc = unrolled(1400)  # 5,601 nodes in the file, 1,400 weights hidden, 4,201 drawn: too many to try
    path = tmp_path / "rnn.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "rnn.html"
    done = run_kvcli("viz", str(path), "--shape", "data=1,8", "-o", str(out))
    assert done.returncode == 0, done.stderr
    counts = "5,601 nodes in the file (1,400 weights hidden): 4,201 drawn as 4 boxes"
    assert done.stdout.strip() == f"wrote {out} ({counts})"
    assert done.stderr.splitlines() == ["4,201 nodes (more than the 4,000 boxes whose exact layout kvcli tries): "
                                        "drew repeated blocks folded into 4 boxes; --full draws every node exactly"]
    data = json.loads(re.search(r'id="kvcli-data">(.*?)</script>', out.read_text(encoding="utf-8"), re.S).group(1))
    # the page says what the command said, without the command line's advice
    assert data["counts"] == counts
    assert data["notes"] == [line.removesuffix("; --full draws every node exactly") for line in done.stderr.splitlines()]


@needs_dot
def test_a_costly_looking_graph_is_drawn_exactly_when_dot_is_quick(tmp_path: Path) -> None:
    """800 distinct nodes: above the old size limit (nodes + edges > 1,500), which drew them with
    bounded settings; dot lays it out in well under a second, so it is drawn exactly."""
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(distinct_chain(800)))
    out = tmp_path / "chain.svg"
    done = run_kvcli("viz", str(path), "--shape", "data=1,8", "-o", str(out))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.strip() == f"wrote {out} (801 nodes)"
    assert out.read_text().count('class="node"') == 802  # + the output's shape label


@needs_dot
def test_a_layout_that_takes_long_is_folded_after_the_trial(tmp_path: Path) -> None:
    """A fake dot that never finishes an unfolded layout: the trial's budget runs out, the
    graph is folded and drawn, and the note says why."""
    real = shutil.which("dot")
    fake = tmp_path / "dot"
    fake.write_text(f"#!/bin/sh\nsource=$(cat)\ncase \"$source\" in *peripheries*) ;; *) exec sleep 300 ;; esac\n"
                    f"printf '%s' \"$source\" | exec {real} \"$@\"\n")
    fake.chmod(0o755)
    path = tmp_path / "rnn.json"
    path.write_text(json.dumps(unrolled(300)))  # 901 drawn nodes: the estimate would try it
    out = tmp_path / "rnn.svg"
    done = run_kvcli("viz", str(path), "--shape", "data=1,8", "-o", str(out), env={"KVCLI_DOT": str(fake)})
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["901 nodes (the exact layout did not finish in 5 s): drew repeated "
                                        "blocks folded into 4 boxes; --full draws every node exactly"]
    assert out.read_text().count("peripheries") == 0 and out.read_text().count('class="node"') == 5
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_members_sharing_weights_show_the_shared_params() -> None:
    doc = unrolled(5)
    for node in doc["nodes"]:  # every step uses step 0's weight, as an unrolled RNN does
        if node["op"] == "FullyConnected":
            node["inputs"][1] = [1, 0, 0]
    graph = from_dict(doc)
    result = infer_shapes(graph, {"data": (1, 8)})
    plan = build_plan(graph, result, readable=True)
    data = node_data(plan, summarize(result))
    steps = {n["name"]: n for n in data["nodes"] if n["op"] == "FullyConnected"}
    assert steps["l0_t0"]["params"] == 64 and "shared" not in steps["l0_t0"]
    assert steps["l0_t3"]["params"] == 0 and steps["l0_t3"]["shared"] == [["l0_t0_w_weight", 64, "l0_t0"]]


@pytest.mark.parametrize("blocks", [2, 4])
def test_dense_blocks_fold_truthfully_at_any_depth(blocks: int) -> None:
    folded = fold_repeats(build_plan(from_dict(densenet_like(blocks, 8)), readable=True))
    assert _false_cycles(folded) == []
