"""The device store and other local users (issue 20 items 2, 5 and 7): warm-device sockets
live in a private runtime folder under a short hashed name and talk only to a peer of the
same user (SO_PEERCRED) in JSON that cannot carry code; the shared-memory sweep removes
only what provably belongs to a dead store of this user, never by pid."""

from __future__ import annotations

import json
import os
import pickle
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from kvcli.errors import StoreError, UnsafePathError
from kvcli.osutil import private_dir
from kvcli.session import Session
from kvcli.store.device.store import DeviceBackend, warm_folder
from kvcli.store.device.shm import SHM_DIR, SharedArray, leftover_segments, sweep_orphans
from tests.other_user import as_user, other_uid
from tests.store.test_device_faults import alive

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs Linux /proc and /dev/shm")

N = 100_000
REPO = Path(__file__).resolve().parents[2]


class Pwn:
    """A pickle that makes a folder when it is loaded: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.mkdir, (self.marker,))


def stop(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A runtime folder of this test's own (XDG_RUNTIME_DIR), outside pytest's root-only folders."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="kvcli-run-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def device_session(home: Path, name: str = "s") -> Session:
    return Session(name, home, store_type="device", store_options={"num_devices": 2})


# ---------------------------------------------------------------------- socket paths (item 7)
def test_a_64_character_session_name_in_a_deep_home_pushes_at_once(tmp_path: Path) -> None:
    """The old socket path (home/sessions/NAME/.devices/device-0.sock) passed 108 bytes: every
    push waited 60 s and failed. The socket is now a short hashed name in the runtime folder."""
    home = tmp_path / ("h" * 120) / ("k" * 60)
    name = "n" * 64
    code = f"""
        import numpy as np
        from kvcli.session import Session
        with Session({name!r}, {str(home)!r}, store_type="device", store_options={{"num_devices": 2}}) as s:
            s.init(["w"], [np.zeros({N}, np.float32)])
            s.push(["w"], [[np.ones({N}, np.float32)] * 3])
            print(float(s.pull(["w"])[0][0].sum()), len(str(s.store.backend.warm_dir)))
            print(*s.store.backend.device_pids)
        """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=40,
                          env={**os.environ, "KVCLI_DEVICE_IDLE": "0"})
    assert done.returncode == 0, done.stderr[-800:]
    total, folder_length = done.stdout.split("\n")[0].split()
    assert float(total) == 3.0 * N and int(folder_length) < 100
    stop([int(p) for p in done.stdout.split("\n")[1].split()])


def test_a_warm_dir_too_long_for_a_socket_is_refused_when_the_store_is_made(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"warm_dir .* is too long for a Unix socket path \(.*d1\.sock is 1\d\d bytes, "
                                         r"at most 107\)"):
        DeviceBackend(num_devices=2, warm_dir=tmp_path / ("x" * 100))


# ---------------------------------------------------------------------- the channel (item 2)
def test_a_device_never_unpickles_what_it_is_sent(tmp_path: Path) -> None:
    """A device worker reads JSON only: a pickle (what an older store, or anyone, would send)
    ends the conversation and runs nothing."""
    to_read, to_write = os.pipe()
    from_read, from_write = os.pipe()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    worker = subprocess.Popen([sys.executable, "-m", "kvcli.store.device.worker", str(to_read), str(from_write), "0"],
                              pass_fds=(to_read, from_write), env=env)
    os.close(to_read)
    os.close(from_write)
    outbox, inbox = Connection(to_write, readable=False), Connection(from_read, writable=False)
    try:
        assert json.loads(inbox.recv_bytes()) == [0, "ok", worker.pid]  # the greeting is JSON, not a pickle
        marker = tmp_path / "pwned"
        outbox.send_bytes(pickle.dumps((1, "release", Pwn(marker))))
        assert worker.wait(timeout=30) == 0
        assert not marker.exists()
    finally:
        outbox.close()
        inbox.close()
        if worker.poll() is None:
            worker.kill()
            worker.wait()


def _listen_as(uid: int, path: str, ready: int, payload: bytes) -> None:
    """In a forked child: bind ``path`` as root (the folder is root's), become ``uid``, then
    listen — the kernel records the listener's user at listen() — and answer a pickle."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    server.listen(1)
    os.write(ready, b"listening\n")
    server.settimeout(30)
    client, _ = server.accept()
    try:
        client.sendall(struct.pack("!i", len(payload)) + payload)  # what it would have the store unpickle
        client.settimeout(5)
        got = len(client.recv(1 << 16))
    except ConnectionResetError:  # the store hung up without reading what was sent: nothing came
        got = 0
    except OSError:  # the store hung up before the send
        got = 0
    os.write(ready, f"got {got} bytes\n".encode())


def test_a_device_socket_served_by_another_user_is_refused(tmp_path: Path, runtime: Path) -> None:
    uid = other_uid()
    home = tmp_path / "h"
    with device_session(home) as session:
        session.init(["w"], [np.zeros(N, np.float32)])
    folder = private_dir(warm_folder(home / "sessions" / "s"), "test", create=True, closed=True)
    marker = tmp_path / "pwned"
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read_end)
            _listen_as(uid, str(folder / "d0.sock"), write_end, pickle.dumps((0, "ok", Pwn(marker))))
        finally:
            os._exit(0)
    os.close(write_end)
    lines = os.fdopen(read_end)
    try:
        assert lines.readline() == "listening\n"
        with pytest.raises(UnsafePathError, match=rf"refuses the device socket {folder}/d0\.sock: it is served by "
                                                  rf"process {child} of uid {uid}, not by you"):
            with device_session(home) as victim:
                victim.push(["w"], [[np.ones(N, np.float32)] * 3])
        assert lines.readline() == "got 0 bytes\n"  # nothing was sent to it
        assert not marker.exists()  # and nothing it said was read
        with device_session(home) as session:
            assert session.pull(["w"])[0][0].sum() == 0  # the push was not applied
    finally:
        lines.close()
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


def _knock(path: str) -> int:
    """As another user: connect to a warm device and count the bytes it says (EOF: 0)."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(path)
    client.settimeout(10)
    return len(client.recv(1 << 16))


def test_a_warm_device_says_nothing_to_another_user_and_keeps_serving(tmp_path: Path, runtime: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    uid = other_uid()
    monkeypatch.setenv("KVCLI_DEVICE_IDLE", "30")
    home = tmp_path / "h"
    with device_session(home) as session:
        session.init(["w"], [np.zeros(N, np.float32)])
        session.push(["w"], [[np.ones(N, np.float32)] * 3])
        pids = list(session.store.backend.device_pids)
    folder = warm_folder(home / "sessions" / "s")
    opened = [runtime, runtime / "kvcli", folder]
    try:
        for path in opened:  # let the other user reach the socket, as a careless chmod would
            os.chmod(path, 0o711)
        os.chmod(folder / "d0.sock", 0o666)
        assert as_user(uid, _knock, str(folder / "d0.sock")) == 0  # closed at once: not even a greeting
    finally:
        for path in opened:
            os.chmod(path, 0o700)
        os.chmod(folder / "d0.sock", 0o600)
    try:
        with device_session(home) as session:
            session.push(["w"], [[np.ones(N, np.float32)] * 2])
            assert session.store.backend.device_pids == pids  # the same devices, still serving their user
            assert session.pull(["w"])[0][0].tolist()[:2] == [2.0, 2.0]
    finally:
        stop(pids)


def test_a_runtime_folder_of_another_user_is_refused(tmp_path: Path, runtime: Path) -> None:
    uid = other_uid()
    (runtime / "kvcli").mkdir(mode=0o700)
    os.chown(runtime / "kvcli", uid, uid)
    home = tmp_path / "h"
    with pytest.raises(UnsafePathError, match=rf"runtime folder {runtime}/kvcli: it belongs to uid {uid}"):
        with device_session(home) as session:
            session.init(["w"], [np.zeros(N, np.float32)])


# ---------------------------------------------------------------------- the sweep (item 5)
def _fake_segment(key: str, uid: int, live: bool = True) -> list[str]:
    """Files as a store of ``uid`` with liveness key ``key`` leaves them (nobody holds the lock)."""
    names = [f"kvcli_{key}_{secrets.token_hex(4)}"] + ([f"kvcli_{key}.live"] if live else [])
    for name in names:
        fd = os.open(os.path.join(SHM_DIR, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.fchown(fd, uid, uid)
        os.close(fd)
    return names


@pytest.fixture
def cleanup() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        try:
            os.unlink(os.path.join(SHM_DIR, name))
        except FileNotFoundError:
            pass


def test_the_sweep_never_removes_another_users_segments(cleanup: list[str]) -> None:
    uid = other_uid()
    names = _fake_segment(f"4000000_{secrets.token_hex(4)}", uid)  # a pid no process here can have
    cleanup += names
    assert names[0] not in sweep_orphans()
    assert all(os.path.exists(os.path.join(SHM_DIR, n)) for n in names)


def test_the_sweep_keeps_segments_it_cannot_prove_dead_and_removes_those_it_can(cleanup: list[str]) -> None:
    untokened = _fake_segment(f"4000001_{secrets.token_hex(4)}", os.geteuid(), live=False)
    dead = _fake_segment(f"4000002_{secrets.token_hex(4)}", os.geteuid())  # its token is there, unlocked
    cleanup += untokened + dead
    removed = sweep_orphans()
    assert untokened[0] not in removed and os.path.exists(os.path.join(SHM_DIR, untokened[0]))
    assert dead[0] in removed and not any(os.path.exists(os.path.join(SHM_DIR, n)) for n in dead)


def test_the_sweep_keeps_a_live_store_in_another_pid_namespace() -> None:
    """A store in another PID namespace sharing /dev/shm has a pid that means nothing here:
    the old sweep unlinked its live segments; its lock keeps them now."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) for a PID namespace")
    code = """
        import os, sys, time
        try:
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write("30000")  # a pid far from this machine's own processes
        except OSError:
            pass
        from kvcli.store.device.shm import SharedArray
        child = os.fork()
        if child == 0:
            a = SharedArray((1024,), "float32")
            a.array[:] = 7
            print(a.name, os.getpid(), flush=True)
            time.sleep(120)
            os._exit(0)
        os.waitpid(child, 0)
        """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", textwrap.dedent(code)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        line = proc.stdout.readline().split()
        if not line:
            pytest.skip(f"cannot make a PID namespace here: {proc.stderr.read().strip()[:200]}")
        name, inner_pid = line[0], int(line[1])
        if alive(inner_pid):
            pytest.skip(f"pid {inner_pid} of the namespace is also a pid here")
        assert name not in sweep_orphans()
        assert name in leftover_segments()
        from kvcli.store.device.shm import attach

        assert attach(name, (1024,), "<f4")[0] == 7.0  # intact
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    deadline = time.monotonic() + 10
    while name in leftover_segments() and time.monotonic() < deadline:  # now dead: its lock went with it
        sweep_orphans()
        time.sleep(0.05)
    assert name not in leftover_segments()


def test_a_store_holds_its_liveness_token_and_drops_it_at_exit() -> None:
    code = """
        import os
        from kvcli.store.device.shm import SharedArray, SHM_DIR
        a = SharedArray((8,), "float32")
        key = a.name.rsplit("_", 1)[0]
        print(key, os.path.exists(os.path.join(SHM_DIR, key + ".live")), flush=True)
        a.free()
        """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    key, existed = done.stdout.split()
    assert existed == "True" and not os.path.exists(os.path.join(SHM_DIR, key + ".live"))


def test_segments_are_private_to_their_user() -> None:
    array = SharedArray((8,), np.float32)
    try:
        info = os.stat(os.path.join(SHM_DIR, array.name))
        assert (info.st_mode & 0o777, info.st_uid) == (0o600, os.geteuid())
    finally:
        array.free()
