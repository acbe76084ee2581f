"""Run the held-out MXNet 1.9.1 programs of ``tools/mxnet_heldout_programs/`` twice, under
MXNet and under ``kvcli.mx`` (only ``import mxnet as mx`` changed), and diff their output.

The programs are small scripts of the kind MXNet users write around the KVStore, the
optimizers, ``mx.nd`` and ``mx.sym`` (pushes of lists from several devices, optimizers and
learning-rate schedules on a store, optimizer state round trips, row-sparse pulls, gradient
compression, nd arithmetic in a training loop, the errors a program catches; p10-p17: nd
arithmetic across dtypes, indexing and shape functions, random seeding rules, optimizer
multipliers, long schedules, key lists and custom updaters, printing and nd.save / load,
symbol JSON and print_summary). They print their values
with full precision (``.asnumpy().tolist()``, ``repr``), so equal output means equal numbers.
They were written for this check, after the repository's tests and tools, so that they are
not the cases kvcli was built against.

    .venv/bin/python tools/mxnet_heldout.py --mxnet-python $MXNET_PYTHON        # every program
    .venv/bin/python tools/mxnet_heldout.py --mxnet-python $MXNET_PYTHON p05 p09  # some
    .venv/bin/python tools/mxnet_heldout.py --mxnet-python $MXNET_PYTHON -v       # show every line

Exit status 0 when every program prints the same lines on both sides, apart from the lines a
program marks as a deliberate difference (``DELIBERATE`` in the program, below); 1 otherwise.
This is a measuring tool, not part of the test suite (it needs MXNet).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).resolve().parent / "mxnet_heldout_programs"
IMPORT_LINE = re.compile(r"^import mxnet as mx$", re.MULTILINE)
#: A program line ``# DELIBERATE: <prefix> -- <why>`` names output lines (by their first
#: words) where kvcli differs from MXNet on purpose (docs/kvstore.md, docs/mxnet-layer.md).
DELIBERATE = re.compile(r"^# DELIBERATE: (.+?) -- (.+)$", re.MULTILINE)
#: A line ``<text> caught=['MXNetError', 'RuntimeError', ...]`` lists the classes an error is
#: an instance of; kvcli's line matches MXNet's when its text is the same and its classes
#: include MXNet's (an ``except`` that catches MXNet's error catches kvcli's).
CAUGHT = re.compile(r"^(.*)caught=\[(.*)\]$")


def same_line(mx_line: str, kv_line: str) -> bool:
    """Equal lines, or error lines whose kvcli classes include MXNet's."""
    if mx_line == kv_line:
        return True
    m, k = CAUGHT.match(mx_line), CAUGHT.match(kv_line)
    return bool(m and k and m.group(1) == k.group(1)
                and set(m.group(2).split(", ")) <= set(k.group(2).split(", ")))


def run(python: str, source: str, name: str, workdir: Path, extra_path: str | None) -> tuple[list[str], str, float]:
    """Run ``source`` with ``python``; its stdout lines, its stderr's last line, the seconds."""
    path = workdir / name
    path.write_text(source)
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    start = time.perf_counter()
    done = subprocess.run([python, str(path)], capture_output=True, text=True, cwd=workdir, env=env, timeout=900)
    seconds = time.perf_counter() - start
    lines = done.stdout.splitlines()
    if done.returncode != 0:
        lines.append(f"<exit {done.returncode}>")
    err = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
    return lines, (err[-1] if err and done.returncode != 0 else ""), seconds


def _as_mxnet_error(kv_line: str, mx_errors: dict[str, str]) -> str:
    """MXNet's error line where kvcli's line is the same error (its classes include MXNet's)."""
    match = CAUGHT.match(kv_line)
    mx_line = mx_errors.get(match.group(1)) if match else None
    return mx_line if mx_line is not None and same_line(mx_line, kv_line) else kv_line


def compare(program: Path, mxnet_python: str, kvcli_python: str, workdir: Path, verbose: bool) -> bool:
    """Run one program both ways; print its verdict and differing lines; True when equal."""
    source = program.read_text()
    if not IMPORT_LINE.search(source):
        raise SystemExit(f"mxnet_heldout: {program.name} has no 'import mxnet as mx' line")
    kv_source = IMPORT_LINE.sub("import kvcli.mx as mx", source)
    deliberate = DELIBERATE.findall(source)
    mx_lines, mx_err, mx_s = run(mxnet_python, source, "mxnet_" + program.name, workdir, None)
    kv_lines, kv_err, kv_s = run(kvcli_python, kv_source, "kvcli_" + program.name, workdir, str(REPO_ROOT))

    def known(line: str) -> bool:
        return any(line.startswith(prefix) for prefix, _ in deliberate)

    mx_errors = {m.group(1): line for line in mx_lines if (m := CAUGHT.match(line))}
    kv_lines = [_as_mxnet_error(line, mx_errors) for line in kv_lines]
    diff = [d for d in difflib.unified_diff(mx_lines, kv_lines, "mxnet", "kvcli.mx", n=0, lineterm="")
            if not d.startswith(("---", "+++", "@@"))]
    unexplained = [d for d in diff if not known(d[1:])]
    verdict = "identical" if not diff else ("deliberate differences only" if not unexplained else "DIFFERENT")
    print(f"{program.stem:<28} {len(mx_lines):>4} lines  {verdict:<28} (mxnet {mx_s:.1f} s, kvcli {kv_s:.1f} s)")
    for tag, err in (("mxnet", mx_err), ("kvcli", kv_err)):
        if err:
            print(f"    {tag} stderr: {err}")
    shown = diff if verbose else unexplained
    for d in shown:
        print("    " + d)
    if diff and verbose:
        for prefix, why in deliberate:
            print(f"    deliberate '{prefix}': {why}")
    return not unexplained


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mxnet-python", default=os.environ.get("MXNET_PYTHON"),
                        help="a Python with mxnet 1.9.1 (default $MXNET_PYTHON)")
    parser.add_argument("--kvcli-python", default=sys.executable, help="a Python with kvcli (default: this one)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show deliberate differences too")
    parser.add_argument("only", nargs="*", help="program name prefixes (p01, p05_...)")
    args = parser.parse_args(argv)
    if not args.mxnet_python:
        parser.error("give --mxnet-python (or set MXNET_PYTHON) to a Python with mxnet 1.9.1")
    programs = sorted(p for p in PROGRAMS.glob("p*.py") if not args.only or any(p.stem.startswith(o) for o in args.only))
    if not programs:
        parser.error(f"no program in {PROGRAMS} matches {args.only}")
    ok = True
    with tempfile.TemporaryDirectory(prefix="mxnet_heldout_") as tmp:
        for program in programs:
            ok &= compare(program, args.mxnet_python, args.kvcli_python, Path(tmp), args.verbose)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
