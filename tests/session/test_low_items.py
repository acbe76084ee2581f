"""Issue 32 item 6 (the low items outside the viewer): a push past the largest version is
refused rather than corrupting the session; a planted ``session.db-journal`` symlink is
named and ``reset`` really removes it; an export folder of another user is refused; an
emptied ``session.db`` is shown as damaged and never taken for a new session; a bad
``KVCLI_DOT`` or ``KVCLI_TRUST_KEY`` is one line, never a traceback or a hang."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from kvcli.errors import SessionError, UnsafePathError
from kvcli.session import Session
from kvcli.session.db import DB
from tests.other_user import as_user, other_uid, reachable_folder
from tests.runner import run_kvcli

pytestmark = pytest.mark.timeout(120)
LAST = (1 << 63) - 1
SAMPLE = Path(__file__).resolve().parents[2] / "sample_graphs" / "lenet.json"


def edit(home: Path, sql: str, *args: object) -> None:
    conn = sqlite3.connect(home / "sessions" / "default" / DB)
    with conn:
        conn.execute(sql, args)
    conn.close()


def one_line(done: object) -> str:
    stderr = str(done.stderr)  # type: ignore[attr-defined]
    assert done.returncode == 1, stderr  # type: ignore[attr-defined]
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    return stderr


# ---------------------------------------------------------------------- counters
def test_a_push_past_the_largest_version_is_refused_and_the_session_stays_readable(tmp_path: Path) -> None:
    assert run_kvcli("init", "w", "[1, 2]", home=tmp_path).returncode == 0
    edit(tmp_path, "UPDATE keys SET version = ? WHERE key = 'w'", LAST)
    stderr = one_line(run_kvcli("push", "w", "[3, 4]", home=tmp_path))  # the old push was acknowledged ...
    assert f"key 'w' has had {LAST:,} writes, the most a session counts; nothing was changed" in stderr
    pulled = run_kvcli("pull", "w", home=tmp_path)  # ... and the session then read as corrupted
    assert pulled.returncode == 0 and "[1. 2.]" in pulled.stdout
    assert run_kvcli("delete", "w", "--yes", home=tmp_path).returncode == 0
    assert run_kvcli("init", "w", "[5, 6]", home=tmp_path).returncode == 0  # its count starts over
    assert run_kvcli("push", "w", "[7, 8]", home=tmp_path).returncode == 0


def test_a_commit_past_the_largest_generation_is_refused_and_reset_starts_over(tmp_path: Path) -> None:
    with Session("default", tmp_path) as session:
        session.init(["w"], [np.ones(2, np.float32)])
    edit(tmp_path, "UPDATE meta SET value = ? WHERE name = 'generation'", str(LAST))
    with Session("default", tmp_path) as session:
        with pytest.raises(SessionError, match=f"has had {LAST:,} commits, the most it counts; nothing was changed"):
            session.push(["w"], [np.zeros(2, np.float32)])
    with Session("default", tmp_path) as session:
        assert session.pull(["w"])[0][0].tolist() == [1.0, 1.0]
        session.reset()
        session.init(["w"], [np.zeros(2, np.float32)])
        assert session.describe()["generation"] == 1


# ---------------------------------------------------------------------- session.db-journal
def test_a_planted_journal_symlink_is_named_and_reset_removes_it(tmp_path: Path) -> None:
    assert run_kvcli("init", "w", "[1, 2]", home=tmp_path).returncode == 0
    target = tmp_path / "elsewhere"
    target.write_text("not a journal")
    link = tmp_path / "sessions" / "default" / f"{DB}-journal"
    link.symlink_to(target)
    stderr = one_line(run_kvcli("pull", "w", home=tmp_path))
    assert f"session file {link} is corrupted (it is a symbolic link, not a file of the session)" in stderr
    assert run_kvcli("reset", "--yes", home=tmp_path).returncode == 0
    assert not os.path.lexists(link) and target.read_text() == "not a journal"  # the old reset left the link
    assert run_kvcli("init", "w", "[3]", home=tmp_path).returncode == 0
    assert "[3.]" in run_kvcli("pull", "w", home=tmp_path).stdout


# ---------------------------------------------------------------------- an emptied session.db
def test_an_emptied_database_is_listed_as_damaged_and_never_taken_for_a_new_session(tmp_path: Path) -> None:
    assert run_kvcli("init", "w", "ones(5000)", home=tmp_path).returncode == 0
    folder = tmp_path / "sessions" / "default"
    files = sorted(os.listdir(folder / "data"))
    (folder / DB).write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        (folder / f"{DB}{suffix}").unlink(missing_ok=True)
    pushed = one_line(run_kvcli("push", "w", "ones(5000)", home=tmp_path))
    assert "is corrupted (it is empty: it holds none of the session's tables, so its keys are lost)" in pushed
    assert (folder / DB).exists() and sorted(os.listdir(folder / "data")) == files  # the old push removed the database
    listed = run_kvcli("sessions", home=tmp_path)
    assert listed.returncode == 0 and "default" in listed.stdout and "damaged" in listed.stdout  # the old one hid it
    one_line(run_kvcli("init", "v", "[1]", home=tmp_path))  # not a new session either
    assert sorted(os.listdir(folder / "data")) == files
    assert run_kvcli("reset", "--yes", home=tmp_path).returncode == 0
    assert run_kvcli("init", "w", "[1]", home=tmp_path).returncode == 0


# ---------------------------------------------------------------------- export folders
@pytest.fixture
def reachable() -> Iterator[Path]:
    with reachable_folder("kvcli-export-", 0o1777) as folder:  # as /tmp: anyone may make a folder in it
        yield folder


def _make_empty_folder(path: str) -> None:
    os.mkdir(path)
    os.chmod(path, 0o755)  # theirs: they may swap what is put in it


def test_an_empty_export_folder_of_another_user_is_refused(tmp_path: Path, reachable: Path) -> None:
    uid = other_uid()
    theirs = reachable / "backup"
    as_user(uid, _make_empty_folder, str(theirs))
    with Session("s", tmp_path) as session:
        session.init(["w"], [np.ones(3, np.float32)])
        with pytest.raises(UnsafePathError, match=rf"export folder {theirs}: it belongs to uid {uid}, not to you"):
            session.export(theirs)
        assert list(theirs.iterdir()) == []  # the old export filled it
        mine = session.export(tmp_path / "new" / "backup")
    assert stat.S_IMODE(os.stat(mine).st_mode) == 0o700 and stat.S_IMODE(os.stat(mine / "data").st_mode) == 0o700


# ---------------------------------------------------------------------- variables
def test_a_kvcli_dot_that_is_not_a_program_is_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    plain = tmp_path / "plain"
    plain.write_text("not a program")
    for value, problem in ((tmp_path, "is a folder"), (fifo, "is not an executable program"),
                           (plain, "is not an executable program"), ("/dev/zero", "is not an executable program")):
        done = run_kvcli("viz", str(SAMPLE), "-o", str(tmp_path / "out.svg"), env={"KVCLI_DOT": str(value)},
                         timeout=60)
        stderr = one_line(done)  # the old viz printed a PermissionError traceback
        assert "KVCLI_DOT=" in stderr and f"' {problem}: set it to a valid value or unset it" in stderr
        assert not (tmp_path / "out.svg").exists()


def test_a_kvcli_trust_key_that_is_not_a_file_is_one_line_and_never_waits(tmp_path: Path) -> None:
    updater = tmp_path / "upd.py"
    updater.write_text("def f(key, pushed, stored):\n    stored += pushed\n")
    assert run_kvcli("init", "w", "[1]", home=tmp_path / "h").returncode == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for value, problem in ((fifo, "is not a private file of this user (mode prw"),  # the old one waited for ever
                           (tmp_path, "cannot read the updater trust key"),  # a traceback
                           ("/proc/self/mem", "cannot read the updater trust key /proc/self/mem")):  # a traceback
        done = run_kvcli("set-updater", f"python:{updater}:f", home=tmp_path / "h",
                         env={"KVCLI_TRUST_KEY": str(value)}, timeout=20)
        assert problem in one_line(done)
