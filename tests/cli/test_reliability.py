"""Concurrent one-shot commands and processes killed mid-push."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import numpy as np

from .conftest import KVCLI, Runner, kvcli_env

PROCESSES = 8
PUSHES = 50


def test_concurrent_pushes_all_count(kv: Runner, home: Path) -> None:
    """8 processes each run 50 `kvcli push k "ones(4)"` at once with the sum updater: +400."""
    assert kv("init", "k", "zeros(4)").code == 0
    assert kv("set-updater", "sum").code == 0
    loop = f'for i in $(seq {PUSHES}); do "{KVCLI}" push k "ones(4)" || exit 1; done'
    env = kvcli_env(home)
    procs = [subprocess.Popen(["bash", "-c", loop], env=env, stderr=subprocess.PIPE) for _ in range(PROCESSES)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    assert kv("pull", "k").array().tolist() == [PROCESSES * PUSHES] * 4
    info = kv("--json", "show")
    import json

    assert json.loads(info.out)["keys"][0]["version"] == 1 + PROCESSES * PUSHES


KILL_SCRIPT = r"""
import sys
import numpy as np
from kvcli.session import Session
n = int(sys.argv[2])
with Session("default", sys.argv[1]) as s:
    v = 1
    while True:
        s.push(["big"], [np.full(n, v, np.float32)])
        v += 1
"""


def test_sigkill_mid_push_leaves_old_or_new_value(kv: Runner, home: Path) -> None:
    """Kill pushing processes at random moments: each time the session loads and holds one
    committed value (every element equal), never a mix."""
    n = 1 << 20  # 4 MiB per value: the kill often lands inside a write
    assert kv("init", "big", f"zeros({n})").code == 0
    rng = random.Random(1234)
    seen = set()
    for _ in range(6):
        proc = subprocess.Popen([os.sys.executable, "-c", KILL_SCRIPT, str(home), str(n)], env=kvcli_env(home))
        time.sleep(0.3 + rng.random() * 0.5)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        out = home / "pulled.npy"
        result = kv("pull", "big", "-o", str(out))
        assert result.code == 0, result.err
        values = np.unique(np.load(out, allow_pickle=False))
        assert len(values) == 1, values[:10]
        seen.add(float(values[0]))
    assert len(seen) > 1  # the pushes did commit between kills


def test_one_shot_push_killed_at_each_commit_point(kv: Runner) -> None:
    kv("init", "k", "zeros(3)")
    for point, expected in (("after-data", 0), ("before-manifest", 0), ("after-manifest", 5)):
        kv("init", "k", "zeros(3)")
        result = kv("push", "k", "ones(3)*5", env={"KVCLI_TEST_CRASH_POINT": point})
        assert result.code == -signal.SIGKILL
        assert kv("pull", "k").array().tolist() == [expected] * 3, point
