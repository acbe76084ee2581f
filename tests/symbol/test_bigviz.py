"""Big graphs never hang: folding, bounded layout, timeouts, Ctrl-C, and every kept real model
renders."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import time
from xml.etree import ElementTree
from pathlib import Path

import pytest

from kvcli.errors import SymbolError
from kvcli.symbol.fold import collapse_depth, collapse_patterns, focus, fold_repeats, prepare
from kvcli.symbol.graph import from_dict, load_file
from kvcli.symbol.plan import OUTPUT_OP, build_plan
from kvcli.symbol.render import plan_to_digraph, write
from kvcli.symbol.shapes import infer_shapes

from .conftest import DATA, needs_dot, run_kvcli
from .graphs import unrolled
from .test_cli import one_line_error


def test_unrolled_steps_fold_into_one_cell() -> None:
    plan = build_plan(from_dict(unrolled(30)), readable=True)
    folded = fold_repeats(plan)
    labels = [n.label for n in folded.nodes]
    # data + one folded FC + one folded add + one folded tanh
    assert len(folded.nodes) == 4, labels
    assert "l0_t0 …\nt29 (×30)\nFullyConnected\n8" in labels  # the shared "l0_" once
    fc = next(n for n in folded.nodes if n.op == "FullyConnected")
    assert len(fc.members) == 30 and fc.fold == "repeat"
    tanh = next(n for n in folded.nodes if n.op == "Activation")
    assert tanh.label.endswith("(×30)\nActivation\ntanh")
    assert folded.notes == ["folded repeated blocks: 91 nodes drawn as 4 boxes"]


def test_fold_picks_the_number_that_varies_most() -> None:
    plan = build_plan(from_dict(unrolled(10, layers=2)), readable=True)
    folded = fold_repeats(plan)
    fcs = sorted(n.name for n in folded.nodes if n.op == "FullyConnected")
    assert fcs == ["l0_t0", "l1_t0"]  # steps folded, the two layers kept apart


def test_prepare_folds_only_when_costly() -> None:
    small = build_plan(from_dict(unrolled(5)), readable=True)
    same, bounded = prepare(small)
    assert len(same.nodes) == len(small.nodes) and not bounded and same.notes == []
    big = build_plan(from_dict(unrolled(600)), readable=True)
    folded, _ = prepare(big)
    assert len(folded.nodes) == 4
    assert folded.notes == ["1,801 nodes (4,201 boxes and edges, more than the 1,500 that are drawn exactly "
                            "without a trial): drew repeated blocks folded into 4 boxes"]  # the CLI adds "--full draws ..."
    exact, bounded = prepare(big, full=True)
    assert len(exact.nodes) == 1801 and not bounded


def test_collapse_depth_focus() -> None:
    plan = build_plan(from_dict(unrolled(10, layers=2)), readable=True)
    one = collapse_patterns(plan, ["l1_*"])
    grouped = [n for n in one.nodes if n.fold == "pattern"]
    assert len(grouped) == 1 and len(grouped[0].members) == 10 and grouped[0].label == "l1_* (×10)\nFullyConnected\n8"
    with pytest.raises(SymbolError, match="^collapse 'zz\\*' matches no drawn node"):  # Python's name, not the flag
        collapse_patterns(plan, ["zz*"])
    by_layer = collapse_depth(plan, 1)
    assert sorted(n.name for n in by_layer.nodes if n.fold == "depth") == ["l0", "l1"]
    near = focus(plan, "l0_t5", 1)
    assert sorted(n.name for n in near.nodes) == ["_plus43", "activation36", "l0_t5"]  # its input (step 4) and its consumer
    with pytest.raises(SymbolError, match="no drawn node has that name; similar: l0_t5"):
        focus(plan, "L0_T5 ", 1)


def test_a_huge_unrolled_graph_folds_into_one_cell_per_layer() -> None:
    # how long it takes (linear, about 1 s): `python bench/scale.py` (budget 6 s)
    folded = fold_repeats(build_plan(from_dict(unrolled(3000, layers=2)), readable=True))  # 24k nodes
    assert len(folded.nodes) == 7


def kept_models() -> list[Path]:
    """Every real model kept in tests/data (public files and MXNet-saved ones)."""
    return sorted((DATA / "sample_models").glob("*.json")) + sorted((DATA / "mxnet_models").glob("*.json"))


def test_the_kept_models_are_there() -> None:
    assert len(kept_models()) == 15


@needs_dot
@pytest.mark.parametrize("path", kept_models(), ids=lambda p: p.name)
def test_every_kept_model_renders(tmp_path: Path, path: Path) -> None:
    # How long each takes is measured by `python bench/viz.py --models` (budget: 10 s each).
    graph = load_file(path)
    for ext, magic in (("svg", b"<?xml"), ("pdf", b"%PDF")):
        plan, bounded = prepare(build_plan(graph, readable=True))
        out = tmp_path / f"{path.stem}.{ext}"
        write(plan_to_digraph(plan, title=path.stem, readable=True, bounded=bounded), out, timeout=60)
        data = out.read_bytes()
        assert data.startswith(magic) and len(data) > 1000


class SlowDot:
    """A fake ``dot`` that writes its pid to a marker file, then sleeps 30 s (a layout that
    'hangs'). It lives in a folder of its own, so the output folder holds only what kvcli wrote."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.program = folder / "slowdot"
        self.marker = folder / "started"
        self.program.write_text(f"#!/bin/sh\necho $$ > '{self.marker}.tmp'\nmv '{self.marker}.tmp' '{self.marker}'\n"
                                "exec sleep 30\n")
        self.program.chmod(0o755)

    def wait_started(self, proc: subprocess.Popen, seconds: float = 30) -> int:
        """The fake's pid, once it runs (the marker is renamed into place, so never half-written)."""
        deadline = time.monotonic() + seconds
        while not self.marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the fake dot never started"
            time.sleep(0.02)
        return int(self.marker.read_text())

    def running(self) -> bool:
        """Whether the fake (the pid it wrote) is still running; a zombie is not."""
        if not self.marker.exists():
            return False
        try:
            stat = Path(f"/proc/{int(self.marker.read_text())}/stat").read_text()
        except FileNotFoundError:
            return False
        return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def slow_dot(tmp_path: Path) -> SlowDot:
    return SlowDot(tmp_path / "fake-dot")


def _mlp() -> str:
    return str(Path(__file__).resolve().parents[2] / "sample_graphs" / "mlp.json")


def test_layout_timeout_stops_dot_and_leaves_no_file(tmp_path: Path, slow_dot: SlowDot) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = run_kvcli("viz", _mlp(), "-o", str(out_dir / "m.svg"), "--layout-timeout", "1",
                       env={"KVCLI_DOT": str(slow_dot.program)})
    one_line_error(result, "longer than 1 s", "--collapse", "or raise --layout-timeout")
    assert slow_dot.marker.exists() and not slow_dot.running()  # dot was started, and stopped
    assert list(out_dir.iterdir()) == []


def test_ctrl_c_stops_dot_cleanly(tmp_path: Path, slow_dot: SlowDot) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    env = dict(os.environ, KVCLI_DOT=str(slow_dot.program), NO_COLOR="1")
    proc = subprocess.Popen([sys.executable, "-m", "kvcli", "viz", _mlp(), "-o", str(out_dir / "m.svg")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    slow_dot.wait_started(proc)  # dot is laying out
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert not slow_dot.running()
    assert list(out_dir.iterdir()) == []  # no partial picture


@needs_dot
def test_spinner_only_on_a_terminal(tmp_path: Path) -> None:
    out = tmp_path / "m.svg"
    piped = run_kvcli("viz", _mlp(), "-o", str(out))
    assert piped.returncode == 0 and "\r" not in piped.stderr and "laying out" not in piped.stderr
    # on a terminal: a slow dot (sleep 3 s, then the real one) shows the CLI's one spinner
    # (output.status: from 0.5 s on, its seconds from 2 s on)
    script = tmp_path / "dot3"
    script.write_text("#!/bin/sh\nsleep 3\nexec dot \"$@\"\n")
    script.chmod(0o755)
    master, slave = pty.openpty()
    env = dict(os.environ, KVCLI_DOT=str(script), NO_COLOR="1")
    proc = subprocess.run([sys.executable, "-m", "kvcli", "viz", _mlp(), "-o", str(out), "--yes"], env=env,
                          stdout=subprocess.PIPE, stderr=slave, timeout=60)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if b"wrote" in proc.stdout or len(seen) > 1 << 20:
            break
    os.close(master)
    assert proc.returncode == 0
    plain = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", seen)  # rich's cursor and dim codes
    assert re.search(rb"laying out m\.svg with dot [23] s", plain), plain[-400:]


def _hostile() -> dict:
    evil = '<<TABLE><TR><TD HREF="javascript:alert(1)">x</TD></TR></TABLE>>'
    return {"nodes": [{"op": "null", "name": evil, "inputs": []},
                      {"op": "Activation", "name": evil, "attrs": {"act_type": "relu"}, "inputs": [[0, 0, 0]]},
                      {"op": "Activation", "name": 'q" URL="http://evil.example/" x="\\', "attrs": {"act_type": "relu"},
                       "inputs": [[1, 0, 0]]}],
            "heads": [[2, 0, 0]]}


@needs_dot
def test_html_like_names_stay_plain_text(tmp_path: Path) -> None:
    src = tmp_path / "evil.json"
    src.write_text(json.dumps(_hostile()))
    dot_out, svg_out = tmp_path / "e.dot", tmp_path / "e.svg"
    assert run_kvcli("viz", str(src), "-o", str(dot_out), "--title", "<<B>t</B>>").returncode == 0
    source = dot_out.read_text()
    # no HTML-like label but kvcli's own colour legend, in which the title is escaped text
    assert source.count("=<") == source.count("label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\"") == 1
    legend = source[source.index("label=<<TABLE"):].split("\n", 1)[0]
    assert "&lt;&lt;B&gt;t&lt;/B&gt;&gt;" in legend and "HREF" not in legend and "javascript" not in legend
    assert 'HREF=\\"' in source and 'URL=\\"http' in source  # quotes escaped inside one string
    result = run_kvcli("viz", str(src), "-o", str(svg_out), "--title", "<<B>t</B>>")
    assert result.returncode == 0, result.stderr
    root = ElementTree.parse(svg_out).getroot()
    for element in root.iter():
        assert not element.tag.endswith("}a"), "no links"
        for key, value in element.attrib.items():
            assert "href" not in key.lower() and "javascript:" not in value and "evil.example" not in value, (key, value)
    # the names are drawn as plain text (wrapped over lines)
    text = "".join(t.text or "" for t in root.iter() if t.tag.endswith("}text"))
    assert '<<TABLE><TR><TD HREF="javascript:alert(1)">x</TD></TR></TABLE>>' in text
    assert "<<B>t</B>>" in text


def test_stdin_and_stdout(tmp_path: Path) -> None:
    text = Path(_mlp()).read_text()
    proc = subprocess.run([sys.executable, "-m", "kvcli", "viz", "-", "-o", "-", "--format", "dot"],
                          input=text, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("digraph stdin {") and "fc1 -> data" in proc.stdout
    summary = subprocess.run([sys.executable, "-m", "kvcli", "summary", "-", "--json"], input=text,
                             capture_output=True, text=True, timeout=60)
    assert summary.returncode == 0, summary.stderr
    assert json.loads(summary.stdout)["file"] == "<stdin>"


@needs_dot
def test_svg_to_stdout() -> None:
    proc = subprocess.run([sys.executable, "-m", "kvcli", "viz", _mlp(), "-o", "-"], capture_output=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.lstrip().startswith(b"<?xml") and proc.stdout.rstrip().endswith(b"</svg>")


@needs_dot
def test_open_writes_a_temp_viewer_and_opens_it(tmp_path: Path) -> None:
    seen = tmp_path / "url.txt"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\necho \"$1\" > {seen}\n")
    browser.chmod(0o755)
    result = run_kvcli("viz", _mlp(), "--open", env={"BROWSER": str(browser)})
    assert result.returncode == 0, result.stderr
    url = seen.read_text().strip()
    assert url.startswith("file:///") and url.endswith("/mlp.html")
    page = Path(url[len("file://"):])
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "default-src 'none'" in page.read_text(encoding="utf-8")


def test_output_labels_of_folded_heads_fold_into_one() -> None:
    """129 per-step outputs (the char-LSTM's t*_sm) must not make a 129-wide rank of labels."""
    spec = unrolled(30)
    tanhs = [i for i, n in enumerate(spec["nodes"]) if n["op"] == "Activation"]
    spec["heads"] = [[i, 0, 0] for i in tanhs]
    graph = from_dict(spec)
    plan = build_plan(graph, infer_shapes(graph, {"data": (1, 8)}), readable=True)
    assert sum(1 for n in plan.nodes if n.op == OUTPUT_OP) == 30
    folded = fold_repeats(plan)
    outs = [n for n in folded.nodes if n.op == OUTPUT_OP]
    assert [n.label for n in outs] == ["activation4_output …\nactivation120_output (×30 outputs)\n1x8"]
    assert outs[0].members == [] and outs[0].shape == "plaintext" and outs[0].fold == "repeat"
    assert len(folded.nodes) == 5  # data, FC, add, tanh folds + one output label
    tanh = next(d for d, n in enumerate(folded.nodes) if n.op == "Activation")
    label = folded.nodes.index(outs[0])
    assert [(e.head, e.tail) for e in folded.edges if label in (e.head, e.tail)] == [(label, tanh)]


def test_cli_collapse_depth_focus_options(tmp_path: Path) -> None:
    """The command line's --collapse, --depth, --focus/--radius reach the drawing (DOT output)."""
    path = tmp_path / "rnn.json"
    path.write_text(json.dumps(unrolled(10, layers=2)), encoding="utf-8")
    out = tmp_path / "x.dot"

    def labels(*args: str) -> list[str]:
        result = run_kvcli("viz", str(path), "--shape", "data=1,8", *args, "-o", str(out), "--yes")
        assert result.returncode == 0, result.stderr
        found = re.findall(r'^\t([^\[\n]*) \[label="([^"]*)"', out.read_text(encoding="utf-8"), re.M)
        return sorted(label for ident, label in found if "->" not in ident)  # nodes, not edges

    assert "l1_* (×10)\nFullyConnected\n8" in labels("--collapse", "l1_*")
    assert [x for x in labels("--depth", "1") if "_* (×" in x] == ["l0_* (×10)\nFullyConnected\n8",
                                                                   "l1_* (×10)\nFullyConnected\n8"]
    assert labels("--focus", "l0_t5", "--radius", "1") == ["_plus43\nelemwise_add", "activation36\nActivation\ntanh",
                                                          "l0_t5\nFullyConnected\n8"]
    one_line_error(run_kvcli("viz", str(path), "--shape", "data=1,8", "--collapse", "zz*", "-o", str(out)),
                   "--collapse 'zz*' matches no drawn node")


def test_bounded_layout_settings_after_folding() -> None:
    """A graph still big after folding is laid out with graphviz's bounded settings, said in a note."""
    spec = {"nodes": [{"op": "null", "name": "data", "inputs": []}], "heads": []}
    for i in range(1200):  # 1,200 distinct names: nothing folds
        spec["nodes"].append({"op": "Activation", "name": f"act{i}x", "attrs": {"act_type": "relu"},
                              "inputs": [[len(spec["nodes"]) - 1, 0, 0]]})
    spec["heads"] = [[1200, 0, 0]]
    plan, bounded = prepare(build_plan(from_dict(spec), readable=True))
    assert bounded and len(plan.nodes) == 1201
    # (the CLI adds "; --full draws ...")
    assert plan.notes == ["1,201 nodes (2,401 boxes and edges, more than the 1,500 that are drawn exactly "
                          "without a trial): laid out with bounded graphviz settings (straight edges)"]
    source = plan_to_digraph(plan, readable=True, bounded=bounded).source
    assert 'graph [nslimit=2 nslimit1=2 mclimit=0.2 searchsize=20 splines=line remincross=false]' in source
    exact, bounded = prepare(build_plan(from_dict(spec), readable=True), full=True)
    assert not bounded and "nslimit" not in plan_to_digraph(exact, readable=True).source


@needs_dot
def test_a_png_graphviz_shrinks_says_so(tmp_path: Path) -> None:
    """A 400-box chain is taller than a bitmap may be: the PNG is shrunk, and the user is told how much."""
    spec = {"nodes": [{"op": "null", "name": "data", "inputs": []}], "heads": [[400, 0, 0]]}
    for i in range(400):
        spec["nodes"].append({"op": "Activation", "name": f"act{i}", "attrs": {"act_type": "relu"},
                              "inputs": [[i, 0, 0]]})
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    result = run_kvcli("viz", str(path), "--shape", "data=1,8", "-o", str(tmp_path / "chain.png"))
    assert result.returncode == 0, result.stderr
    note = [line for line in result.stderr.splitlines() if "shrank" in line]
    assert len(note) == 1 and re.fullmatch(r"chain\.png: graphviz shrank the picture to \d\d% \(bitmaps are limited to "
                                           r"32,767 pixels a side\); \.svg, \.pdf or \.html keep it full size", note[0])
    result = run_kvcli("viz", str(path), "--shape", "data=1,8", "-o", str(tmp_path / "chain.svg"))
    assert result.returncode == 0 and "shrank" not in result.stderr
