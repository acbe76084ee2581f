"""How a session's costs grow with its keys and value sizes (issue 22): SQLite manifest,
values of at most 4 KiB in their rows, bigger ones in files.

Measures, each with the real CLI (``kvcli`` in a fresh process, as a user runs it):

* a ``kvcli shell --file`` script of N ``init`` lines (16-byte values): total time;
* the session's size on disk after it (allocated blocks of every file, ``du``-style);
* a one-shot ``kvcli push`` of one 16-byte key on a 100-key session and on the N-key
  session (minimum of --repeat runs each, run side by side);
* a one-shot ``kvcli pull`` against ``python -c "import numpy"`` (minimum of --repeat each);
* a one-shot ``kvcli push`` of one key of 16 B, 4 KiB (both held in their row), 64 KiB
  (a new file per push) and 1 MiB (a file rewriting its spare) on the 100-key session.

Targets (issue 22): N=10,000 script <= 60 s on the 2-core CI machine; push on the N-key
session <= 1.2x the 100-key one; 10,000 keys of 16 bytes <= 8 MB; pull <= 1.2x numpy.

    python bench/session_scale.py [--keys 10000] [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KVCLI = [sys.executable, "-m", "kvcli"]


def env(home: Path) -> dict[str, str]:
    # bytecode as an installed kvcli has it (pip compiles on install; see main): timing a
    # command must not time compiling its modules again
    variables = dict(os.environ, KVCLI_HOME=str(home), NO_COLOR="1")
    variables.pop("PYTHONDONTWRITEBYTECODE", None)
    return variables


def run(command: list[str], home: Path, stdin: str | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, env=env(home), input=stdin, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {proc.stderr.strip()[-400:]}")
    return elapsed


def init_script(home: Path, keys: int) -> float:
    script = home.parent / f"init-{keys}.kv"
    script.write_text("".join(f"init k{i} 'zeros(4)'\n" for i in range(keys)))
    return run([*KVCLI, "shell", "--file", str(script)], home)


def disk_bytes(folder: Path) -> int:
    """Allocated bytes of every file under ``folder`` (what ``du`` counts)."""
    return sum(p.lstat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import compileall

    import kvcli

    compileall.compile_dir(Path(kvcli.__file__).parent, quiet=1)  # what `pip install` does
    root = Path(tempfile.mkdtemp(prefix="kvcli-scale-"))
    try:
        small, big = root / "small", root / "big"
        small_init = init_script(small, 100)
        big_init = init_script(big, args.keys)
        # let the big session settle (the shell's last connection checkpointed its log)
        size = disk_bytes(big / "sessions" / "default")
        push = [*KVCLI, "push", "k7", "ones(4)"]
        pull = [*KVCLI, "pull", "k7", "--json"]
        numpy = [sys.executable, "-c", "import numpy"]
        times: dict[str, list[float]] = {"push_small": [], "push_big": [], "pull_big": [], "numpy": []}
        for _ in range(args.repeat):  # side by side, so load on the machine hits both alike
            times["push_small"].append(run(push, small))
            times["push_big"].append(run(push, big))
            times["pull_big"].append(run(pull, big))
            times["numpy"].append(run(numpy, big))
        sizes = {"16B": 4, "4KiB": 1024, "64KiB": 16384, "1MiB": 262144}  # float32 elements
        for label, n in sizes.items():
            run([*KVCLI, "init", f"v{label}", f"zeros({n})"], small)
            times[f"push_{label}"] = []
        for _ in range(args.repeat):
            for label, n in sizes.items():
                times[f"push_{label}"].append(run([*KVCLI, "push", f"v{label}", f"ones({n})"], small))
        best = {name: min(values) for name, values in times.items()}
        result = {
            "keys": args.keys,
            "init_script_100_s": round(small_init, 2),
            f"init_script_{args.keys}_s": round(big_init, 2),
            f"disk_{args.keys}_keys_MB": round(size / 1e6, 2),
            "push_100_keys_ms": round(best["push_small"] * 1000),
            f"push_{args.keys}_keys_ms": round(best["push_big"] * 1000),
            "push_ratio": round(best["push_big"] / best["push_small"], 2),
            "pull_ms": round(best["pull_big"] * 1000),
            "import_numpy_ms": round(best["numpy"] * 1000),
            "pull_ratio": round(best["pull_big"] / best["numpy"], 2),
            **{f"push_{label}_ms": round(best[f"push_{label}"] * 1000) for label in sizes},
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(result))
    else:
        for name, value in result.items():
            print(f"{name:>24}: {value}")


if __name__ == "__main__":
    main()
