"""Item 5 of issue 15: session files are regular files inside the session, never followed.

A spare ``.npy`` replaced by a symlink to a same-size file outside the session was
overwritten by the next push (the target then started with ``\\x93NUMPY``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import SessionError
from kvcli.session import DATA, RECYCLE_BYTES, Session
from kvcli.session.names import INLINE_BYTES
from kvcli.session.db import DB
from tests.session.legacy import read_manifest

N = RECYCLE_BYTES // 4  # float32 elements of a value big enough to keep a spare
SMALL_FILE = INLINE_BYTES // 4 + 1  # float32 elements of a value in a file that keeps no spare


def manifest_entry(session: Session, key) -> dict:
    data = read_manifest(session.path)
    return next(entry for entry in data["keys"] if entry["key"] == key)


def test_spare_replaced_by_a_symlink_is_never_written_through(tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session:
        session.init(["w"], [np.zeros(N, np.float32)])
        session.push(["w"], [np.ones(N, np.float32)])
        spare = manifest_entry(session, "w")["spare"]
        assert spare, "a big value keeps a spare"
        outside = tmp_path / "victim.bin"
        shutil.copyfile(session.path / DATA / spare, outside)  # same size as the spare
        outside.write_bytes(b"precious" + bytes(outside.stat().st_size - 8))
        (session.path / DATA / spare).unlink()
        (session.path / DATA / spare).symlink_to(outside)

        session.push(["w"], [np.full(N, 2, np.float32)])

        assert outside.read_bytes()[:8] == b"precious"  # was b"\x93NUMPY\x01\x00"
        assert session.pull(["w"])[0][0][:3].tolist() == [2, 2, 2]
        names = os.listdir(session.path / DATA)
        assert not any((session.path / DATA / n).is_symlink() for n in names)  # the link itself is collected


def test_value_file_replaced_by_a_symlink_is_refused(tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session:
        session.init(["w"], [np.arange(SMALL_FILE, dtype=np.float32)])  # a value file, no spare
        file = session.path / DATA / manifest_entry(session, "w")["file"]
        outside = tmp_path / "elsewhere.npy"
        shutil.move(file, outside)
        file.symlink_to(outside)
        session.close()
        with pytest.raises(SessionError, match="symbolic link"):
            session.pull(["w"])
        with pytest.raises(SessionError, match="symbolic link"):
            session.push(["w"], [np.zeros(SMALL_FILE, np.float32)])  # a replacing push checks the file first


def test_manifest_and_data_folder_symlinks_are_refused(tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session:
        session.init(["w"], [np.arange(4, dtype=np.float32)])
    manifest = session.path / DB
    moved = tmp_path / DB
    shutil.move(manifest, moved)
    manifest.symlink_to(moved)
    with pytest.raises(SessionError, match="symbolic link"):
        Session("s", tmp_path / "home").keys()
    manifest.unlink()
    shutil.move(moved, manifest)

    data = session.path / DATA
    shutil.move(data, tmp_path / "data")
    data.symlink_to(tmp_path / "data")
    with pytest.raises(SessionError, match="data folder is a symbolic link"):
        Session("s", tmp_path / "home").pull(["w"])


@pytest.mark.parametrize("name", [f"{DB}-wal", f"{DB}-shm"])
def test_database_work_files_as_symlinks_are_refused(tmp_path: Path, name: str) -> None:
    """SQLite's write-ahead log and index beside the database: a symlink planted there
    (pointing outside) is refused, never written through."""
    with Session("s", tmp_path / "home") as session:
        session.init(["w"], [np.arange(4, dtype=np.float32)])
    outside = tmp_path / "target"
    outside.write_text("keep")
    for suffix in ("-wal", "-shm"):
        (session.path / f"{DB}{suffix}").unlink(missing_ok=True)
    (session.path / name).symlink_to(outside)
    with pytest.raises(SessionError, match="symbolic link"):
        Session("s", tmp_path / "home").push(["w"], [np.ones(4, np.float32)])
    assert outside.read_text() == "keep"


def test_optimizer_state_replaced_by_a_symlink_is_refused(tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session:
        session.init(["w"], [np.ones(4, np.float32)])
        session.set_updater("sgd:lr=0.1,momentum=0.9")
        session.push(["w"], [np.ones(4, np.float32)])
        state = session.path / DATA / read_manifest(session.path)["optimizer_state"]
    outside = tmp_path / "state.npz"
    shutil.move(state, outside)
    state.symlink_to(outside)
    with Session("s", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="optimizer state file is a symbolic link"):
            session.push(["w"], [np.ones(4, np.float32)])
