"""kvcli.osutil: the one atomic write (private by default), the one answer to "is this pid
alive", and resource limits (ulimit -n / -v) as one correct line (issue 20 low items, issue
24 item 5)."""

from __future__ import annotations

import errno
import os
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvcli.osutil import PLAIN_FILE, atomic_write, pid_alive, resource_problem
from tests.other_user import other_uid
from tests.runner import KVCLI, kvcli_env


def test_atomic_write_is_private_by_default_and_plain_when_asked(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a", b"one")
        atomic_write(tmp_path / "b", lambda handle: handle.write(b"two"), mode=PLAIN_FILE)
    finally:
        os.umask(old)
    assert (tmp_path / "a").read_bytes() == b"one" and stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o600
    assert (tmp_path / "b").read_bytes() == b"two" and stat.S_IMODE((tmp_path / "b").stat().st_mode) == 0o644


def test_a_failed_atomic_write_keeps_the_old_file_and_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    atomic_write(target, b"old")

    def fail(handle: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, fail)
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]


def test_atomic_write_never_writes_through_a_planted_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    target = tmp_path / "record"
    target.symlink_to(victim)
    atomic_write(target, b"new")  # the link itself is replaced, not the file it points to
    assert victim.read_bytes() == b"keep" and not target.is_symlink() and target.read_bytes() == b"new"


def test_pid_alive_has_one_answer() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(0) and not pid_alive(-1)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # exited but not reaped: a zombie is not running
        with open(f"/proc/{child.pid}/stat") as handle:
            if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    assert not pid_alive(child.pid)
    child.wait()
    assert not pid_alive(child.pid)  # gone


def test_pid_alive_is_false_for_another_users_process() -> None:
    uid = other_uid()
    child = os.fork()
    if child == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        time.sleep(30)
        os._exit(0)
    try:
        deadline = time.monotonic() + 10
        while os.stat(f"/proc/{child}").st_uid != uid and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not pid_alive(child)  # a reused pid of someone else is never "our device" or "our cluster"
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


def test_resource_problems_are_named_with_their_limit() -> None:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    text = resource_problem(OSError(errno.EMFILE, "Too many open files"))
    assert text is not None and text.startswith("too many open files") and "ulimit -n" in text
    assert (str(soft) in text) == (soft != resource.RLIM_INFINITY)
    memory = resource_problem(MemoryError("Unable to allocate 1.0 GiB"))
    assert memory is not None and memory.startswith("out of memory (Unable to allocate 1.0 GiB)")
    assert "shared memory" not in memory
    assert resource_problem(OSError(errno.ENOENT, "No such file")) is None


def limited(kind: int, value: int):  # type: ignore[no-untyped-def]
    def apply() -> None:
        resource.setrlimit(kind, (value, resource.getrlimit(kind)[1]))

    return apply


def run_limited(home: Path, kind: int, value: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KVCLI), *args], capture_output=True, text=True, timeout=120,
                          env=kvcli_env(home, KVCLI_DEVICE_IDLE="0"), preexec_fn=limited(kind, value))


@pytest.mark.parametrize("files", [8, 12])
def test_ulimit_n_is_one_line_not_a_traceback(tmp_path: Path, files: int) -> None:
    device = ["--type", "device", "--num-devices", "2"]
    assert subprocess.run([str(KVCLI), *device, "init", "w", "zeros(100000)"], capture_output=True,
                          env=kvcli_env(tmp_path), timeout=60).returncode == 0
    done = run_limited(tmp_path, resource.RLIMIT_NOFILE, files, "push", "w", "ones(100000)", "ones(100000)",
                       "ones(100000)")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-600:]
    assert done.stderr.count("\n") == 1 and f"too many open files (this process may open {files}: ulimit -n)" \
        in done.stderr
    assert subprocess.run([str(KVCLI), "pull", "w"], capture_output=True, text=True, env=kvcli_env(tmp_path),
                          timeout=60).stdout.startswith("[0. 0. 0.")  # nothing changed


def test_ulimit_v_is_out_of_memory_not_shared_memory(tmp_path: Path) -> None:
    """A device store under ``ulimit -v``: mapping a segment fails with ENOMEM, which is not
    a full /dev/shm; and numpy's MemoryError is one line too."""
    device = ["--type", "device", "--num-devices", "2"]
    assert subprocess.run([str(KVCLI), *device, "init", "w", "zeros(50000000)"], capture_output=True,
                          env=kvcli_env(tmp_path), timeout=120).returncode == 0
    limit = 700 << 20
    for args in (["push", "w", "ones(50000000)", "ones(50000000)"], ["-s", "other", "init", "v", "zeros(134217728)"]):
        done = run_limited(tmp_path, resource.RLIMIT_AS, limit, *args)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-800:]
        assert done.stderr.count("\n") == 1 and "shared memory" not in done.stderr
        assert "out of memory" in done.stderr and "(ulimit -v 716800)" in done.stderr
