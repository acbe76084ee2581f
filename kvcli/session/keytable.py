"""The keys of a manifest read from the session database one row at a time.

A command touches a few keys; reading and checking every row of a 10,000-key session took
0.9 s. :class:`KeyTable` is the manifest's ``keys`` mapping: a key's row is read and checked
(field by field, its key kind against the session's, and no other row or the optimizer state
naming one of its files) when the command first asks for it. Iterating it, or asking its
length, reads and checks every row the way a whole manifest is checked.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Iterator, MutableMapping

from kvcli.errors import ManifestProblem
from kvcli.session import db
from kvcli.session.entry import KeyEntry, files_belong_to_one_place
from kvcli.session.files import corrupted
from kvcli.session.names import Key
from kvcli.session.schema import MAX_KEYS, short


class KeyTable(MutableMapping[Key, KeyEntry]):
    """``Manifest.keys`` backed by the ``keys`` table (see the module docs)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, kind: str | None, state: str | None) -> None:
        self._conn, self._path, self.kind, self._state = conn, path, kind, state
        self._cache: dict[Key, KeyEntry] = {}
        self._absent: set[Key] = set()  # asked for and not in the table (or deleted)
        self._full = False
        self._select: tuple[sqlite3.Connection, str] | None = None
        #: key -> the committed row as read: (file, spare, residual, dtype, shape), file None
        #: for a value held in the row
        self.original: dict[Key, tuple[Any, ...]] = {}

    def _columns(self) -> str:
        """The SELECT list of a row for this connection (an older database has no ``data``)."""
        if self._select is None or self._select[0] is not self._conn:
            try:
                self._select = (self._conn, db.key_select(self._conn))
            except sqlite3.Error as error:
                raise db.db_error(self._path, error) from None
        return self._select[1]

    # ------------------------------------------------------------------ one row
    def _fetch(self, key: Key) -> KeyEntry | None:
        try:
            rows = self._conn.execute(f"SELECT {self._columns()} FROM keys WHERE key = ?", (key,)).fetchall()
        except sqlite3.Error as error:
            raise db.db_error(self._path, error) from None
        if not rows:
            return None
        entry = KeyEntry.from_row(rows[0], self._path)
        found = entry.key
        if found != key or type(found).__name__ != self.kind:
            raise corrupted(self._path, f"key_kind says {self.kind!r} but key {short(found)} is not of that kind")
        names = [name for name in (entry.file, entry.spare, entry.residual) if name is not None]
        if len(set(names)) != len(names) or self._state in names:
            raise corrupted(self._path, f"key {short(key)} names one file twice: each file has one use")
        marks = ", ".join("?" * len(names))
        try:
            other = self._conn.execute(
                f"SELECT key FROM keys WHERE key != ? AND (file IN ({marks}) OR spare IN ({marks}) "
                f"OR residual IN ({marks})) LIMIT 1", (key, *names, *names, *names)).fetchone()
        except sqlite3.Error as error:
            raise db.db_error(self._path, error) from None
        if other is not None:
            raise corrupted(self._path, f"key {short(key)} and key {short(other[0])} name the same file: "
                                        "each file has one use")
        self.original[key] = entry.files_row()
        return entry

    # ------------------------------------------------------------------ every row
    def _load_all(self) -> None:
        if self._full:
            return
        try:
            rows = self._conn.execute(f"SELECT {self._columns()} FROM keys ORDER BY pos").fetchall()
        except sqlite3.Error as error:
            raise db.db_error(self._path, error) from None
        if len(rows) > MAX_KEYS:
            raise corrupted(self._path, f"keys must be a list of at most {MAX_KEYS:,} entries")
        entries = [KeyEntry.from_row(row, self._path) for row in rows]
        try:
            files_belong_to_one_place(entries, self._state)
        except ManifestProblem as problem:
            raise corrupted(self._path, str(problem)) from None
        table: dict[Key, KeyEntry] = {}
        kinds = set()
        for entry in entries:
            key = entry.key
            if key in table:
                raise corrupted(self._path, f"key {key!r} has a repeated entry")
            kinds.add(type(key).__name__)
            if key in self._absent:
                continue
            if key in self._cache:
                table[key] = self._cache[key]
            else:
                self.original[key] = entry.files_row()
                table[key] = entry
        if len(kinds) > 1 or (kinds and self.kind not in kinds):
            raise corrupted(self._path, f"key_kind says {self.kind!r} but the keys are {sorted(kinds)}")
        for key, entry in self._cache.items():  # new keys of this command, in their order
            table.setdefault(key, entry)
        self._cache, self._full = table, True

    # ------------------------------------------------------------------ the mapping
    def __getitem__(self, key: Key) -> KeyEntry:
        entry = self._cache.get(key)
        if entry is not None:
            return entry
        if self._full or key in self._absent:
            raise KeyError(key)
        entry = self._fetch(key)
        if entry is None:
            self._absent.add(key)
            raise KeyError(key)
        self._cache[key] = entry
        return entry

    def __contains__(self, key: object) -> bool:
        try:
            self[key]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __setitem__(self, key: Key, entry: KeyEntry) -> None:
        if not self._full and key not in self._cache and key not in self._absent:
            self.get(key)  # its committed row (what the commit replaces)
        self._absent.discard(key)
        self._cache[key] = entry
        if self.kind is None:
            self.kind = type(key).__name__

    def __delitem__(self, key: Key) -> None:
        self[key]  # KeyError if there is none
        del self._cache[key]
        self._absent.add(key)

    def __iter__(self) -> Iterator[Key]:
        self._load_all()
        return iter(list(self._cache))

    def __len__(self) -> int:
        self._load_all()
        return len(self._cache)

    def first_kind(self) -> str | None:
        """The kind of the session's keys ('int' or 'str', None: no keys), without a scan."""
        if self._full:
            return type(next(iter(self._cache))).__name__ if self._cache else None
        if self._cache:
            return type(next(iter(self._cache))).__name__
        try:
            row = self._conn.execute("SELECT 1 FROM keys LIMIT 1").fetchone()
        except sqlite3.Error as error:
            raise db.db_error(self._path, error) from None
        return self.kind if row is not None else None

    def file_count(self) -> int:
        """How many files the committed rows name (the garbage check's cheap count): a value
        held in its row names none."""
        inline = "count(data)" if "data" in self._columns().split(", ") else "0"
        try:
            row = self._conn.execute(f"SELECT count(file) - {inline} + count(spare) + count(residual) FROM keys").fetchone()
        except sqlite3.Error as error:
            raise db.db_error(self._path, error) from None
        return int(row[0])
