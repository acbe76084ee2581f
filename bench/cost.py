"""Benchmark: what computing the model's cost (MACs and output bytes per node) adds to `kvcli summary`.

    .venv/bin/python bench/cost.py [--repeat N] [--json]

On the largest kept model, the 6,084-node char-LSTM (tests/data/sample_models), shapes given as
the README gives them: the time of :func:`kvcli.symbol.cost.compute_cost` as ``summarize`` calls
it (in process, median of ``--repeat`` runs after one warm-up) against the whole ``kvcli summary``
command (a fresh process, median of ``--repeat``). Budget (issue 34): the cost is at most 5 %.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kvcli.symbol.cost import compute_cost  # noqa: E402
from kvcli.symbol.graph import load_file  # noqa: E402
from kvcli.symbol.names import visible_outputs  # noqa: E402
from kvcli.symbol.roles import variable_roles  # noqa: E402
from kvcli.symbol.shapes import infer_shapes  # noqa: E402
from kvcli.symbol.shapespec import parse_shape_specs, resolve_shapes  # noqa: E402

CHAR_LSTM = Path(__file__).resolve().parents[1] / "tests" / "data" / "sample_models" / \
    "mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json"
SHAPES = ("data/*=32", "l*_init_*=32,512")
BUDGET = 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each (the median is kept)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a line")
    args = parser.parse_args()
    graph = load_file(CHAR_LSTM)
    result = infer_shapes(graph, resolve_shapes(graph, parse_shape_specs(list(SHAPES), source=str(CHAR_LSTM))))
    # what summarize() hands the cost: the roles and visible outputs it needs for its table anyway
    roles = variable_roles(graph, set(result.given))
    shown = [1 if node.op == "null" else visible_outputs(graph, i) for i, node in enumerate(graph.nodes)]
    compute_cost(result, roles=roles, visible=shown)  # warm-up
    cost_runs = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        compute_cost(result, roles=roles, visible=shown)
        cost_runs.append(time.perf_counter() - t0)
    command = [sys.executable, "-m", "kvcli", "summary", str(CHAR_LSTM)] + [x for s in SHAPES for x in ("--shape", s)]
    summary_runs = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        summary_runs.append(time.perf_counter() - t0)
    cost_s, summary_s = statistics.median(cost_runs), statistics.median(summary_runs)
    share = cost_s / summary_s
    if args.json:
        print(json.dumps({"nodes": len(graph.nodes), "cost_s": cost_s, "summary_s": summary_s, "share": share,
                          "budget": BUDGET, "ok": share <= BUDGET}))
    else:
        print(f"char-LSTM ({len(graph.nodes):,} nodes): cost {cost_s * 1000:.1f} ms, kvcli summary "
              f"{summary_s * 1000:.0f} ms: {share * 100:.1f} % ({'OK' if share <= BUDGET else 'OVER'} "
              f"the {BUDGET * 100:.0f} % budget)")
    if share > BUDGET:
        sys.exit(1)


if __name__ == "__main__":
    main()
