"""Startup of one-shot commands: ``kvcli pull KEY`` wall time vs ``python -c "import numpy"``.

Target: the ratio of medians is at most 1.2 (issue 22). Runs the real ``kvcli`` console script
(as a user would), interleaving the commands so machine load affects them alike. It also times
the same pull parsed by typer (``KVCLI_NO_FAST_PATH=1``: typer's click objects, only the
invoked command built): the figure that says whether the startup fast path
(:mod:`kvcli.cli.fast`) is still needed (issue 36: it goes when typer's pull is at most 1.25x
numpy's import). The session also holds a large other key (``--other-mib``, default 256) to
show that a pull reads only the key it prints. Python files are compiled first
(``python -m compileall`` of kvcli and the installed packages, into a temporary
PYTHONPYCACHEPREFIX when the environment sets PYTHONDONTWRITEBYTECODE, which is unset for the
runs), as an installed kvcli has them.

    python bench/startup.py [--runs 30] [--other-mib 256] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import kvcli


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()}")
    return elapsed


def compile_all(python: str, env: dict[str, str]) -> None:
    """Compile kvcli and the installed packages, as pip does on install."""
    folders = [str(Path(kvcli.__file__).parent), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    subprocess.run([python, "-m", "compileall", "-q", *sorted(set(folders))], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--other-mib", type=int, default=256, help="size of another key in the session")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    python = sys.executable
    kvcli_bin = str(Path(python).parent / "kvcli")
    with tempfile.TemporaryDirectory(prefix="kvcli-bench-") as home:
        env = dict(os.environ, KVCLI_HOME=home)
        env.pop("KVCLI_SESSION", None)
        if env.pop("PYTHONDONTWRITEBYTECODE", None):
            env["PYTHONPYCACHEPREFIX"] = os.path.join(home, "pycache")
        compile_all(python, env)
        setup = [
            [kvcli_bin, "init", "k", "arange(9).reshape(3,3)"],
            [kvcli_bin, "init", "other", f"zeros({args.other_mib * (1 << 20) // 4})"],
        ]
        for cmd in setup:
            subprocess.run(cmd, env=env, check=True, stderr=subprocess.DEVNULL)
        numpy_cmd = [python, "-c", "import numpy"]
        pull_cmd = [kvcli_bin, "pull", "k"]
        one_thread = dict(env, OPENBLAS_NUM_THREADS="1")
        for _ in range(3):  # warm caches (page cache)
            timed(numpy_cmd, env)
            timed(pull_cmd, env)
        typer_path = dict(env, KVCLI_NO_FAST_PATH="1")
        numpy_times, pull_times, numpy1_times, typer_times = [], [], [], []
        for _ in range(args.runs):
            numpy_times.append(timed(numpy_cmd, env))
            pull_times.append(timed(pull_cmd, env))
            numpy1_times.append(timed(numpy_cmd, one_thread))
            typer_times.append(timed(pull_cmd, typer_path))
    result = {
        "runs": args.runs,
        "other_key_mib": args.other_mib,
        "load_average_1min": os.getloadavg()[0],
        "import_numpy_median_s": statistics.median(numpy_times),
        "kvcli_pull_median_s": statistics.median(pull_times),
        "import_numpy_min_s": min(numpy_times),
        "kvcli_pull_min_s": min(pull_times),
        "kvcli_pull_typer_median_s": statistics.median(typer_times),
        "kvcli_pull_typer_min_s": min(typer_times),
    }
    # kvcli's main() starts numpy with one OpenBLAS thread (OPENBLAS_NUM_THREADS=1 unless set):
    # also compare with a numpy import that does the same, to show what kvcli itself adds
    result["import_numpy_one_blas_thread_median_s"] = statistics.median(numpy1_times)
    result["ratio_median"] = result["kvcli_pull_median_s"] / result["import_numpy_median_s"]
    result["ratio_vs_one_blas_thread"] = result["kvcli_pull_median_s"] / result["import_numpy_one_blas_thread_median_s"]
    result["ratio_min"] = result["kvcli_pull_min_s"] / result["import_numpy_min_s"]
    result["ratio_typer_median"] = result["kvcli_pull_typer_median_s"] / result["import_numpy_median_s"]
    result["ratio_typer_min"] = result["kvcli_pull_typer_min_s"] / result["import_numpy_min_s"]
    result["target"] = 1.2
    result["ok"] = result["ratio_median"] <= result["target"]
    if args.json:
        print(json.dumps(result))
        return
    ms = {name: value * 1000 for name, value in result.items() if name.endswith("_s")}
    print(f"python -c 'import numpy'   median {ms['import_numpy_median_s']:6.1f} ms   min {ms['import_numpy_min_s']:6.1f} ms")
    print(f"kvcli pull k               median {ms['kvcli_pull_median_s']:6.1f} ms   min {ms['kvcli_pull_min_s']:6.1f} ms")
    print(f"kvcli pull k (typer)       median {ms['kvcli_pull_typer_median_s']:6.1f} ms   "
          f"min {ms['kvcli_pull_typer_min_s']:6.1f} ms   (KVCLI_NO_FAST_PATH=1)")
    print(f"OPENBLAS_NUM_THREADS=1 python -c 'import numpy'   median {ms['import_numpy_one_blas_thread_median_s']:6.1f} ms")
    print(f"ratio vs the one-thread numpy import: {result['ratio_vs_one_blas_thread']:.2f} (what kvcli adds to numpy)")
    verdict = "ok" if result["ok"] else "MISSED"
    print(f"ratio (median) {result['ratio_median']:.2f}   (min) {result['ratio_min']:.2f}   target <= 1.2: {verdict}")
    print(f"ratio parsed by typer (median) {result['ratio_typer_median']:.2f}   (min) {result['ratio_typer_min']:.2f}   "
          "(the fast path may go at <= 1.25)")
    print(f"(the session also holds a {args.other_mib} MiB key that the pull does not read; "
          f"load average {result['load_average_1min']:.2f} at the end)")


if __name__ == "__main__":
    main()
