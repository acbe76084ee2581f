"""Run MXNet 1.9.1's own distributed KVStore test (``tests/nightly/dist_sync_kvstore.py``)
through ``kvcli.mx`` under ``kvcli launch``, and report each of its test types.

MXNet runs that file as W workers of a ``dist_sync`` job (``tools/launch.py -n W --launcher
local python dist_sync_kvstore.py --type T``). Here the file and the helper it imports
(``tests/nightly/test_kvstore.py``) are read from an MXNet git checkout (``git show``, never
copied into this repository) into a temporary folder, their imports rewritten exactly as
``tools/mxnet_unittests.py`` does (``import mxnet as mx`` -> ``import kvcli.mx as mx``), and
each type runs as ``kvcli launch -n W --servers S -- python dist_sync_kvstore.py --type T``.
A type passes when every worker exits 0 (the file asserts its own results).

Types that need more than kvcli claims, or that MXNet 1.9.1 itself fails, are listed in
:data:`KNOWN` with the reason; they still run and are reported under it.

    .venv/bin/python tools/mxnet_dist_nightly.py --mxnet-repo $MXNET_REPO [--json]

``$MXNET_REPO`` is a git clone of https://github.com/apache/mxnet (bare is fine; tag 1.9.1 is read).

This is a measuring tool, not part of the test suite.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from mxnet_unittests import mxnet_parser, rewrite_imports

NIGHTLY_DIR = "tests/nightly"
SCRIPT = "dist_sync_kvstore.py"
HELPER = "test_kvstore.py"  # the nightly one: compute_expected_2bit_quantization
#: The file's CPU test types, with the arguments they need here (no GPU).
TYPES: dict[str, list[str]] = {
    "default_cpu": [],
    "compressed_cpu": [],
    "init_gpu": ["--no-gpu"],  # MXNet's "init" checks; the device half needs a GPU
    "invalid_cpu": [],
    "gluon_type_cpu": [],
    "gluon_step_cpu": [],
    "gluon_sparse_step_cpu": [],
}
#: type -> why it does not pass, measured with MXNet 1.9.1 (ps-lite, 2 workers) and kvcli.
KNOWN: dict[str, str] = {
    "default_cpu": "the file reshapes with num_rows/2, a float on Python 3: MXNet 1.9.1's own workers fail "
                   "there too (TypeError). With // instead, MXNet's servers log a TypeError from its Test "
                   "optimizer on every row-sparse push, and kvcli stops at a row_sparse_pull of a float16 "
                   "key into a float32 output (a wrong-dtype pull is an error in kvcli: README, Differences)",
    "invalid_cpu": "uses mx.gluon (Trainer, ParameterDict), which kvcli does not implement",
    "gluon_type_cpu": "uses mx.gluon.Trainer, which kvcli does not implement",
    "gluon_step_cpu": "uses mx.gluon.Trainer and mx.autograd, which kvcli does not implement",
    "gluon_sparse_step_cpu": "uses mx.gluon.Trainer and mx.autograd, which kvcli does not implement",
}


@dataclass
class TypeReport:
    """The outcome of one test type: passed, or failed with the first error line."""

    type: str
    passed: bool
    seconds: float
    reason: str = ""
    known: str = ""


def _show(repo: Path, tag: str, name: str) -> str:
    shown = subprocess.run(["git", "-C", str(repo), "show", f"{tag}:{NIGHTLY_DIR}/{name}"], capture_output=True, text=True)
    if shown.returncode != 0:
        raise SystemExit(f"mxnet_dist_nightly: git show {tag}:{NIGHTLY_DIR}/{name} failed: {shown.stderr.strip()}")
    return shown.stdout


_PREFIX = re.compile(r"^(\x1b\[[0-9;]*m)?\(rank \d+ pid=\d+\)(\x1b\[[0-9;]*m)?\s?")
_EXCEPTION = re.compile(r"^[\w.]*(Error|Exception|Timeout\w*)\b:")


def _first_error(output: str) -> str:
    """The first exception line a worker printed (``TypeError: ...``), else the last line."""
    lines = [_PREFIX.sub("", line).strip() for line in output.splitlines()]
    found = next((line for line in lines if _EXCEPTION.match(line)), None)
    if found is None:
        found = next((line for line in reversed(lines) if line), "no output")
    return found[:200]


def run_type(workdir: Path, kind: str, python: str, workers: int, servers: int, nrepeat: int, timeout: float) -> TypeReport:
    """Run one type of the rewritten file under ``kvcli launch``."""
    kvcli = str(Path(python).with_name("kvcli"))
    command = [kvcli, "launch", "-n", str(workers), "--servers", str(servers), "--", python, SCRIPT,
               "--type", kind, "--nrepeat", str(nrepeat), *TYPES[kind]]
    start = time.monotonic()
    try:
        done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=timeout)
        passed, output = done.returncode == 0, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        passed, output = False, f"timed out after {timeout:g}s"
    report = TypeReport(kind, passed, round(time.monotonic() - start, 1), known=KNOWN.get(kind, ""))
    if not passed:
        report.reason = _first_error(output)
    return report


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns 0 when every type passed or failed only for a :data:`KNOWN` reason."""
    parser = mxnet_parser(__doc__.splitlines()[0], "kvcli")
    parser.add_argument("-n", "--workers", type=int, default=2, help="workers W (default 2)")
    parser.add_argument("--servers", type=int, default=1, help="key servers S (default 1)")
    parser.add_argument("--nrepeat", type=int, default=2, help="the file's --nrepeat (default 2; MXNet's CI 7)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per type (default 600)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("types", nargs="*", default=list(TYPES), help=f"test types (default: {' '.join(TYPES)})")
    args = parser.parse_args(argv)
    unknown = [t for t in args.types if t not in TYPES]
    if unknown:
        parser.error(f"unknown test type(s) {unknown}: use {', '.join(TYPES)}")
    with tempfile.TemporaryDirectory(prefix="kvcli-mxnet-nightly-") as tmp:
        workdir = Path(tmp)
        for name in (SCRIPT, HELPER):
            (workdir / name).write_text(rewrite_imports(_show(args.mxnet_repo, args.tag, name)).source)
        reports = [run_type(workdir, t, args.python, args.workers, args.servers, args.nrepeat, args.timeout)
                   for t in args.types]
    if args.json:
        print(json.dumps({"mxnet_tag": args.tag, "workers": args.workers, "servers": args.servers,
                          "nrepeat": args.nrepeat, "types": [asdict(r) for r in reports]}, indent=2))
    else:
        print(f"{NIGHTLY_DIR}/{SCRIPT} @ {args.tag} through kvcli.mx, {args.workers} workers, {args.servers} server(s)")
        for r in reports:
            print(f"{r.type:<24} {'passed' if r.passed else 'failed':<7} {r.seconds:>6.1f} s")
        for r in reports:
            if not r.passed:
                print(f"{r.type}: {'known: ' + r.known if r.known else 'FAILED'} ({r.reason})")
            elif r.known:
                print(f"{r.type}: passed, but listed in KNOWN -- update it")
    bad = [r for r in reports if not r.passed and not r.known]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
