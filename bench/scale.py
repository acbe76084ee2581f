"""Benchmark: the big-input cases of the test suite, timed against their budgets.

The tests check what these cases produce; this measures how long they take, which a busy
machine would make a flaky assertion. Each case runs ``--repeat`` times and the best time is
compared with its budget (a budget far above the idle time: a miss means quadratic work or a
hang, not noise). Exit status 1 when a case is over budget.

    python bench/scale.py [--repeat 3] [--json]

Cases (the tests that check their results in brackets):

* fold a 24,001-node unrolled RNN graph (``tests/symbol/test_bigviz.py``), budget 6 s;
* summary table of one ``add_n`` over 200,000 inputs (``tests/symbol/test_summary_scale.py``), 30 s;
* summary table of a node named with 4,000,000 letters (same file), 10 s;
* ``kvcli summary`` of a 50 MB symbol file, and of the same file cut short
  (``tests/symbol/test_cli.py``), 30 s and 10 s, whole command;
* three refused values (``ones(10**12)`` and two others; ``tests/test_values.py``), 1 s in all;
* a 2 MB shell line refused before it is split (``tests/test_faults.py``), 2 s;
* the HTML viewer of a 6,001-node graph opening in headless Chromium
  (``tests/symbol/test_viewer.py``), 3 s; skipped, with the reason, without chromium/selenium.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402

from kvcli.errors import ValueLanguageError  # noqa: E402
from kvcli.symbol.fold import fold_repeats, prepare  # noqa: E402
from kvcli.symbol.graph import from_dict  # noqa: E402
from kvcli.symbol.plan import build_plan  # noqa: E402
from kvcli.symbol.render import dot_program, plan_to_digraph, render_bytes  # noqa: E402
from kvcli.symbol.shapes import infer_shapes  # noqa: E402
from kvcli.symbol.summary import print_table, summarize  # noqa: E402
from kvcli.values import parse_value  # noqa: E402
from tests.symbol.graphs import big_chain, fan_in, long_name, unrolled  # noqa: E402


def best_of(repeat: int, run: Callable[[], None], setup: Optional[Callable[[], None]] = None) -> float:
    best = float("inf")
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def table(graph_doc: dict, given: dict) -> Callable[[], None]:
    graph = from_dict(graph_doc)

    def run() -> None:
        print_table(summarize(infer_shapes(graph, given)), Console(file=io.StringIO(), width=400,
                                                                   color_system=None), title="t")
    return run


def kvcli_summary(path: Path, *args: str, ok: bool) -> Callable[[], None]:
    def run() -> None:
        proc = subprocess.run([sys.executable, "-m", "kvcli", "summary", str(path), *args], capture_output=True)
        if (proc.returncode == 0) != ok:
            raise SystemExit(f"kvcli summary {path.name} exited {proc.returncode}: {proc.stderr.decode()[:300]}")
    return run


def refusals() -> None:
    for text in ("ones(10**12)", "ones(10**6)**ones(10**6).reshape(10**6, 1)", "full((10**9,10**9), 1)"):
        try:
            parse_value(text)
        except ValueLanguageError:
            continue
        raise SystemExit(f"{text} was not refused")


def shell_line(home: Path) -> Callable[[], None]:
    from kvcli.cli.shell import Shell
    from kvcli.session import Session

    line = "push 3 '" + "1+" * 1_000_000 + "1"  # 2 MB, and an unclosed quote

    def run() -> None:
        with Session("s", home) as session, contextlib.redirect_stderr(io.StringIO()) as err:
            Shell(session).execute(line)
        if "characters long" not in err.getvalue():
            raise SystemExit(f"the 2 MB line was not refused: {err.getvalue()[:300]}")
    return run


def viewer_open(repeat: int, folder: Path) -> tuple[Optional[float], str]:
    """Best time from ``driver.get`` to the page's ready marker, or None and why not."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None, "selenium is not installed"
    if not (chromium and driver_path and dot_program()):
        return None, "chromium, chromedriver or graphviz's dot is missing"
    from kvcli.symbol.viewer import build_html

    graph = from_dict(unrolled(2000))
    result = infer_shapes(graph, {"data": (1, 8)})
    base = build_plan(graph, result, readable=True)
    plan, bounded = prepare(base)
    svg = render_bytes(plan_to_digraph(plan, title="big", readable=True, bounded=bounded, svg_ids=True)).decode()
    page = folder / "big.html"
    page.write_text(build_html(plan, summarize(result), svg, "big", base=base), encoding="utf-8")
    options = Options()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                f"--user-data-dir={folder / 'profile'}", "--window-size=1400,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        def run() -> None:
            driver.get(page.as_uri())
            deadline = time.monotonic() + 60
            while driver.execute_script("return document.body && document.body.getAttribute('data-ready')") != "1":
                if time.monotonic() > deadline:
                    raise SystemExit("the viewer page never became ready")
                time.sleep(0.01)
        return best_of(repeat, run, setup=lambda: driver.get("about:blank")), ""
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (the best is kept)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    rows: list[tuple[str, Optional[float], float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        unrolled_graph = from_dict(unrolled(3000, layers=2))

        def fold() -> None:
            fold_repeats(build_plan(unrolled_graph, readable=True))
        rows.append(("fold 24,001-node unrolled graph", best_of(args.repeat, fold), 6.0, ""))
        rows.append(("summary table, add_n of 200,000 inputs",
                     best_of(args.repeat, table(fan_in(200_000), {f"x{i}": (2,) for i in range(200_000)})), 30.0, ""))
        rows.append(("summary table, 4,000,000-letter name",
                     best_of(args.repeat, table(long_name(4_000_000), {"data": (2, 5)})), 10.0, ""))
        big = folder / "big-symbol.json"
        big_chain(big, 50_000_000)
        cut = folder / "cut-symbol.json"
        cut.write_bytes(big.read_bytes()[:-1000])
        rows.append(("kvcli summary, 50 MB file",
                     best_of(args.repeat, kvcli_summary(big, "--shape", "data=1,10", "--json", ok=True)), 30.0, ""))
        rows.append(("kvcli summary, 50 MB file cut short",
                     best_of(args.repeat, kvcli_summary(cut, ok=False)), 10.0, ""))
        rows.append(("three refused values", best_of(args.repeat, refusals), 1.0, ""))
        rows.append(("shell refuses a 2 MB line", best_of(args.repeat, shell_line(folder / "home")), 2.0, ""))
        seconds, why = viewer_open(args.repeat, folder)
        rows.append(("viewer opens 6,001 nodes (Chromium)", seconds, 3.0, why))
    over = [name for name, seconds, budget, _ in rows if seconds is not None and seconds > budget]
    if args.json:
        print(json.dumps({"cases": [{"case": name, "seconds": seconds, "budget_s": budget, "skipped": why or None}
                                    for name, seconds, budget, why in rows], "ok": not over}))
    else:
        for name, seconds, budget, why in rows:
            shown = f"{seconds:8.3f} s" if seconds is not None else f"skipped ({why})"
            print(f"{name:<42} {shown}  budget {budget:g} s")
        print("all within budget" if not over else f"OVER budget: {', '.join(over)}")
    if over:
        sys.exit(1)


if __name__ == "__main__":
    main()
