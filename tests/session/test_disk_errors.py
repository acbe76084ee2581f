"""Item 4 of issue 15: a full, read-only or failing disk gives one-line errors and leaves nothing behind.

The failures are injected into the one writer (``kvcli.arrays.npyio._write_array``, called by
:func:`kvcli.arrays.npyio.write_file`) after half the data is on disk, the way a filling disk
fails; ``tests/stress/test_disk_full.py`` does the same on a real 1 MiB tmpfs (as root).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest
import kvcli.arrays.npyio as npy
from kvcli.errors import SessionError
from kvcli.session import DATA, Session
from kvcli.session.names import INLINE_BYTES


def failing_write(code: int):
    real = npy._write_array

    def write_array(handle, array, *args, **kwargs):
        handle.write(b"\x93NUMPY partial" + bytes(max(0, array.nbytes // 2)))
        handle.flush()
        raise OSError(code, os.strerror(code))

    return real, write_array


BIG = INLINE_BYTES // 4 + 1  # float32 elements of a value kept in a file


def data_files(session: Session) -> set[str]:
    return set(os.listdir(session.path / DATA))


@pytest.mark.parametrize("code, words", [
    (errno.ENOSPC, "no space left on the device; it needs 4.0 MiB"),
    (errno.EDQUOT, "the disk quota is exceeded; it needs 4.0 MiB"),
    (errno.EROFS, "the file system is read-only"),
    (errno.EIO, "an input/output error"),
])
def test_failed_init_is_one_line_names_the_path_and_leaves_no_orphan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    with Session("s", tmp_path) as session:
        session.init(["small"], [np.ones(4, np.float32)])
        before = data_files(session)
        _, fake = failing_write(code)
        monkeypatch.setattr(npy, "_write_array", fake)
        with pytest.raises(SessionError) as caught:
            session.init(["big"], [np.ones(1 << 20, np.float32)])  # 4 MiB
        message = str(caught.value)
        assert "\n" not in message and words in message, message
        assert f"cannot write {session.path / DATA}" in message
        assert data_files(session) == before  # the half-written 2 MiB file is gone
        monkeypatch.undo()
        assert session.keys() == ["small"]
        session.push(["small"], [np.full(4, 3, np.float32)])  # and the session works on
        assert session.pull(["small"])[0][0].tolist() == [3, 3, 3, 3]


def test_failed_push_of_several_keys_removes_every_file_it_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Session("s", tmp_path) as session:
        session.init([1, 2, 3], [np.zeros(BIG, np.float32)] * 3)  # values in files
        before = data_files(session)
        real, fake = failing_write(errno.ENOSPC)
        calls = []

        def second_fails(handle, array, *args, **kwargs):
            calls.append(1)
            if len(calls) < 2:
                return real(handle, array, *args, **kwargs)
            return fake(handle, array, *args, **kwargs)

        monkeypatch.setattr(npy, "_write_array", second_fails)
        session.set_updater("sum")
        with pytest.raises(SessionError, match="no space left"):
            session.push([1, 2, 3], [np.ones(BIG, np.float32)] * 3)
        assert data_files(session) == before
        monkeypatch.undo()
        assert [session.pull([k])[0][0].tolist() for k in (1, 2, 3)] == [[0.0] * BIG] * 3


def test_failed_manifest_write_removes_the_new_value_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    import kvcli.session.db as module  # the commit's rows go through upsert_keys

    with Session("s", tmp_path) as session:
        session.init(["k"], [np.zeros(8, np.float32)])
        before = data_files(session)

        def no_space_for_the_rows(*args):
            raise sqlite3.OperationalError("database or disk is full")  # what SQLite says on ENOSPC

        monkeypatch.setattr(module, "upsert_keys", no_space_for_the_rows)
        with pytest.raises(SessionError, match=r"cannot write .*session\.db: no space left"):
            session.init(["k2"], [np.ones(8, np.float32)])
        monkeypatch.undo()
        assert data_files(session) == before and session.keys() == ["k"]
