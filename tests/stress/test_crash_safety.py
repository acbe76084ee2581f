"""200 real ``kvcli push`` commands killed with SIGKILL at random moments.

The key counts its pushes (``sum`` updater, ``ones(4)`` each time). Half of the kills land
after a random delay drawn uniformly over the command's measured run time (stretched by a
fifth, so that some pushes finish first and the clean-up of the next commit is checked); the other half
use the session's commit hooks (``KVCLI_TEST_CRASH_POINT``: after the data file is written,
just before the manifest switch, just after it). After every kill the session must load
(``kvcli pull k --json`` exits 0), hold one value in every element, and that value V must be
A or A+1 where A counts the pushes committed so far (acknowledged with exit 0, or killed
after their commit point). Leftover files of killed commands must be removed by the next
command that commits.

The RNG is seeded (``KVCLI_STRESS_SEED`` overrides the seed) so a failing run can be replayed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from .conftest import KVCLI, kvcli_env, run_kvcli

pytestmark = pytest.mark.slow

ITERATIONS = 200
SEED = int(os.environ.get("KVCLI_STRESS_SEED", "20240917"))
CRASH_POINTS = ("after-data", "before-manifest", "after-manifest")
#: one entry per draw: half random delays, half commit hooks (a sixth each)
MODES = ("delay",) * 3 + CRASH_POINTS
PUSH = [str(KVCLI), "push", "k", "ones(4)"]


def session_folder(home: Path) -> Path:
    return home / "sessions" / "default"


def leftovers(home: Path) -> list[str]:
    """Files in the session folder that the committed manifest does not account for."""
    folder = session_folder(home)
    manifest = json.loads((folder / "manifest.json").read_text())
    keep = set()
    for entry in manifest["keys"]:
        keep.add(entry["file"])
        if entry.get("spare"):
            keep.add(entry["spare"])
    if manifest.get("optimizer_state"):
        keep.add(manifest["optimizer_state"])
    extra = [f"data/{name}" for name in os.listdir(folder / "data") if name not in keep]
    extra += [name for name in os.listdir(folder) if name not in ("manifest.json", ".lock", "data")]
    return sorted(extra)


def pull_value(home: Path) -> tuple[bool, list[float] | str]:
    """(True, the 4 values) if ``kvcli pull k --json`` works, else (False, its stderr)."""
    proc = run_kvcli(home, "pull", "k", "--json", timeout=60)
    if proc.returncode != 0:
        return False, f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}"
    try:
        doc = json.loads(proc.stdout)
        return True, [float(x) for x in doc["value"]]
    except (ValueError, KeyError, TypeError) as error:
        return False, f"unreadable pull output {proc.stdout[:200]!r} ({error})"


def test_push_survives_sigkill_at_random_moments(home: Path) -> None:
    assert run_kvcli(home, "init", "k", "zeros(4)").returncode == 0
    assert run_kvcli(home, "set-updater", "sum").returncode == 0
    env = kvcli_env(home)

    # The typical run time of the command (5 acknowledged pushes): the random delays cover it.
    times = []
    for _ in range(5):
        start = time.perf_counter()
        assert subprocess.run(PUSH, env=env, capture_output=True, timeout=60).returncode == 0
        times.append(time.perf_counter() - start)
    typical = statistics.median(times)
    committed = 5  # A: pushes known to be in the value
    ok, value = pull_value(home)
    assert ok and value == [5.0] * 4, value

    rng = random.Random(SEED)
    crashes = corrupt = lost = 0
    killed = acknowledged = committed_when_killed = 0
    streak = max_streak = max_leftovers = 0  # commands since the last one that committed normally
    problems: list[str] = []
    for i in range(ITERATIONS):
        mode = rng.choice(MODES)
        delay = rng.uniform(0, 1.2 * typical) if mode == "delay" else None
        run_env = env if mode == "delay" else {**env, "KVCLI_TEST_CRASH_POINT": mode}
        proc = subprocess.Popen(PUSH, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if delay is not None:
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)  # harmless if it already exited (not yet reaped)
        _, err = proc.communicate(timeout=60)
        crashes += 1
        code = proc.returncode
        if code == 0:
            acknowledged += 1
            committed += 1
        elif code == -signal.SIGKILL:
            killed += 1
        else:
            corrupt += 1
            problems.append(f"#{i} {mode}: push exited {code}: {err.decode(errors='replace').strip()[-300:]}")

        ok, value = pull_value(home)
        if not ok:
            corrupt += 1
            problems.append(f"#{i} {mode}: the session does not load: {value}")
            continue
        if len(value) != 4 or len(set(value)) != 1 or not float(value[0]).is_integer():
            corrupt += 1
            problems.append(f"#{i} {mode}: torn or odd value {value}")
            continue
        v = int(value[0])
        if v < committed:
            lost += 1
            problems.append(f"#{i} {mode}: value {v} < {committed} committed pushes (exit {code})")
        elif v > committed + (0 if code == 0 else 1):
            corrupt += 1
            problems.append(f"#{i} {mode}: value {v} > {committed} committed pushes + this one (exit {code})")
        elif v == committed + 1:  # the killed push had passed its commit point
            committed_when_killed += 1
        committed = max(committed, v)

        extra = leftovers(home)
        streak = 0 if code == 0 else streak + 1
        max_streak = max(max_streak, streak)
        max_leftovers = max(max_leftovers, len(extra))
        # a killed command leaves at most its new data file and its temporary manifest (or,
        # killed after the switch, the old data file); the next commit removes them all
        if len(extra) > 2 * streak:
            problems.append(f"#{i} {mode}: {len(extra)} leftover files after {streak} kills in a row "
                            f"(exit {code}): {extra}")

    print(f"\n{crashes} crashes, {corrupt} corrupt, {lost} lost "
          f"(seed {SEED}; {killed} killed, {acknowledged} finished before the kill, "
          f"{committed_when_killed} killed after their commit point; typical run {typical * 1000:.0f} ms; "
          f"at most {max_leftovers} leftover files, {max_streak} kills in a row)")
    assert not problems, "\n".join(problems[:20])
    assert crashes == ITERATIONS
    assert corrupt == 0 and lost == 0
    # the run exercised what it claims: kills, and kills after the commit point
    assert killed >= ITERATIONS // 3, killed
    assert committed_when_killed >= 10, committed_when_killed

    # one normal command afterwards: the value is exact and nothing is left behind
    assert subprocess.run(PUSH, env=env, capture_output=True, timeout=60).returncode == 0
    committed += 1
    from kvcli.session import Session

    with Session("default", home) as session:
        [[array]] = session.pull(["k"])
        [entry] = session.entries()
    assert array.tolist() == [float(committed)] * 4
    assert array.dtype == np.float32
    assert leftovers(home) == []
    assert entry.version == 1 + committed  # init + every committed push
