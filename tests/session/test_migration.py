"""Issue 22: sessions written before SQLite (``manifest.json``) are migrated on first write.

``tests/data/legacy_sessions`` was written by the last release with a JSON manifest
(``tests/data/make_legacy_session.py``). Read-only commands read it as it is (a read-only
home never migrates); the first writing command builds ``session.db`` in a temporary file
and renames it into place, and a kill at any point of that leaves a session that loads.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kvcli.session import MANIFEST, Session, list_sessions
from kvcli.session.db import DB

LEGACY = Path(__file__).parents[1] / "data" / "legacy_sessions"
EXPECTED = json.loads((LEGACY.parent / "legacy_sessions.json").read_text())


def private_copy(recorded: Path, home: Path) -> Path:
    """A private copy of a recorded home (git keeps no modes: 0700 folders, 0600 files)."""
    shutil.copytree(recorded, home)
    for path in [home, *home.rglob("*")]:
        path.chmod(0o700 if path.is_dir() else 0o600)
    return home


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A private copy of the home written by the kvcli that kept a manifest.json."""
    return private_copy(LEGACY, tmp_path / "home")


def values(session: Session) -> dict[str, list]:
    return {str(key): session.pull([key])[0][0].tolist() for key in session.keys()}


def versions(folder: Path) -> dict[str, int]:
    return {str(e["key"]): e["version"] for e in json.loads((folder / MANIFEST).read_text())["keys"]}


def test_read_only_commands_read_the_old_format_without_migrating(home: Path) -> None:
    folder = home / "sessions" / "model"
    before = (folder / MANIFEST).read_bytes()
    with Session("model", home) as session:
        assert values(session) == EXPECTED["model"]
        shown = session.describe()
    assert shown["updater"].startswith("sgd") and shown["optimizer_state"] is True
    assert [k["key"] for k in shown["keys"]] == ["fc1.weight", "fc1.bias", "out"]
    assert (folder / MANIFEST).read_bytes() == before and not (folder / DB).exists()
    rows = {row["session"]: row for row in list_sessions(home)}
    assert rows["model"]["keys"] == 3 and rows["ints"]["keys"] == 2


def test_first_write_migrates_everything(home: Path) -> None:
    model, ints = home / "sessions" / "model", home / "sessions" / "ints"
    old_versions = {"model": versions(model), "ints": versions(ints)}
    with Session("model", home) as session:
        # momentum state came along: 0.9 * (-1) - 0.5 * 1 = -1.4 added to -1 (without it: -1.5)
        session.push(["fc1.bias"], [np.ones(3, np.float32)])
        assert session.pull(["fc1.bias"])[0][0].tolist() == pytest.approx([-2.4] * 3)
        assert {e.key: e.version for e in session.entries()} == {
            **old_versions["model"], "fc1.bias": old_versions["model"]["fc1.bias"] + 1}
    with Session("ints", home) as session:
        session.init([11], [np.ones(1, np.int64)])
        assert session.keys() == [3, 7, 11]  # the order keys were first initialised
        assert {k: v for k, v in values(session).items() if k != "11"} == EXPECTED["ints"]
        assert {str(e.key): e.version for e in session.entries() if e.key != 11} == old_versions["ints"]
    for folder in (model, ints):
        assert (folder / DB).is_file() and not (folder / MANIFEST).exists()
        assert oct((folder / DB).stat().st_mode & 0o777) == "0o600"
    with Session("model", home) as session:  # a new object reads the database
        assert {k: v for k, v in values(session).items() if k != "fc1.bias"} == {
            k: v for k, v in EXPECTED["model"].items() if k != "fc1.bias"}


MIGRATE = """
import sys, numpy as np
from kvcli.session import Session
with Session("ints", sys.argv[1]) as s:
    s.push([3], [np.full(4, 5, np.int32)])
"""


@pytest.mark.parametrize(("point", "migrated"), [("before-migration", False), ("after-migration", True),
                                                  ("after-data", True), ("after-manifest", True)])
def test_a_kill_during_the_migration_leaves_a_session_that_loads(home: Path, point: str, migrated: bool) -> None:
    folder = home / "sessions" / "ints"
    env = dict(os.environ, KVCLI_TEST_CRASH_POINT=point)
    proc = subprocess.run([sys.executable, "-c", MIGRATE, str(home)], env=env, capture_output=True)
    assert proc.returncode == -9, proc.stderr
    assert (folder / DB).exists() == migrated
    with Session("ints", home) as session:
        expected = dict(EXPECTED["ints"])
        if point == "after-manifest":
            expected["3"] = [5] * 4
        assert values(session) == expected
        session.push([3], [np.full(4, 6, np.int32)])  # migrates if needed, collects leftovers
        assert session.pull([3])[0][0].tolist() == [6] * 4
        referenced = {name for e in session.entries() for name in e.files_row()[:3] if name}
    assert not (folder / MANIFEST).exists() and (folder / DB).exists()
    assert set(os.listdir(folder / "data")) == referenced
    assert sorted(os.listdir(folder)) == sorted(n for n in (DB, f"{DB}-wal", f"{DB}-shm", ".lock", "data")
                                                if (folder / n).exists())


# ---------------------------------------------------------------------- session.db of before inline values
LEGACY_DB = Path(__file__).parents[1] / "data" / "legacy_db_sessions"
EXPECTED_DB = json.loads((LEGACY_DB.parent / "legacy_db_sessions.json").read_text())


@pytest.fixture
def db_home(tmp_path: Path) -> Path:
    """A private copy of the home written by the kvcli that kept every value in a file."""
    return private_copy(LEGACY_DB, tmp_path / "db-home")


def test_a_database_without_inline_values_is_read_and_its_small_values_move_inline_on_write(db_home: Path) -> None:
    """Issue 22 item 1: a session.db of the kvcli before inline values (no ``data`` column,
    every small value in a file) reads as it is; a write adds the column, and each key it
    writes moves into its row, its old file removed after the commit."""
    model = db_home / "sessions" / "model"
    files_before = sorted(os.listdir(model / "data"))
    with Session("model", db_home) as session:
        assert values(session) == EXPECTED_DB["model"]
        assert not any(entry.inline for entry in session.entries())
    assert sorted(os.listdir(model / "data")) == files_before
    # momentum state came along: 0.9 * (-1) - 0.5 * 1 = -1.4 added to -1 (without it: -1.5)
    with Session("model", db_home) as session:
        session.push(["fc1.bias"], [np.ones(3, np.float32)])
        assert session.pull(["fc1.bias"])[0][0].tolist() == pytest.approx([-2.4] * 3)
        inline = {entry.key: entry.inline for entry in session.entries()}
        assert inline == {"fc1.weight": False, "fc1.bias": True, "out": False}  # only the key written moved
    with Session("model", db_home) as session:  # a new process reads rows of both kinds
        expected = dict(EXPECTED_DB["model"], **{"fc1.bias": pytest.approx([-2.4] * 3)})
        assert values(session) == expected
        remaining = {entry.file for entry in session.entries() if not entry.inline}
    names = set(os.listdir(model / "data"))
    assert remaining <= names and len(names) == len(remaining) + 1  # + the optimizer state
    with Session("ints", db_home) as session:
        session.init([3], [np.full(4, 4, np.int32)])
        session.push([7], [np.full(2, 9, np.float16)])
        assert values(session) == {"3": [4] * 4, "7": [9.0, 9.0]}
        assert all(entry.inline for entry in session.entries())
    assert os.listdir(db_home / "sessions" / "ints" / "data") == []


@pytest.mark.parametrize("point", ["after-data", "before-manifest", "after-manifest"])
def test_a_kill_during_the_first_write_of_a_database_without_inline_values(db_home: Path, point: str) -> None:
    """The first write to an old database adds the ``data`` column and moves the written
    value into its row: a kill anywhere in it leaves the old value (its file) or the new one
    (its row), and the next write removes the file the rows no longer name."""
    folder = db_home / "sessions" / "ints"
    env = dict(os.environ, KVCLI_TEST_CRASH_POINT=point)
    proc = subprocess.run([sys.executable, "-c", MIGRATE, str(db_home)], env=env, capture_output=True)
    assert proc.returncode == -9, proc.stderr
    with Session("ints", db_home) as session:
        expected = dict(EXPECTED_DB["ints"])
        if point == "after-manifest":
            expected["3"] = [5] * 4
        assert values(session) == expected
        session.push([7], [np.full(2, 6, np.float16)])  # the next commit collects leftovers
        assert values(session)["7"] == [6.0, 6.0]
        named = {name for e in session.entries() for name in e.files_row()[:3] if name}
    assert set(os.listdir(folder / "data")) == named
