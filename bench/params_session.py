"""``kvcli load-params`` / ``save-params`` of a big checkpoint against ``cp`` + ``sync``, and a
one-shot push on that session against the same push on a 100-key session (issue 37, item 5).

Usage::

    python bench/params_session.py CHECKPOINT.params [--runs 11] [--key KEY]

CHECKPOINT is any MXNet ``.params`` file; the issue's is ResNet-50's (about 100 MB), which a
Python with mxnet 1.9.1 writes in a few seconds (untrained, no download)::

    from mxnet import gluon, init, nd
    net = gluon.model_zoo.vision.resnet50_v1(); net.initialize(init.Xavier()); net.hybridize()
    net(nd.zeros((1, 3, 224, 224))); net.export("resnet50", 0)   # resnet50-0000.params

Each figure times whole processes (start-up included), the command and its yardstick in
turn (A B A B ...), and prints the medians and the median of the pairwise ratios:

* load: ``rm -rf HOME && kvcli --home HOME load-params CHECKPOINT`` against
  ``rm -rf DIR && mkdir DIR && cp CHECKPOINT DIR/x && sync``;
* save: ``kvcli --home HOME save-params DIR/out.params`` (a new folder each run) against the same;
* push: ``kvcli push KEY zeros(SHAPE)`` on the loaded session against the same push on a
  session of 100 keys holding KEY with the same shape (the assign updater, then SGD with
  momentum on both);
* start-up: a one-shot ``kvcli pull`` of a small key against ``cp`` + ``sync`` (the floor a
  one-shot command cannot go below).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KVCLI = Path(sys.executable).parent / "kvcli"


def timed(command: str) -> float:
    start = time.perf_counter()
    subprocess.run(["sh", "-c", command], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def paired(name: str, a: str, b: str, runs: int) -> None:
    timed(a), timed(b)  # warm-up
    pairs = [(timed(a), timed(b)) for _ in range(runs)]
    ratio = statistics.median(x / y for x, y in pairs)
    print(f"{name}: {statistics.median(p[0] for p in pairs) * 1e3:.0f} ms vs "
          f"{statistics.median(p[1] for p in pairs) * 1e3:.0f} ms, median ratio {ratio:.2f}x over {runs} pairs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--key", default=None, help="the key pushed (default: the checkpoint's first array)")
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed kvcli has its bytecode
    from kvcli.arrays import mxparams

    with mxparams.open_file(args.checkpoint) as params:
        named = dict(params.items())
    key = args.key or next(iter(named))
    shape = named[key].shape
    work = Path(tempfile.mkdtemp(prefix="kvcli-params-bench-"))
    try:
        f, home, copy = args.checkpoint.resolve(), work / "home", work / "copy"
        cp_sync = f"rm -rf {copy} && mkdir {copy} && cp {f} {copy}/x && sync"
        paired("load-params", f"rm -rf {home} && exec {KVCLI} --home {home} load-params {f}", cp_sync, args.runs)
        out = work / "out"
        paired("save-params", f"rm -rf {out} && mkdir {out} && exec {KVCLI} --home {home} save-params {out}/out.params",
               cp_sync, args.runs)
        small = next(name for name, entry in named.items() if entry.nbytes <= 4096)
        paired("start-up (pull of a small key)", f"{KVCLI} --home {home} pull {small} -o {work}/small.npy --yes", cp_sync,
               args.runs)
        many = work / "many"
        value = f"zeros({','.join(map(str, shape))})"
        subprocess.run([str(KVCLI), "--home", str(many), "init", key, value], check=True, capture_output=True)
        script = work / "init.kv"
        script.write_text("".join(f"init k{i} 'ones(10)'\n" for i in range(99)))
        subprocess.run([str(KVCLI), "--home", str(many), "shell", "--file", str(script)], check=True, capture_output=True)
        push = f"push {key} '{value}'"
        paired(f"push to {key} {shape} (assign), {len(named)}-key vs 100-key session",
               f"{KVCLI} --home {home} {push}", f"{KVCLI} --home {many} {push}", args.runs)
        for where in (home, many):
            subprocess.run([str(KVCLI), "--home", str(where), "set-updater", "sgd:lr=0.1,momentum=0.9", "--yes"],
                           check=True, capture_output=True)
        paired(f"push to {key} (sgd, momentum), {len(named)}-key vs 100-key session",
               f"{KVCLI} --home {home} {push}", f"{KVCLI} --home {many} {push}", args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
