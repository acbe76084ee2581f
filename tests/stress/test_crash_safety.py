"""200 real ``kvcli push`` commands killed with SIGKILL at random moments.

The key counts its pushes (``sum`` updater, ``ones(4)`` each time). Half of the kills land
after a random delay drawn uniformly over the command's measured run time (stretched by a
fifth, so that some pushes finish first and the clean-up of the next commit is checked);
the other half use the session's commit hooks (``KVCLI_TEST_CRASH_POINT``: after the data
file is written, just before the session database's COMMIT, just after it). After every kill the
session must load (``kvcli pull k --json`` exits 0), hold one value in every element, and
that value V must be A or A+1 where A counts the pushes committed so far (acknowledged with
exit 0, or killed after their commit point). Leftover files of killed commands must be
removed by the next command that commits.

The 4-element value is held in its database row (a value of at most INLINE_BYTES has no
file: its push is the one SQLite transaction). Shorter runs do the same with a 64 KiB value
(a new file per push, fsynced before the COMMIT that names it) and with a 2 MiB value, big
enough for the session to rewrite an older file in place (its "spare") instead.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from .conftest import KVCLI, kvcli_env, run_kvcli

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("KVCLI_STRESS_SEED", "20240917"))
CRASH_POINTS = ("after-data", "before-manifest", "after-manifest")
#: one entry per draw: half random delays, half commit hooks (a sixth each)
MODES = ("delay",) * 3 + CRASH_POINTS


def session_folder(home: Path) -> Path:
    return home / "sessions" / "default"


def leftovers(home: Path) -> list[str]:
    """Files in the session folder that the committed manifest does not account for."""
    folder = session_folder(home)
    from kvcli.session.db import load_raw

    manifest = load_raw(folder)
    assert manifest is not None
    keep = set()
    for entry in manifest["keys"]:
        keep.add(entry["file"])
        if entry.get("spare"):
            keep.add(entry["spare"])
    if manifest.get("optimizer_state"):
        keep.add(manifest["optimizer_state"])
    extra = [f"data/{name}" for name in os.listdir(folder / "data") if name not in keep]
    # the database and SQLite's write-ahead log and its index (kept between commands)
    extra += [name for name in os.listdir(folder)
              if name not in ("session.db", "session.db-wal", "session.db-shm", ".lock", "data")]
    return sorted(extra)


def pull_json(home: Path) -> tuple[bool, list[float] | str]:
    """(True, the values) if ``kvcli pull k --json`` works, else (False, what went wrong)."""
    proc = run_kvcli(home, "pull", "k", "--json", timeout=60)
    if proc.returncode != 0:
        return False, f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}"
    try:
        doc = json.loads(proc.stdout)
        return True, [float(x) for x in doc["value"]]
    except (ValueError, KeyError, TypeError) as error:
        return False, f"unreadable pull output {proc.stdout[:200]!r} ({error})"


def pull_npy(home: Path) -> tuple[bool, np.ndarray | str]:
    """(True, the array) if ``kvcli pull k -o FILE.npy`` works (for values too big for JSON)."""
    out = home / "pulled.npy"
    proc = run_kvcli(home, "pull", "k", "-o", str(out), timeout=60)
    if proc.returncode != 0:
        return False, f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}"
    try:
        return True, np.load(out, allow_pickle=False)
    finally:
        out.unlink(missing_ok=True)


@dataclass
class CrashRun:
    crashes: int = 0
    corrupt: int = 0
    lost: int = 0
    killed: int = 0
    acknowledged: int = 0
    committed_when_killed: int = 0
    max_streak: int = 0
    max_leftovers: int = 0
    typical: float = 0.0
    committed: int = 0
    problems: list[str] = field(default_factory=list)


def crash_loop(home: Path, push: list[str], pull: Callable[[Path], tuple[bool, object]],
               size: int, iterations: int, seed: int) -> CrashRun:
    """init k = zeros(size), the sum updater, then ``iterations`` pushes of ones killed as
    described in the module docs; every outcome is checked and counted."""
    assert run_kvcli(home, "init", "k", f"zeros({size})").returncode == 0
    assert run_kvcli(home, "set-updater", "sum").returncode == 0
    env = kvcli_env(home)
    run = CrashRun()

    # The typical run time of the command (5 acknowledged pushes): the random delays cover it.
    times = []
    for _ in range(5):
        start = time.perf_counter()
        assert subprocess.run(push, env=env, capture_output=True, timeout=60).returncode == 0
        times.append(time.perf_counter() - start)
    run.typical = statistics.median(times)
    run.committed = 5  # A: pushes known to be in the value

    rng = random.Random(seed)
    streak = 0  # commands since the last one that committed normally
    for i in range(iterations):
        mode = rng.choice(MODES)
        delay = rng.uniform(0, 1.2 * run.typical) if mode == "delay" else None
        run_env = env if mode == "delay" else {**env, "KVCLI_TEST_CRASH_POINT": mode}
        proc = subprocess.Popen(push, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if delay is not None:
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)  # harmless if it already exited (not yet reaped)
        _, err = proc.communicate(timeout=60)
        run.crashes += 1
        code = proc.returncode
        if code == 0:
            run.acknowledged += 1
            run.committed += 1
        elif code == -signal.SIGKILL:
            run.killed += 1
        else:
            run.corrupt += 1
            run.problems.append(f"#{i} {mode}: push exited {code}: {err.decode(errors='replace').strip()[-300:]}")

        ok, value = pull(home)
        if not ok:
            run.corrupt += 1
            run.problems.append(f"#{i} {mode}: the session does not load: {value}")
            continue
        values = np.asarray(value)
        if values.size != size or values.min() != values.max() or not float(values.flat[0]).is_integer():
            run.corrupt += 1
            run.problems.append(f"#{i} {mode}: torn or odd value: {values.size} elements, "
                                f"{np.unique(values)[:8].tolist()}")
            continue
        v = int(values.flat[0])
        if v < run.committed:
            run.lost += 1
            run.problems.append(f"#{i} {mode}: value {v} < {run.committed} committed pushes (exit {code})")
        elif v > run.committed + (0 if code == 0 else 1):
            run.corrupt += 1
            run.problems.append(f"#{i} {mode}: value {v} > {run.committed} committed pushes + this one (exit {code})")
        elif v == run.committed + 1:  # the killed push had passed its commit point
            run.committed_when_killed += 1
        run.committed = max(run.committed, v)

        extra = leftovers(home)
        streak = 0 if code == 0 else streak + 1
        run.max_streak = max(run.max_streak, streak)
        run.max_leftovers = max(run.max_leftovers, len(extra))
        # a killed command leaves at most its new data file (or, killed after the commit,
        # the old data file); the next commit removes them all
        if len(extra) > 2 * streak:
            run.problems.append(f"#{i} {mode}: {len(extra)} leftover files after {streak} kills in a row "
                                f"(exit {code}): {extra}")
    return run


def finish_cleanly(home: Path, push: list[str], run: CrashRun, size: int) -> None:
    """One normal command afterwards: the value is exact and nothing is left behind."""
    assert subprocess.run(push, env=kvcli_env(home), capture_output=True, timeout=60).returncode == 0
    run.committed += 1
    from kvcli.session import Session

    with Session("default", home) as session:
        [[array]] = session.pull(["k"])
        [entry] = session.entries()
    assert array.shape == (size,) and array.dtype == np.float32
    assert np.all(array == run.committed), np.unique(array)[:8]
    assert leftovers(home) == []
    assert entry.version == 1 + run.committed  # init + every committed push


ITERATIONS = 200


def test_push_survives_sigkill_at_random_moments(home: Path) -> None:
    push = [str(KVCLI), "push", "k", "ones(4)"]
    run = crash_loop(home, push, pull_json, 4, ITERATIONS, SEED)
    print(f"\n{run.crashes} crashes, {run.corrupt} corrupt, {run.lost} lost "
          f"(seed {SEED}; {run.killed} killed, {run.acknowledged} finished before the kill, "
          f"{run.committed_when_killed} killed after their commit point; typical run {run.typical * 1000:.0f} ms; "
          f"at most {run.max_leftovers} leftover files, {run.max_streak} kills in a row)")
    assert not run.problems, "\n".join(run.problems[:20])
    assert run.crashes == ITERATIONS
    assert run.corrupt == 0 and run.lost == 0
    # the run exercised what it claims: kills, and kills after the commit point
    assert run.killed >= ITERATIONS // 3, run.killed
    assert run.committed_when_killed >= 10, run.committed_when_killed
    finish_cleanly(home, push, run, 4)


MID = 1 << 14  # float32 elements: 64 KiB, a value file (above INLINE_BYTES, below the reuse threshold)
BIG = 1 << 19  # float32 elements: 2 MiB, above the session's mmap and file-reuse thresholds
FILE_ITERATIONS = 50


@pytest.mark.parametrize("size, label, seed", [(MID, "64 KiB", SEED + 2), (BIG, "2 MiB", SEED + 1)],
                         ids=["64KiB-file", "2MiB-file"])
def test_file_value_push_survives_sigkill(home: Path, size: int, label: str, seed: int) -> None:
    from kvcli.session.names import INLINE_BYTES, RECYCLE_BYTES

    assert INLINE_BYTES < 4 * MID < RECYCLE_BYTES <= 4 * BIG  # the two file paths: new file, reused file
    push = [str(KVCLI), "push", "k", f"ones({size})"]
    run = crash_loop(home, push, pull_npy, size, FILE_ITERATIONS, seed)
    print(f"\n{label} value: {run.crashes} crashes, {run.corrupt} corrupt, {run.lost} lost "
          f"({run.killed} killed, {run.acknowledged} finished, {run.committed_when_killed} after the commit point)")
    assert not run.problems, "\n".join(run.problems[:20])
    assert run.crashes == FILE_ITERATIONS and run.corrupt == 0 and run.lost == 0
    assert run.killed >= FILE_ITERATIONS // 3
    finish_cleanly(home, push, run, size)
