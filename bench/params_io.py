"""What reading one ``.params`` file costs ``kvcli.symbol``: modules loaded and time.

Each run is a fresh interpreter that has imported numpy and ``kvcli.symbol.params`` (what
``kvcli summary`` has loaded before it reads the file); it then calls ``load_params`` on
FILE and reports the modules that call loaded (kvcli's, and all) and the seconds it took.
Usage: python bench/params_io.py FILE.params [RUNS]   (prints one line; the median time).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

PROBE = """
import json, sys, time
import numpy
from kvcli.symbol.params import load_params
before = set(sys.modules)
start = time.perf_counter()
load_params(sys.argv[1])
took = time.perf_counter() - start
new = set(sys.modules) - before
print(json.dumps({"kvcli": len([m for m in new if m.startswith("kvcli")]), "all": len(new), "seconds": took}))
"""


def main() -> None:
    path, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 7
    found = [json.loads(subprocess.run([sys.executable, "-c", PROBE, path], check=True, capture_output=True,
                                       text=True).stdout) for _ in range(runs)]
    seconds = statistics.median(r["seconds"] for r in found)
    print(f"{path}: {found[0]['kvcli']} kvcli modules ({found[0]['all']} in all) loaded to read it; "
          f"median {seconds * 1e3:.1f} ms over {runs} runs")


if __name__ == "__main__":
    main()
