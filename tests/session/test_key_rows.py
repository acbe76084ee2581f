"""Issue 36: a key's database row and the code's KeyEntry are one form.

A row is read straight into a :class:`KeyEntry` (``KeyEntry.from_row``, every field checked)
and written straight from one (``KeyEntry.row``): no ``manifest.json``-shaped dictionary is
built in between. The JSON form is only for files whose format it is (an old session's
``manifest.json``, an export), and it is checked by the same per-field checks: a malformed
field gives the same one-line error in a row as in a JSON entry.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli.session.db as db_module
from kvcli.errors import SessionError
from kvcli.session import Session
from kvcli.session.db import DB, KEY_COLUMNS
from kvcli.session.manifest import KeyEntry
from kvcli.session.names import RECYCLE_BYTES

BIG = RECYCLE_BYTES // 4  # float32 elements of a value kept in a file, with a spare once pushed


def make(home: Path) -> Path:
    """k0, k2: values in their rows; k1: a value in a file, with a spare after its push."""
    with Session("s", home) as session:
        session.init(["k0", "k2"], [np.zeros(4, np.float32), np.arange(4, dtype=np.int64)])
        session.init(["k1"], [np.zeros(BIG, np.float32)])
        session.push(["k1"], [np.ones(BIG, np.float32)])
    return home / "sessions" / "s"


def rows(folder: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(folder / DB)
    try:
        return conn.execute(f"SELECT {', '.join(KEY_COLUMNS)} FROM keys ORDER BY pos").fetchall()
    finally:
        conn.close()


def test_a_row_is_read_into_a_key_entry_with_its_fields_and_written_back_as_the_same_row(tmp_path: Path) -> None:
    folder = make(tmp_path)
    stored = rows(folder)
    assert [row[0] for row in stored] == ["k0", "k2", "k1"]
    for row in stored:
        entry = KeyEntry.from_row(row, folder / DB)
        assert (entry.key, entry.file, entry.dtype, list(entry.shape), entry.version, entry.spare, entry.residual,
                entry.data) == (*row[:3], [BIG] if row[0] == "k1" else [4], *row[4:])
        assert entry.row() == row
    k1 = KeyEntry.from_row(stored[2], folder / DB)
    assert k1.version == 2 and k1.spare is not None and k1.data is None
    k2 = KeyEntry.from_row(stored[1], folder / DB)
    assert k2.value(folder / "data").tolist() == [0, 1, 2, 3]


def test_the_database_path_never_builds_the_json_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def json_form(*args: object, **kwargs: object) -> None:
        raise AssertionError("the database path built a manifest.json-shaped dictionary")

    monkeypatch.setattr(KeyEntry, "to_json", json_form)
    monkeypatch.setattr(KeyEntry, "from_json", json_form, raising=False)
    monkeypatch.setattr(db_module, "row_entry", json_form, raising=False)  # the old row -> dict step
    folder = make(tmp_path)
    with Session("s", tmp_path) as session:
        session.push(["k0"], [np.ones(4, np.float32)])
        session.push(["k1"], [np.full(BIG, 2, np.float32)])
        assert session.keys() == ["k0", "k2", "k1"]
        assert session.pull(["k0"])[0][0].tolist() == [1.0] * 4
        session.delete(["k2"])
        session.set_updater("sum")
    with Session("s", tmp_path) as session:
        assert session.keys() == ["k0", "k1"] and (session.pull(["k1"])[0][0] == 2.0).all()
        session.reset()
        assert session.keys() == []
    assert rows(folder) == []


_LOCAL = "keys are whole numbers (e.g. 3) or 1-128 letters, digits, '_', '.', ':', '-' (e.g. fc1.weight, arg:fc1_weight)"
_MOST = 9223372036854775807
#: damage to one row and the line every reader of that row gives (as before rows became
#: KeyEntry records directly: pinned from the dictionary-validating code)
DAMAGE = [
    ("file = 'x.npy' WHERE key = 'k0'", "key 'k0' names the file 'x.npy', which is not a session file name"),
    ("spare = 'abc' WHERE key = 'k1'", "key 'k1' names the file 'abc', which is not a session file name"),
    ("residual = '0123456789abcdef0123456789abcdef.npy' WHERE key = 'k0'",
     "key 'k0' names the residual file '0123456789abcdef0123456789abcdef.npy', which is not a session file name"),
    ("dtype = 'object' WHERE key = 'k0'", "key 'k0' has dtype 'object', which kvcli does not load"),
    ("dtype = 7 WHERE key = 'k0'", "key 'k0' has dtype '7', which kvcli does not load"),
    ("shape = '[[3]]' WHERE key = 'k0'", "key 'k0' has a malformed shape [[3]]"),
    ("shape = 'not json' WHERE key = 'k0'", "key 'k0' has a malformed shape"),
    ("shape = '[-1]' WHERE key = 'k0'", "key 'k0' has a malformed shape [-1]"),
    ("shape = '[4611686018427387903, 4611686018427387903]' WHERE key = 'k1'",
     "key 'k1' has an impossible size (shape [4611686018427387903, 4611686018427387903])"),
    ("shape = '[5]' WHERE key = 'k0'", "key 'k0' holds 16 bytes of value, not the 20 of shape [5] and dtype float32"),
    ("version = -1 WHERE key = 'k0'", f"key 'k0''s version must be a whole number from 0 to {_MOST}, not -1"),
    ("version = 1.5 WHERE key = 'k0'", f"key 'k0''s version must be a whole number from 0 to {_MOST}, not 1.5"),
    ("version = 'one' WHERE key = 'k0'", f"key 'k0''s version must be a whole number from 0 to {_MOST}, not 'one'"),
    ("data = x'0000' WHERE key = 'k0'", "key 'k0' holds 2 bytes of value, not the 16 of shape [4] and dtype float32"),
    ("data = 'abcdefghijklmnop' WHERE key = 'k0'", "key 'k0' holds its value as a str, not bytes"),
    ("spare = file WHERE key = 'k0'", "key 'k0' holds its value in its row and names a spare file"),
    ("key = 2.5 WHERE key = 'k0'", "a key is a float, not a whole number or a name"),
    ("key = x'00' WHERE key = 'k0'", "a key is a bytes, not a whole number or a name"),
    ("key = 'bad key!' WHERE key = 'k0'", f"a key entry is malformed (key 'bad key!' is not allowed: {_LOCAL})"),
]


@pytest.mark.parametrize(("damage", "line"), DAMAGE, ids=[damage.split(" WHERE")[0] for damage, _ in DAMAGE])
def test_a_malformed_field_in_a_row_gives_the_same_line_to_every_reader(tmp_path: Path, damage: str,
                                                                         line: str) -> None:
    folder = make(tmp_path)
    conn = sqlite3.connect(folder / DB)
    with conn:
        conn.execute(f"UPDATE keys SET {damage}")
    conn.close()
    details = []
    for read in ("every row", "one row"):
        with Session("s", tmp_path) as session, pytest.raises(SessionError) as caught:
            if read == "every row":
                session.keys()
            else:
                for key in ("k0", "k1", "k2"):
                    session.pull([key])
        assert "\n" not in str(caught.value) and str(folder / DB) in str(caught.value)
        details.append(caught.value.fields["detail"])
    assert details == [line, line]


@pytest.mark.parametrize(("damage", "line"), [case for case in DAMAGE if "'not json'" not in case[0]],
                         ids=[damage.split(" WHERE")[0] for damage, _ in DAMAGE if "'not json'" not in damage])
def test_a_json_entry_is_checked_by_the_same_field_checks(tmp_path: Path, damage: str, line: str) -> None:
    """The same fields as a manifest.json key object (an old session, an export) give the
    same line: one declaration of each field's check serves both forms."""
    from kvcli.errors import ManifestProblem

    folder = make(tmp_path)
    conn = sqlite3.connect(folder / DB)
    with conn:
        conn.execute(f"UPDATE keys SET {damage}")
    conn.close()
    manifest = db_module.load_raw(folder)  # each row as its JSON object, unchecked
    assert manifest is not None
    problems = []
    for raw in manifest["keys"]:
        try:
            KeyEntry.from_json(raw)
        except ManifestProblem as problem:
            problems.append(str(problem))
    assert problems == [line]
