"""Run MXNet 1.9.1's sparse NDArray tutorials on real MXNet and on ``kvcli.mx`` and compare
their outputs line by line.

The tutorials (``docs/python_docs/python/tutorials/packages/ndarray/sparse/row_sparse.md`` and
``csr.md``) are read from an MXNet git checkout (``git show TAG:PATH``, never copied into this
repository); their ``python`` blocks run in order in one namespace, as a notebook runs its
cells: what a block prints, what it writes to ``sys.stderr``, the ``repr`` of its last line
when that is an expression (the cell's output) and the exception that stops it (then the next
block runs) make the block's output. The same blocks run twice, each in a fresh process and
an empty temporary folder: under MXNet's Python, and under kvcli's with the imports rewritten
as ``tools/mxnet_unittests.py`` does (``import mxnet as mx`` -> ``import kvcli.mx as mx``).

Outputs are compared line by line, memory addresses (``0x7f...``) aside. Blocks whose output
cannot match for a reason outside kvcli's sparse arrays are listed in :data:`KNOWN` with the
reason; they still run and are reported under it (or flagged if they match).

    .venv/bin/python tools/mxnet_sparse_tutorials.py --mxnet-repo $MXNET_REPO \\
        --mxnet-python $MXNET_PYTHON [--mxnet-path DIR] [--kvcli-path DIR] [--json] [-v]

``$MXNET_PYTHON`` has mxnet 1.9.1; ``--mxnet-path`` and ``--kvcli-path`` add a folder to each
side's ``sys.path`` (e.g. scipy installed aside with ``pip install --no-deps --target DIR scipy``,
one built for each side's numpy: csr.md's scipy block needs it; without it both print
``scipy package is required``).

This is a measuring tool, not part of the test suite.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mxnet_unittests import mxnet_parser, rewrite_imports

TUTORIAL_DIR = "docs/python_docs/python/tutorials/packages/ndarray/sparse"
TUTORIALS = ("row_sparse.md", "csr.md")
#: ``tutorial#block`` (1-based) -> why its output differs for a reason outside kvcli's sparse arrays.
KNOWN: dict[str, str] = {
    "row_sparse.md#21": "this MXNet is built without GPU support, so mx.gpu() arrays fail there; kvcli's contexts "
                        "are labels, so the array is made and nothing is printed",
    "csr.md#4": "scipy's own deprecation warning for scipy.sparse.csr differs between the scipy for MXNet's numpy 1 "
                "and the one for kvcli's numpy 2 (the array printed is the same)",
    "csr.md#5": "random values: kvcli's random numbers come from numpy's generators, not MXNet's (README, Differences)",
    "csr.md#17": "mx.io (NDArrayIter) is outside kvcli's scope",
    "csr.md#18": "mx.io (LibSVMIter) is outside kvcli's scope",
    "csr.md#19": "this MXNet is built without GPU support, so mx.gpu() arrays fail there; kvcli's contexts "
                 "are labels, so the array is made and nothing is printed",
}
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def python_blocks(markdown: str) -> list[str]:
    """The fenced ``python`` blocks of a markdown text, in order."""
    return [m.group(1) for m in re.finditer(r"^```python[^\n]*\n(.*?)^```", markdown, re.S | re.M)]


# ---------------------------------------------------------------------- the runner (in each Python)
def run_block(source: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run one block as a notebook cell; its printed output, stderr, shown value and error."""
    out, err = io.StringIO(), io.StringIO()
    error = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            tree = ast.parse(source)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, "<cell>", "exec"), namespace)  # noqa: S102 - the tutorial's own code
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)  # noqa: S307
                if value is not None:
                    print(repr(value))
        except Exception as exc:  # noqa: BLE001 - a failing cell is output, as in a notebook
            message = next((ln for ln in str(exc).splitlines() if ln.strip()), "")
            error = f"{type(exc).__name__}: {message}"[:300]
            print(error, file=sys.stderr)
    return {"output": out.getvalue() + err.getvalue(), "error": error}


def runner() -> None:
    """``--run``: read the blocks (JSON) on stdin, run them, print the results as JSON."""
    import numpy as np

    if int(np.__version__.split(".")[0]) >= 2:  # print numpy scalars as numpy 1 (MXNet's side) does
        np.set_printoptions(legacy="1.25")
    namespace: dict[str, Any] = {"__name__": "__main__"}
    blocks = json.loads(sys.stdin.read())
    print(json.dumps([run_block(source, namespace) for source in blocks]))


# ---------------------------------------------------------------------- the comparison
@dataclass
class BlockReport:
    """One block: its output lines under MXNet and kvcli, and how many are equal."""

    block: str
    mxnet: list[str]
    kvcli: list[str]
    equal_lines: int
    known: str = ""

    @property
    def same(self) -> bool:
        return self.mxnet == self.kvcli


@dataclass
class TutorialReport:
    """The outcome of one tutorial."""

    tutorial: str
    blocks: list[BlockReport] = field(default_factory=list)


def _lines(output: str) -> list[str]:
    return [_ADDRESS.sub("0x...", line.rstrip()) for line in output.splitlines()]


def run_under(python: str, blocks: list[str], extra_path: str | None) -> list[dict[str, Any]]:
    """Run ``blocks`` in a fresh ``python`` process in an empty temporary folder."""
    env = dict(os.environ, MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0", PYTHONPATH=str(Path(__file__).resolve().parent))
    if extra_path:
        env["PYTHONPATH"] += os.pathsep + extra_path
    with tempfile.TemporaryDirectory(prefix="kvcli-mxnet-tutorial-") as cwd:
        done = subprocess.run([python, str(Path(__file__).resolve()), "--run"], input=json.dumps(blocks), cwd=cwd,
                              capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"mxnet_sparse_tutorials: {python} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def compare(name: str, blocks: list[str], mxnet: list[dict[str, Any]], kvcli: list[dict[str, Any]]) -> TutorialReport:
    report = TutorialReport(name)
    for number, (theirs, ours) in enumerate(zip(mxnet, kvcli), start=1):
        want, got = _lines(theirs["output"]), _lines(ours["output"])
        equal = sum(b.size for b in difflib.SequenceMatcher(a=want, b=got, autojunk=False).get_matching_blocks())
        key = f"{name}#{number}"
        report.blocks.append(BlockReport(key, want, got, equal, KNOWN.get(key, "")))
    return report


def print_reports(reports: list[TutorialReport], verbose: bool) -> None:
    for r in reports:
        lines = sum(max(len(b.mxnet), len(b.kvcli)) for b in r.blocks)
        equal = sum(b.equal_lines for b in r.blocks)
        same = sum(b.same for b in r.blocks)
        print(f"{r.tutorial}: {len(r.blocks)} blocks run, {same} with the same output; "
              f"{equal} of {lines} output lines equal")
    for r in reports:
        for b in r.blocks:
            if b.same:
                if b.known:
                    print(f"{b.block}: same output, but listed in KNOWN -- update it")
                continue
            print(f"{b.block}: {'known: ' + b.known if b.known else 'DIFFERS'}")
            if verbose or not b.known:
                for line in difflib.unified_diff(b.mxnet, b.kvcli, "mxnet", "kvcli", lineterm="", n=1):
                    print(f"    {line}")


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns 0 when every block's output is MXNet's or differs for a :data:`KNOWN` reason."""
    parser = mxnet_parser(__doc__.splitlines()[0], "kvcli")
    parser.add_argument("--mxnet-python", required=True, help="a Python with mxnet 1.9.1")
    parser.add_argument("--mxnet-path", help="a folder added to the MXNet Python's sys.path (e.g. scipy installed aside)")
    parser.add_argument("--kvcli-path", help="a folder added to kvcli's Python's sys.path (scipy for its numpy)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the diff of known differences too")
    parser.add_argument("tutorials", nargs="*", default=list(TUTORIALS), help=f"default: {' '.join(TUTORIALS)}")
    args = parser.parse_args(argv)
    reports = []
    for name in args.tutorials:
        shown = subprocess.run(["git", "-C", str(args.mxnet_repo), "show", f"{args.tag}:{TUTORIAL_DIR}/{name}"],
                               capture_output=True, text=True)
        if shown.returncode != 0:
            raise SystemExit(f"mxnet_sparse_tutorials: git show {args.tag}:{TUTORIAL_DIR}/{name} failed: "
                             f"{shown.stderr.strip()}")
        blocks = python_blocks(shown.stdout)
        ours = [rewrite_imports(block).source for block in blocks]
        reports.append(compare(name, blocks, run_under(args.mxnet_python, blocks, args.mxnet_path),
                               run_under(args.python, ours, args.kvcli_path)))
    if args.json:
        print(json.dumps({"mxnet_tag": args.tag, "tutorials": [
            {"tutorial": r.tutorial, "blocks": [{**asdict(b), "same": b.same} for b in r.blocks]} for r in reports]},
            indent=2))
    else:
        print_reports(reports, args.verbose)
    bad = [b for r in reports for b in r.blocks if not b.same and not b.known]
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--run"]:
        runner()
    else:
        sys.exit(main())
