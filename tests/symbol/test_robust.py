"""Robustness of `kvcli viz`/`summary` against hostile or odd inputs (issue 20): huge names,
signals while graphviz runs, devices, FIFOs and stalled pipes, and the page's CSP."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kvcli.symbol.graph import from_dict
from kvcli.symbol.plan import DOT_STRING_LIMIT, build_plan, node_label, wrap
from kvcli.symbol.shapes import infer_shapes

from tests.runner import KVCLI, kvcli_env

from tests.runner import run_kvcli as run_raw

from .conftest import SAMPLES, needs_dot, run_kvcli


def _one_op(name: str, op: str = "Activation", attrs: dict | None = None) -> dict:
    return {"nodes": [{"op": "null", "name": "data", "inputs": []},
                      {"op": op, "name": name, "attrs": attrs if attrs is not None else {"act_type": "relu"},
                       "inputs": [[0, 0, 0]]}],
            "arg_nodes": [0], "heads": [[1, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}


LONG = "block_" * 200_000 + "x" * 800_000  # 2,000,000 characters, with and without break points


def test_long_names_are_cut_with_their_length() -> None:
    graph = from_dict(_one_op(LONG))
    plan = build_plan(graph, infer_shapes(graph, {"data": (1, 3)}), readable=True)
    label = plan.nodes[1].label
    assert len(label) < 300
    assert "…" in label and "(2,000,000 chars)" in label
    assert label.endswith("\nActivation\nrelu")
    # the output-shape label under the head is cut the same way
    assert "_output\n(2,000,007 chars)\n1x3" in plan.nodes[2].label and len(plan.nodes[2].label) < 300
    # plot_network's labels stay exact unless graphviz would refuse them
    assert node_label(from_dict(_one_op("a" * 500, "Flatten", {})).nodes[1]) == "a" * 500
    cut = node_label(from_dict(_one_op("a" * (DOT_STRING_LIMIT + 1), "Flatten", {})).nodes[1])
    assert len(cut) < 300 and f"({DOT_STRING_LIMIT + 1:,} chars)" in cut


def test_wrap_keeps_every_character_and_width() -> None:
    text = "ab_" * 40 + "y" * 100 + "/c.d" * 30
    lines = wrap(text).split("\n")
    assert "".join(lines) == text
    assert max(len(line) for line in lines) <= 22
    assert wrap("y" * 50) == "y" * 22 + "\n" + "y" * 22 + "\n" + "y" * 6


@needs_dot
@pytest.mark.parametrize("suffix", ["svg", "html"])
def test_a_model_with_a_huge_name_draws(tmp_path: Path, suffix: str) -> None:
    """Graphviz refuses strings of ~16,000 characters: before, nothing was drawn (after a
    quadratic wrap of the name that took minutes)."""
    model = tmp_path / "long-symbol.json"
    model.write_text(json.dumps(_one_op(LONG)))
    out = tmp_path / f"long.{suffix}"
    done = run_kvcli("viz", str(model), "--shape", "data=1,3", "-o", str(out), timeout=120)
    assert done.returncode == 0, done.stderr[:500]
    assert "(2,000,000 chars)" in out.read_text(encoding="utf-8")
    assert out.stat().st_size < (3_000_000 if suffix == "html" else 20_000)  # the page keeps the name once


def test_warnings_do_not_echo_huge_names(tmp_path: Path) -> None:
    name = "q" * 1_000_000
    model = tmp_path / "m-symbol.json"
    doc = _one_op(name, "Bogus" + name, {})
    doc["nodes"].append({"op": "Reshape", "name": "r" + name, "attrs": {"shape": "(7,7)"}, "inputs": [[0, 0, 0]]})
    doc["heads"].append([2, 0, 0])
    model.write_text(json.dumps(doc))
    refused = run_kvcli("summary", str(model), "--shape", "data=1,3")
    assert refused.returncode == 1 and len(refused.stderr) < 1000, len(refused.stderr)
    assert "(1,000,005 chars)" in refused.stderr
    drawn = run_kvcli("viz", str(model), "--shape", "data=1,3", "--allow-unknown-ops", "--partial", "-o", str(tmp_path / "m.dot"))
    assert drawn.returncode == 0
    lines = drawn.stderr.splitlines()
    assert len(lines) == 2 and all(len(line) < 600 for line in lines), [len(x) for x in lines]
    assert "unknown operator" in lines[0] and "cannot infer shapes at 'rqqq" in lines[1]
    focus = run_kvcli("viz", str(model), "--allow-unknown-ops", "--focus", "z" * 100_000, "-o", str(tmp_path / "f.svg"))
    assert focus.returncode == 1 and len(focus.stderr) < 1000 and "(100,000 chars)" in focus.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_stops_dot_and_leaves_no_part_file(tmp_path: Path, sig: signal.Signals) -> None:
    """SIGTERM/SIGHUP used to end Python at once: `dot` ran on as an orphan, `.part` stayed."""
    pid_file = tmp_path / "dot.pid"
    fake = tmp_path / "slowdot"
    fake.write_text(f"#!/bin/sh\necho $$ > {pid_file}.tmp && mv {pid_file}.tmp {pid_file}\nexec sleep 300\n")
    fake.chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen([str(KVCLI), "viz", str(SAMPLES / "mlp.json"), "-o", str(out / "mlp.svg")],
                            env=kvcli_env(KVCLI_DOT=str(fake)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        while not pid_file.exists():  # the fake dot says when it runs
            assert proc.poll() is None, proc.communicate()
            os.sched_yield()
        dot_pid = int(pid_file.read_text())
        assert list(out.iterdir()) == []  # dot writes to a pipe: nothing is on disk while it runs
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "interrupted" in err.decode()
    assert list(out.iterdir()) == []
    try:
        os.kill(dot_pid, 0)
        alive = Path(f"/proc/{dot_pid}/stat").read_text().split()[2] != "Z"
    except ProcessLookupError:
        alive = False
    if alive:
        os.kill(dot_pid, signal.SIGKILL)
    assert not alive, "dot was left running"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_summary_of_a_device_is_refused_at_once() -> None:
    done = run_kvcli("summary", "/dev/zero", timeout=20)
    assert done.returncode == 1 and "is a device, not a file" in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs")
def test_a_fifo_with_no_writer_times_out(tmp_path: Path) -> None:
    fifo = tmp_path / "model.json"
    os.mkfifo(fifo)
    done = run_kvcli("summary", str(fifo), env={"KVCLI_STREAM_TIMEOUT": "0.5"}, timeout=30)
    assert done.returncode == 1 and "sent no data for 0.5 s" in done.stderr


def test_a_stalled_stdin_times_out(tmp_path: Path) -> None:
    proc = subprocess.Popen([str(KVCLI), "viz", "-", "-o", str(tmp_path / "x.svg")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=kvcli_env(KVCLI_STREAM_TIMEOUT="0.5"))
    try:
        proc.wait(timeout=30)  # stdin stays open and silent (communicate() would close it)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()  # type: ignore[union-attr]
    err = proc.stderr.read().decode()  # type: ignore[union-attr]
    assert proc.returncode == 1 and "<stdin>: sent no data for 0.5 s" in err
    assert not (tmp_path / "x.svg").exists()


def test_binary_stdin_is_refused_before_it_is_read_whole() -> None:
    done = run_raw("summary", "-", input=b"\x00" * 100_000)
    assert done.returncode == 1 and "does not start with '{'" in done.stderr


def test_stdin_and_fifo_still_read(tmp_path: Path) -> None:
    text = (SAMPLES / "mlp.json").read_bytes()
    done = run_raw("summary", "-", input=text)
    assert done.returncode == 0 and "Learnable parameters: 109,386" in done.stdout


def test_the_page_allows_only_its_own_script() -> None:
    from kvcli.symbol.shapes import infer_shapes as infer
    from kvcli.symbol.summary import summarize
    from kvcli.symbol.viewer import build_html

    graph = from_dict(_one_op("act"))
    result = infer(graph, {"data": (1, 3)})
    page = build_html(build_plan(graph, result, readable=True), summarize(result), "<svg></svg>", "t")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert "form-action 'none'" in policy and "default-src 'none'" in policy and "base-uri 'none'" in policy
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1  # the JSON block is data (type=application/json), not a script
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
