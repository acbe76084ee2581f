"""Benchmark: how much of ``kvcli viz`` is ours (load + infer + build DOT) vs graphviz layout.

    .venv/bin/python bench/viz.py [--repeat N]

Cases: the largest kept model (the 6084-node char-LSTM, 877 KB, in tests/data/sample_models) and a
synthetic 5,000-node graph (stacked conv/BN/relu blocks with residual adds). Our share must
stay under 10% of the total; graphviz's ``dot -Tsvg`` does the layout.

``--end-to-end`` instead times the whole ``kvcli viz`` command (a fresh process, folding and
graphviz included) to SVG and to the HTML viewer on the char-LSTM, best of ``--repeat``.

``--models`` instead renders every real model kept in tests/data to SVG and PDF the way
``kvcli viz`` does (folding and bounded layout included) and checks each against the 10 s
budget of issue 11.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kvcli.symbol.build import NameManager, Symbol  # noqa: E402
from kvcli.symbol.graph import load_file  # noqa: E402
from kvcli.mx import sym  # noqa: E402
from kvcli.symbol.fold import prepare  # noqa: E402
from kvcli.symbol.plan import build_plan  # noqa: E402
from kvcli.symbol.render import dot_program, plan_to_digraph, to_digraph, write  # noqa: E402
from kvcli.symbol.shapes import infer_shapes  # noqa: E402

_REPO = Path(__file__).resolve().parents[1]
DATA = _REPO / "tests" / "data"
CHAR_LSTM = DATA / "sample_models" / "mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json"
#: Seconds each kept model may take to render to one format (``--models``).
MODEL_BUDGET_S = 10.0


def synthetic(nodes: int = 5000) -> Symbol:
    """About ``nodes`` nodes: residual blocks of conv→BN→relu (weights included in the count)."""
    NameManager.reset()
    net = sym.Variable("data", shape=(1, 16, 32, 32))
    i = 0
    while True:
        # Count every 50 blocks: building the graph to count it is not free.
        if i % 50 == 0 and len(net.to_graph().nodes) >= nodes:
            break
        x = sym.Convolution(net, kernel=(3, 3), pad=(1, 1), num_filter=16, name=f"conv{i}")
        x = sym.BatchNorm(x, name=f"bn{i}")
        x = sym.Activation(x, act_type="relu", name=f"relu{i}")
        net = x + net if i % 2 else x
        i += 1
    return net


def measure(name: str, path: Path, shapes: dict, repeat: int, out_dir: Path) -> tuple:
    ours = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        graph = load_file(path)
        result = infer_shapes(graph, shapes)
        source = to_digraph(graph, result, title=name).source
        ours.append(time.perf_counter() - t0)
    dot_file = out_dir / f"{name}.dot"
    dot_file.write_text(source, encoding="utf-8")
    t0 = time.perf_counter()
    subprocess.run([dot_program() or "dot", "-Tsvg", str(dot_file), "-o", str(out_dir / f"{name}.svg")],
                   check=True, capture_output=True)
    layout = time.perf_counter() - t0
    ours_best = min(ours)
    return name, len(graph.nodes), ours_best, layout, ours_best / (ours_best + layout)


def end_to_end(repeat: int, as_json: bool) -> None:
    """Best-of-``repeat`` wall time of ``kvcli viz CHAR_LSTM -o out.{svg,html}``."""
    if not CHAR_LSTM.exists():
        sys.exit(f"the char-LSTM is needed for --end-to-end: {CHAR_LSTM} not found")
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for ext in ("svg", "html"):
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-m", "kvcli", "viz", str(CHAR_LSTM), "-o", f"{tmp}/m.{ext}", "--yes"],
                               check=True, capture_output=True)
                best = min(best, time.perf_counter() - t0)
            times[ext] = best
    if as_json:
        print(json.dumps({"case": "char_lstm_6084", "svg_s": times["svg"], "html_s": times["html"]}))
    else:
        print(f"kvcli viz char-LSTM (6,069 nodes): .svg {times['svg']:.2f} s, .html {times['html']:.2f} s")


def models(as_json: bool) -> None:
    """Time rendering every kept real model to .svg and .pdf; exit 1 when one is over budget."""
    files = sorted((DATA / "sample_models").glob("*.json")) + sorted((DATA / "mxnet_models").glob("*.json"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            graph = load_file(path)
            for ext in ("svg", "pdf"):
                t0 = time.perf_counter()
                plan, bounded = prepare(build_plan(graph, readable=True))
                write(plan_to_digraph(plan, title=path.stem, readable=True, bounded=bounded),
                      Path(tmp) / f"{path.stem}.{ext}", timeout=MODEL_BUDGET_S * 3)
                rows.append((path.name, ext, time.perf_counter() - t0))
    over = [row for row in rows if row[2] > MODEL_BUDGET_S]
    if as_json:
        print(json.dumps({"cases": [{"file": name, "format": ext, "seconds": s} for name, ext, s in rows],
                          "budget_s": MODEL_BUDGET_S, "ok": not over}))
    else:
        for name, ext, seconds in rows:
            print(f"{name:<58} .{ext:<4} {seconds:6.2f} s")
        slowest = max(rows, key=lambda row: row[2])
        print(f"slowest: {slowest[0]} .{slowest[1]} {slowest[2]:.2f} s "
              f"({'OK' if not over else 'OVER'} the {MODEL_BUDGET_S:.0f} s budget)")
    if over:
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of our part (best is kept)")
    parser.add_argument("--synthetic-only", action="store_true",
                        help="skip the char-LSTM (graphviz needs ~5 minutes to lay it out)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--end-to-end", action="store_true",
                        help="time `kvcli viz` to .svg and .html on the char-LSTM (whole command)")
    parser.add_argument("--models", action="store_true",
                        help="render every real model in tests/data to .svg and .pdf against the 10 s budget")
    args = parser.parse_args()
    if dot_program() is None:
        sys.exit("graphviz 'dot' is not installed; the benchmark needs it")
    if args.models:
        models(args.json)
        return
    if args.end_to_end:
        end_to_end(args.repeat, args.json)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        if args.synthetic_only:
            pass
        elif CHAR_LSTM.exists():
            rows.append(measure("char_lstm_6084", CHAR_LSTM, {f"data/{t}": (32,) for t in range(129)},
                                args.repeat, out))
        else:
            print(f"(skipping the char-LSTM: {CHAR_LSTM} not found)")
        synth = out / "synthetic-symbol.json"
        synthetic().save(synth)
        rows.append(measure("synthetic_5000", synth, {}, args.repeat, out))
    worst = max(r[4] for r in rows)
    if args.json:
        print(json.dumps({"cases": [{"case": name, "nodes": n, "ours_s": ours, "dot_s": layout, "our_share": share}
                                    for name, n, ours, layout, share in rows],
                          "worst_share": worst, "target": 0.10, "ok": worst < 0.10}))
        return
    print(f"{'case':<16} {'nodes':>6} {'ours (s)':>9} {'dot (s)':>9} {'ours %':>7}")
    for name, n, ours, layout, share in rows:
        print(f"{name:<16} {n:>6} {ours:>9.3f} {layout:>9.2f} {share * 100:>6.1f}%")
    print(f"our share: {worst * 100:.1f}% at most ({'OK' if worst < 0.10 else 'OVER'} the 10% budget)")


if __name__ == "__main__":
    main()
