"""Other local users and the home (issue 20 items 2 and 4, and the read-only home): the home
and session folders are private (0700, files 0600), a home another user made first or that
others may write is refused, never adopted, an empty HOME never puts sessions under '/',
and the read-only commands work on a read-only home."""

from __future__ import annotations

import json
import os
import pickle
import pwd
import shutil
import signal
import socket
import stat
import struct
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from kvcli.errors import ConfigError, UnsafePathError
from kvcli.session import Session, default_home
from tests.other_user import as_user, give_to, other_uid, reachable_folder
from tests.runner import run_kvcli

N = 100_000


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)  # the usual umask, under which the old code made 0755 / 0644
    try:
        yield
    finally:
        os.umask(old)


def test_a_new_home_and_its_session_are_private(tmp_path: Path, umask_022: None) -> None:
    home = tmp_path / "new" / "home"
    with Session("s", home) as session:
        session.init(["w", "b"], [np.zeros(4, np.float32), np.zeros(2 << 20, np.float32)])
        session.push(["b"], [np.ones(2 << 20, np.float32)])  # a big value: the spare-file path too
    folders = [home, home / "sessions", home / "sessions" / "s", home / "sessions" / "s" / "data"]
    assert [oct(mode(p)) for p in folders] == ["0o700"] * 4
    with Session("c", home, store_type="device", store_options={"num_devices": 2}) as session:
        session.init(["g"], [np.zeros(8, np.float32)])
        session.set_compression("2bit")
        session.set_updater("sgd:lr=0.1,momentum=0.9")
        session.push(["g"], [[np.full(8, 0.7, np.float32)] * 2])  # residuals and optimizer state
    files = [p for p in (home / "sessions").rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"session.db", ".lock"} and len(files) >= 8
    assert sum(p.suffix == ".npz" for p in files) == 2  # the residuals and the optimizer state
    assert {p.name: oct(mode(p)) for p in files} == {p.name: "0o600" for p in files}


def test_export_and_import_write_private_files(tmp_path: Path, umask_022: None) -> None:
    with Session("s", tmp_path / "h") as session:
        session.init(["w"], [np.arange(4, dtype=np.float32)])
        out = session.export(tmp_path / "out")
    with Session("t", tmp_path / "h") as other:
        other.import_(out)
        assert other.pull(["w"])[0][0].tolist() == [0, 1, 2, 3]
    written = [p for p in [*out.rglob("*"), *(tmp_path / "h" / "sessions" / "t").rglob("*")] if p.is_file()]
    assert written and {oct(mode(p)) for p in written} == {"0o600"}


def test_a_home_others_may_write_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    home = tmp_path / "shared"
    home.mkdir()
    os.chmod(home, 0o777)  # a folder made open to all (a shared project folder)
    with pytest.raises(UnsafePathError, match=r"refuses the home folder .*shared: others may write it "
                                              r"\(mode drwxrwxrwx\): run chmod go-w"):
        Session("s", home).init(["w"], [np.zeros(2, np.float32)])
    assert list(home.iterdir()) == []
    done = run_kvcli("init", "w", "zeros(2)", home=home)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "others may write it" in done.stderr
    assert list(home.iterdir()) == []


def test_a_session_folder_of_another_user_is_refused_for_reads_too(tmp_path: Path) -> None:
    uid = other_uid()
    with Session("s", tmp_path / "h") as session:
        session.init(["w"], [np.ones(3, np.float32)])
    give_to(uid, tmp_path / "h" / "sessions" / "s")
    for command in (lambda s: s.pull(["w"]), lambda s: s.push(["w"], [np.ones(3, np.float32)]), Session.keys):
        with pytest.raises(UnsafePathError, match=rf"session folder .*: it belongs to uid {uid}, not to you"):
            command(Session("s", tmp_path / "h"))
    rows = __import__("kvcli.session", fromlist=["list_sessions"]).list_sessions(tmp_path / "h")
    assert len(rows) == 1 and "belongs to uid" in rows[0]["error"]  # listed as a problem, not read


def test_a_home_that_is_another_users_symlink_is_refused(reachable: Path) -> None:
    uid = other_uid()
    mine = reachable / "mine"
    with Session("s", mine) as session:
        session.init(["w"], [np.zeros(2, np.float32)])
    link = reachable / "kv"
    link.symlink_to(mine)  # pointing at a folder of mine today; its owner may change that tomorrow
    os.chown(link, uid, uid, follow_symlinks=False)
    with pytest.raises(UnsafePathError, match=rf"home folder {link}: it is a symbolic link of uid {uid}"):
        Session("s", link).pull(["w"])
    os.chown(link, os.geteuid(), os.getegid(), follow_symlinks=False)  # my own link to my own home: fine
    assert Session("s", link).pull(["w"])[0][0].tolist() == [0.0, 0.0]


class Pwn:
    """A pickle that makes a folder when it is loaded: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.mkdir, (self.marker,))


def _impostor(path: str, payload: bytes, report: str) -> None:
    """As the other user: listen where older kvcli looked for device 0; answer a pickle."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o777)
    server.listen(1)
    server.settimeout(30)
    try:
        client, _ = server.accept()
    except socket.timeout:
        return
    Path(report).write_text("asked")
    client.sendall(struct.pack("!i", len(payload)) + payload)  # multiprocessing's framing
    time.sleep(2)


def test_a_home_another_user_made_first_is_refused_and_its_socket_never_read(reachable: Path,
                                                                           umask_022: None) -> None:
    """Issue 20 item 2: another user makes KVCLI_HOME first, open to all, with an impostor
    device socket; the victim's push used to connect and unpickle its answer (code ran as
    the victim). Now the home is refused before anything is read."""
    uid = other_uid()
    shared = reachable
    if True:
        home = shared / "kv"
        with Session("s", home, store_type="device", store_options={"num_devices": 2}) as session:
            session.init(["w"], [np.zeros(N, np.float32)])
        (home / "sessions" / "s" / ".devices").mkdir()
        give_to(uid, home, mode_dirs=0o777, mode_files=0o666)  # "their" home, open to everyone
        marker, report = shared / "pwned", home / "impostor-was-asked"
        payload = pickle.dumps((0, "ok", Pwn(marker)))
        socket_path = str(home / "sessions" / "s" / ".devices" / "device-0.sock")
        child = os.fork()
        if child == 0:
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                _impostor(socket_path, payload, str(report))
            finally:
                os._exit(0)
        try:
            deadline = time.monotonic() + 10
            while not os.path.exists(socket_path) and time.monotonic() < deadline:
                time.sleep(0.01)
            with pytest.raises(UnsafePathError, match=rf"home folder {home}: it belongs to uid {uid}, not to you"):
                with Session("s", home) as victim:
                    victim.push(["w"], [[np.ones(N, np.float32)] * 3])
            assert not marker.exists()  # no code of theirs ran here
            assert not report.exists()  # and their socket was never even connected to
        finally:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)


def test_an_empty_HOME_never_puts_sessions_under_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KVCLI_HOME")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", "")
    expected = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".local" / "share" / "kvcli"
    if expected.parent.parent.parent == Path("/"):
        pytest.skip("this user's account has '/' as its home")
    assert default_home() == expected  # the platform's rule (the user database), as for an unset HOME
    monkeypatch.delenv("HOME")
    assert default_home() == expected
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # the XDG rule: a relative path is ignored
    assert default_home() == expected
    import kvcli.osutil

    monkeypatch.setattr(kvcli.osutil, "_password_home", lambda: "/")  # an account whose home is '/'
    with pytest.raises(ConfigError, match=r"cannot tell your home folder \(HOME is unset, the user database gives "
                                          r"'/'\), and kvcli will not keep sessions under '/': set HOME, or "
                                          r"KVCLI_HOME"):
        default_home()
    monkeypatch.setenv("KVCLI_HOME", "~/kv")  # '~' is not '/' either
    monkeypatch.setenv("HOME", "")
    with pytest.raises(ConfigError, match="cannot tell your home folder"):
        default_home()


def test_the_cli_with_an_empty_HOME_uses_the_users_home(tmp_path: Path) -> None:
    expected = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".local" / "share" / "kvcli"
    if expected.parent.parent.parent == Path("/"):
        pytest.skip("this user's account has '/' as its home")
    env = {k: v for k, v in os.environ.items() if k not in ("KVCLI_HOME", "XDG_DATA_HOME")}
    env["HOME"] = ""
    done = subprocess.run([str(Path(os.sys.executable).parent / "kvcli"), "--json", "sessions"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["home"] == str(expected)


def _read_everything(home: str) -> dict[str, Any]:
    with Session("s", home) as session:
        return {"pull": session.pull(["w"])[0][0].tolist(), "keys": session.keys(),
                "show": session.describe()["keys"][0]["shape"]}


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A folder every user can reach (pytest's own temporary folders are root's, 0700)."""
    with reachable_folder() as folder:
        yield folder


@pytest.mark.parametrize("lock_file", ["present", "missing"])
def test_read_only_commands_work_on_a_read_only_home(reachable: Path, lock_file: str) -> None:
    home = reachable / "h"
    with Session("s", home) as session:
        session.init(["w"], [np.arange(3, dtype=np.float32)])
    if lock_file == "missing":
        (home / "sessions" / "s" / ".lock").unlink()
    if os.geteuid() == 0:  # root ignores permission bits: read it as its owner, another uid
        uid = other_uid()
        give_to(uid, home)
    else:  # pragma: no cover - run as a normal user
        uid = os.geteuid()
    for path in [home, *home.rglob("*")]:
        if path.is_dir():
            os.chmod(path, 0o500)  # read-only folders: no lock file can be created or opened for writing
    try:
        got = as_user(uid, _read_everything, str(home)) if os.geteuid() == 0 else _read_everything(str(home))
        assert got == {"pull": [0.0, 1.0, 2.0], "keys": ["w"], "show": [3]}
    finally:
        for path in [home, *home.rglob("*")]:
            if path.is_dir():
                os.chmod(path, 0o700)


def test_the_cli_reads_a_home_on_a_read_only_mount(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) to mount the home read-only")
    home = tmp_path / "h"
    assert run_kvcli("init", "w", "[1, 2, 3]", home=home).returncode == 0
    mount = f"mount --bind {home} {home} && mount -o remount,ro,bind {home}"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", mount], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot mount read-only here: {probe.stderr.decode().strip()}")
    from tests.runner import KVCLI, kvcli_env

    for command in (["pull", "w"], ["keys"], ["show"], ["sessions"]):
        done = subprocess.run(["unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh", str(KVCLI), *command],
                              capture_output=True, text=True, env=kvcli_env(home), timeout=60)
        assert done.returncode == 0, (command, done.stderr)
    assert "[1. 2. 3.]" in subprocess.run(
        ["unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh", str(KVCLI), "pull", "w"],
        capture_output=True, text=True, env=kvcli_env(home), timeout=60).stdout
    done = subprocess.run(["unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh", str(KVCLI), "push", "w", "[1,1,1]"],
                          capture_output=True, text=True, env=kvcli_env(home), timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.endswith(".lock: Read-only file system\n") and done.stderr.count("\n") == 1
