"""Issue 22: the session database is read a row at a time, and each row is checked.

A command reads the rows of the keys it touches (its cost does not grow with the session),
yet a row is still checked field by field, against the session's key kind, and against
every other row and the optimizer state for a shared file (a push would overwrite another
key's value). Damage is reported by the commands that read the damaged row.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import SessionError
from kvcli.session import Session
from kvcli.session.db import DB
from kvcli.session.keytable import KeyTable
from kvcli.session.names import INLINE_BYTES


BIG = INLINE_BYTES // 4 + 1  # float32 elements of a value kept in a file


def make(home: Path, keys: int = 3, size: int = 4) -> Path:
    with Session("s", home) as session:
        session.init([f"k{i}" for i in range(keys)], [np.full(size, i, np.float32) for i in range(keys)])
    return home / "sessions" / "s"


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (folder / "data").iterdir()}


def edit(folder: Path, sql: str, *args: object) -> None:
    conn = sqlite3.connect(folder / DB)
    with conn:
        conn.execute(sql, args)
    conn.close()


def test_a_push_reads_only_the_rows_it_touches(tmp_path: Path) -> None:
    make(tmp_path, 500)
    with Session("s", tmp_path) as session:
        session.push(["k7"], [np.ones(4, np.float32)])
        table = session._committer.manifest.keys  # type: ignore[union-attr]
        assert isinstance(table, KeyTable) and not table._full
        assert set(table.original) == {"k7"}
        assert session.pull(["k7"])[0][0].tolist() == [1.0] * 4
    with Session("s", tmp_path) as session:
        assert len(session.keys()) == 500 and session.pull(["k8"])[0][0].tolist() == [8.0] * 4


@pytest.mark.parametrize("column", ["file", "spare"])
def test_a_row_naming_another_keys_file_is_refused(tmp_path: Path, column: str) -> None:
    folder = make(tmp_path, size=BIG)  # values in files
    conn = sqlite3.connect(folder / DB)
    other = conn.execute("SELECT file FROM keys WHERE key = 'k1'").fetchone()[0]
    conn.close()
    edit(folder, f"UPDATE keys SET {column} = ? WHERE key = 'k0'", other)
    before = files(folder)
    for key in ("k0", "k1"):
        with Session("s", tmp_path) as session, pytest.raises(SessionError, match="each file has one use"):
            session.push([key], [np.ones(BIG, np.float32)])
    assert files(folder) == before


@pytest.mark.parametrize(("sql", "message"), [
    ("UPDATE keys SET key = 5 WHERE key = 'k0'", "key_kind"),
    ("UPDATE keys SET shape = '[[3]]' WHERE key = 'k0'", "malformed shape"),
    ("UPDATE keys SET dtype = 'object' WHERE key = 'k0'", "dtype"),
    ("UPDATE keys SET version = -1 WHERE key = 'k0'", "version"),
    ("UPDATE meta SET value = '\"yesterday\"' WHERE name = 'created'", "created"),
    # a value held in its row: its bytes must be bytes, as many as its shape and dtype say
    ("UPDATE keys SET data = x'0000' WHERE key = 'k0'", "holds 2 bytes of value, not the 16"),
    ("UPDATE keys SET data = 'abcdefghijklmnop' WHERE key = 'k0'", "holds its value as a str"),
    ("UPDATE keys SET spare = file WHERE key = 'k0'", "in its row and names a spare file"),
])
def test_a_damaged_row_is_one_line_naming_the_database(tmp_path: Path, sql: str, message: str) -> None:
    folder = make(tmp_path)
    edit(folder, sql)
    with Session("s", tmp_path) as session, pytest.raises(SessionError) as caught:
        session.describe()
    text = str(caught.value)
    assert "\n" not in text and "is corrupted" in text and str(folder / DB) in text and message in text, text
    with Session("s", tmp_path) as session:
        session.reset()
        assert session.keys() == []
