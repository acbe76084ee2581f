"""A `device` session keeps its device workers warm between one-shot commands: they listen
on Unix sockets in a private folder of the user's runtime folder, the next command attaches
to them, and they go after KVCLI_DEVICE_IDLE seconds without one."""

from __future__ import annotations

import os
import signal
import stat
import time
from pathlib import Path

import numpy as np
import pytest

from kvcli.session import Session
from kvcli.store.device.store import warm_folder

N = 200_000  # big enough that every device gets a slice


def push_three(home: Path) -> tuple[list[int], np.ndarray]:
    """One 'command': open the session, push from 3 devices, pull, close."""
    with Session("s", home, store_type="device", store_options={"num_devices": 2}) as session:
        session.push(["w"], [[np.full(N, 1.0, np.float32)] * 3])
        pids = list(session.store.backend.device_pids)
        value = session.pull(["w"])[0][0]
    return pids, value


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_gone(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with Session("s", tmp_path, store_type="device", store_options={"num_devices": 2}) as session:
        session.init(["w"], [np.zeros(N, np.float32)])
    return tmp_path


def test_the_next_command_attaches_to_the_same_devices(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVCLI_DEVICE_IDLE", "30")
    first, value = push_three(home)
    assert len(first) == 2 and np.array_equal(value, np.full(N, 3.0, np.float32))
    folder = warm_folder(home / "sessions" / "s")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    assert sorted(p.name for p in folder.iterdir()) == ["d0.sock", "d1.sock"]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folder.iterdir())
    assert all(alive(p) for p in first)  # the command is over; its devices are not
    second, value = push_three(home)
    assert second == first and np.array_equal(value, np.full(N, 3.0, np.float32))
    for pid in first:
        os.kill(pid, signal.SIGTERM)
    assert wait_gone(first, 10)


def test_idle_devices_exit_and_remove_their_sockets(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVCLI_DEVICE_IDLE", "1")
    pids, _ = push_three(home)
    assert wait_gone(pids, 15)
    assert list(warm_folder(home / "sessions" / "s").iterdir()) == []


def test_a_killed_warm_device_is_replaced_and_the_sum_stays_exact(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVCLI_DEVICE_IDLE", "30")
    pids, _ = push_three(home)
    os.kill(pids[0], signal.SIGKILL)  # its socket file stays behind, stale
    assert wait_gone(pids[:1], 10)
    again, value = push_three(home)
    assert again[0] != pids[0] and again[1] == pids[1]
    assert np.array_equal(value, np.full(N, 3.0, np.float32))
    for pid in again:
        os.kill(pid, signal.SIGTERM)
    assert wait_gone(again, 10)


def test_a_store_made_in_python_keeps_its_devices_to_itself(tmp_path: Path) -> None:
    """Without warm_dir (kvcli.create), devices are the store's children and stop with it."""
    import kvcli

    kv = kvcli.create("device", num_devices=2)
    kv.init("w", np.zeros(N, np.float32))
    kv.push("w", [np.ones(N, np.float32)] * 2)
    pids = list(kv.backend.device_pids)
    kv.close()
    assert wait_gone(pids, 10)
