"""Many writers and readers on one session at once.

* library: 8 writer processes x 100 pushes (``sum`` updater) and 4 reader processes pulling
  in a loop, through :class:`kvcli.session.Session` (``multiprocessing``, spawn): the final
  value is exactly 800 in every element, and no reader ever sees a torn array (elements
  differ), a value outside [0, 800], or a value going back in time;
* the same with a 2 MiB value (big enough for the session's memory-mapped reads and reused
  files);
* the binary: 4 shell loops x 20 ``kvcli push`` and 2 loops of ``kvcli pull --json``;
* the binary alone: 8 shell loops x 50 ``kvcli push`` at once (400 processes), each counted.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from . import _workers
from .conftest import KVCLI, kvcli_env, run_kvcli

pytestmark = pytest.mark.slow


def check_observations(rows: np.ndarray, total: int, name: str) -> list[str]:
    """Problems in one reader's (min, max) rows: torn, out of range, or going backwards."""
    problems = []
    if len(rows) == 0:
        return [f"{name} made no pull"]
    torn = np.nonzero(rows[:, 0] != rows[:, 1])[0]
    if len(torn):
        problems.append(f"{name}: {len(torn)} torn pulls, first #{torn[0]}: min/max {rows[torn[0]].tolist()}")
    values = rows[:, 0]
    outside = np.nonzero((values < 0) | (values > total) | (values != np.round(values)))[0]
    if len(outside):
        problems.append(f"{name}: {len(outside)} values outside 0..{total}, e.g. {values[outside[0]]}")
    back = np.nonzero(np.diff(values) < 0)[0]
    if len(back):
        problems.append(f"{name}: value went back {len(back)} times, e.g. {values[back[0]]} -> {values[back[0] + 1]}")
    if values[-1] != total:
        problems.append(f"{name}: the pull after all writers finished saw {values[-1]}, not {total}")
    return problems


def run_library_case(home: Path, out: Path, size: int, writers: int, pushes: int, readers: int) -> list[np.ndarray]:
    from kvcli.session import Session

    with Session("default", home) as session:
        session.init(["k"], [np.zeros(size, np.float32)])
        session.set_updater("sum")
    ctx = multiprocessing.get_context("spawn")
    start, stop = ctx.Event(), ctx.Event()
    wprocs = [ctx.Process(target=_workers.writer, args=(str(home), str(out), f"writer{i}", "k", size, pushes, start))
              for i in range(writers)]
    rprocs = [ctx.Process(target=_workers.reader, args=(str(home), str(out), f"reader{i}", "k", start, stop, i % 2 == 1))
              for i in range(readers)]
    for proc in wprocs + rprocs:
        proc.start()
    try:
        time.sleep(0.5)  # let the children import numpy and kvcli, then release them together
        start.set()
        deadline = time.monotonic() + 180
        for proc in wprocs:
            proc.join(max(1.0, deadline - time.monotonic()))
        stop.set()
        for proc in rprocs:
            proc.join(max(1.0, deadline + 30 - time.monotonic()))
    finally:
        for proc in wprocs + rprocs:
            if proc.is_alive():
                proc.kill()
                proc.join()
    errors = {p.name: p.read_text() for p in out.glob("*.err")}
    assert not errors, "\n".join(f"{k}:\n{v}" for k, v in errors.items())
    codes = [proc.exitcode for proc in wprocs + rprocs]
    assert codes == [0] * len(codes), codes

    total = writers * pushes
    with Session("default", home) as session:
        [[array]] = session.pull(["k"])
        [entry] = session.entries()
    assert array.shape == (size,) and array.dtype == np.float32
    assert np.all(array == total), np.unique(array)[:10]
    assert entry.version == 1 + total  # init + every push, none lost or doubled

    observations = [np.load(out / f"reader{i}.npy") for i in range(readers)]
    problems = [p for i, rows in enumerate(observations) for p in check_observations(rows, total, f"reader{i}")]
    assert not problems, "\n".join(problems)
    return observations


def test_8_writers_4_readers_library(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    out.mkdir()
    observations = run_library_case(home, out, size=4, writers=8, pushes=100, readers=4)
    pulls = sum(len(rows) for rows in observations)
    seen = np.concatenate([rows[:, 0] for rows in observations])
    print(f"\n8 writers x 100 pushes, 4 readers: {pulls} pulls, {len(np.unique(seen))} distinct values seen")
    # the readers really ran alongside the writers
    assert all(len(rows) >= 5 for rows in observations), [len(rows) for rows in observations]
    assert np.any((seen > 0) & (seen < 800)), "no reader saw an intermediate value"


def test_big_values_4_writers_2_readers_library(tmp_path: Path) -> None:
    """2 MiB values: reads go through mmap and big files may be rewritten in place."""
    home, out = tmp_path / "home", tmp_path / "out"
    out.mkdir()
    observations = run_library_case(home, out, size=1 << 19, writers=4, pushes=25, readers=2)
    assert all(len(rows) >= 2 for rows in observations), [len(rows) for rows in observations]


WRITERS, PUSHES = 4, 20


def test_cli_4_writers_2_readers(home: Path) -> None:
    assert run_kvcli(home, "init", "k", "zeros(4)").returncode == 0
    assert run_kvcli(home, "set-updater", "sum").returncode == 0
    env = kvcli_env(home)
    loop = f'for i in $(seq {PUSHES}); do "{KVCLI}" push k "ones(4)" >/dev/null || exit 1; done'
    done = threading.Event()
    results: list[list[tuple[int, str, str]]] = [[], []]

    def read(slot: int) -> None:
        while True:
            last = done.is_set()
            proc = subprocess.run([str(KVCLI), "pull", "k", "--json"], env=env, capture_output=True, text=True,
                                  timeout=120)
            results[slot].append((proc.returncode, proc.stdout, proc.stderr))
            if last:
                return

    readers = [threading.Thread(target=read, args=(slot,), daemon=True) for slot in range(2)]
    for thread in readers:
        thread.start()
    writers = [subprocess.Popen(["bash", "-c", loop], env=env, stderr=subprocess.PIPE) for _ in range(WRITERS)]
    try:
        for proc in writers:
            _, err = proc.communicate(timeout=240)
            assert proc.returncode == 0, err.decode()
    finally:
        for proc in writers:
            if proc.poll() is None:
                proc.kill()
        done.set()
        for thread in readers:
            thread.join(120)
    total = WRITERS * PUSHES
    problems = []
    for slot, pulls in enumerate(results):
        rows = []
        for code, out, err in pulls:
            if code != 0:
                problems.append(f"reader{slot}: pull exited {code}: {err.strip()[-300:]}")
                continue
            value = json.loads(out)["value"]
            rows.append((min(value), max(value)))
        problems += check_observations(np.array(rows, dtype=np.float64).reshape(-1, 2), total, f"reader{slot}")
    assert not problems, "\n".join(problems)
    final = run_kvcli(home, "--json", "show")
    assert json.loads(final.stdout)["keys"][0]["version"] == 1 + total
    pulled = run_kvcli(home, "pull", "k", "--json")
    assert json.loads(pulled.stdout)["value"] == [float(total)] * 4
    print(f"\nCLI: {WRITERS} x {PUSHES} pushes, {sum(len(p) for p in results)} pulls by 2 readers")


def test_cli_400_concurrent_one_shot_pushes_all_count(home: Path) -> None:
    """8 processes each run 50 `kvcli push k "ones(4)"` at once with the sum updater: +400."""
    processes, pushes = 8, 50
    assert run_kvcli(home, "init", "k", "zeros(4)").returncode == 0
    assert run_kvcli(home, "set-updater", "sum").returncode == 0
    loop = f'for i in $(seq {pushes}); do "{KVCLI}" push k "ones(4)" >/dev/null || exit 1; done'
    env = kvcli_env(home)
    procs = [subprocess.Popen(["bash", "-c", loop], env=env, stderr=subprocess.PIPE) for _ in range(processes)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    pulled = run_kvcli(home, "pull", "k", "--json")
    assert json.loads(pulled.stdout)["value"] == [float(processes * pushes)] * 4
    assert json.loads(run_kvcli(home, "--json", "show").stdout)["keys"][0]["version"] == 1 + processes * pushes
