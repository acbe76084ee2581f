"""Processes killed mid-push (400 concurrent one-shot pushes: tests/stress/test_concurrency.py)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import numpy as np

from .conftest import Runner, kvcli_env

KILL_SCRIPT = r"""
import os, sys
import numpy as np
from kvcli.session import Session
n, marker = int(sys.argv[2]), sys.argv[3]
with Session("default", sys.argv[1]) as s:
    v = 1
    while True:
        s.push(["big"], [np.full(n, v, np.float32)])
        with open(marker + ".tmp", "w") as f:  # how many pushes have returned (renamed: never half-written)
            f.write(str(v))
        os.replace(marker + ".tmp", marker)
        v += 1
"""


def wait_for_pushes(marker: Path, count: int, proc: subprocess.Popen, seconds: float = 120) -> None:
    """Until the pushing child has written ``count`` (or more) into ``marker``."""
    deadline = time.monotonic() + seconds
    while not (marker.exists() and int(marker.read_text()) >= count):
        assert proc.poll() is None, f"the pushing process exited {proc.returncode}"
        assert time.monotonic() < deadline, f"{count} pushes never returned"
        time.sleep(0.005)


def test_sigkill_mid_push_leaves_old_or_new_value(kv: Runner, home: Path) -> None:
    """Kill pushing processes at random moments after their k-th push returned (k = 1..6):
    each time the session loads and holds one committed value (every element equal), never
    a mix."""
    n = 1 << 20  # 4 MiB per value: the kill often lands inside a write
    assert kv("init", "big", f"zeros({n})").code == 0
    rng = random.Random(1234)
    seen = set()
    marker = home.parent / "pushes-returned"
    for count in rng.sample(range(1, 7), 6):
        marker.unlink(missing_ok=True)
        proc = subprocess.Popen([os.sys.executable, "-c", KILL_SCRIPT, str(home), str(n), str(marker)],
                                env=kvcli_env(home))
        wait_for_pushes(marker, count, proc)
        time.sleep(rng.random() * 0.02)  # where in the next push the kill lands
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        out = home / "pulled.npy"
        result = kv("pull", "big", "-o", str(out), "--yes")  # the last round's file is replaced
        assert result.code == 0, result.err
        values = np.unique(np.load(out, allow_pickle=False))
        assert len(values) == 1, values[:10]
        assert values[0] >= count  # every push that returned is kept
        seen.add(float(values[0]))
    assert len(seen) > 1


def test_one_shot_push_killed_at_each_commit_point(kv: Runner) -> None:
    kv("init", "k", "zeros(3)")
    for point, expected in (("after-data", 0), ("before-manifest", 0), ("after-manifest", 5)):
        kv("init", "k", "zeros(3)")
        result = kv("push", "k", "ones(3)*5", env={"KVCLI_TEST_CRASH_POINT": point})
        assert result.code == -signal.SIGKILL
        assert kv("pull", "k").array().tolist() == [expected] * 3, point
