"""The session's index in SQLite (WAL): the manifest as rows, committed in one transaction.

``session.db`` holds two tables (:data:`SCHEMA`, declared once):

* ``meta``: one row per top-level manifest field (format, generation, store, updater,
  updater trust, optimizer-state file, compression, key kind, times), its value as JSON;
  plus ``epoch``, a random id of this database (a cached manifest is reused only while
  ``(epoch, generation)`` is unchanged);
* ``keys``: one row per key, in the order keys were first initialised: the key (an SQLite
  integer or text), value file, dtype, shape (JSON list), version, spare and residual files,
  and ``data``: the value's bytes (little-endian, C order) when it is small enough to live
  in the row (:data:`kvcli.session.names.INLINE_BYTES`); its ``file`` is then only a unique
  name of that value (no such file exists). A database written before ``data`` existed
  gets the column from its first writing command; readers treat it as absent until then.

A key's row is read into a :class:`kvcli.session.entry.KeyEntry` and written from one
(``KeyEntry.from_row`` / ``KeyEntry.row``, every field checked on reading), the meta rows into
the fields :func:`kvcli.session.schema.check_meta` checks: nothing in the database is trusted.
Nor is its SQL: a database holding anything but these tables and their indexes (a trigger,
a view, another table) is refused when it is opened (:func:`check_schema`), SQLite's
``trusted_schema`` is off, and every statement has a deadline (:class:`BoundedConnection`);
``reset`` builds a new database.
A commit writes only the rows a command changed, so its cost follows the keys it touches.
An old session (``manifest.json``) is migrated by the first writing command: the database
is built in a temporary file, fsynced and renamed into place (the switch), then the JSON
is removed; read-only commands read the JSON as it is (a read-only home never migrates).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat as stat_
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

from kvcli.errors import SessionError, DiskError
from kvcli.osutil import PRIVATE_FILE, unique_token
from kvcli.session.files import corrupted, disk_error

DB = "session.db"

#: The one declaration of the session's tables.
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS keys (pos INTEGER PRIMARY KEY, key UNIQUE NOT NULL, file TEXT NOT NULL,"
    " dtype TEXT NOT NULL, shape TEXT NOT NULL, version INTEGER NOT NULL, spare TEXT, residual TEXT, data BLOB)",
    # a key's row is checked against every other row naming one of its files (one use per file)
    "CREATE INDEX IF NOT EXISTS keys_file ON keys (file)",
    "CREATE INDEX IF NOT EXISTS keys_spare ON keys (spare)",
    "CREATE INDEX IF NOT EXISTS keys_residual ON keys (residual)",
)
KEY_COLUMNS = ("key", "file", "dtype", "shape", "version", "spare", "residual", "data")
#: The ``keys`` table of a database written before values could live in their row (no
#: ``data`` column until a writing command adds it).
_KEYS_BEFORE_DATA = SCHEMA[1].replace(", data BLOB", "")


def _stored(statement: str) -> str:
    """A ``CREATE`` statement as SQLite keeps it in ``sqlite_master`` (without IF NOT EXISTS)."""
    return statement.replace(" IF NOT EXISTS", "")


#: Everything a kvcli session database may hold, as ``sqlite_master`` rows (type, name,
#: table, SQL): the two tables (``keys`` with or without ``data``), their three indexes (a
#: database of the first session.db release may lack them until a writing command makes
#: them) and the indexes SQLite makes for ``meta``'s primary key and ``keys``' unique key.
#: Anything else (a trigger, a view, another table or index, another definition) is not
#: kvcli's: it could run SQL kvcli did not write on every command.
KNOWN_SCHEMA = frozenset({
    ("table", "meta", "meta", _stored(SCHEMA[0])),
    ("table", "keys", "keys", _stored(SCHEMA[1])),
    ("table", "keys", "keys", _stored(_KEYS_BEFORE_DATA)),
    ("index", "sqlite_autoindex_meta_1", "meta", None),
    ("index", "sqlite_autoindex_keys_1", "keys", None),
    *(("index", statement.split()[5], "keys", _stored(statement)) for statement in SCHEMA[2:]),
})
#: The entries every kvcli database has, once it has any.
REQUIRED_SCHEMA = frozenset({("table", "meta"), ("table", "keys"), ("index", "sqlite_autoindex_meta_1"),
                             ("index", "sqlite_autoindex_keys_1")})
#: Seconds one SQL statement may run before SQLite is told to stop it. kvcli's own take
#: milliseconds (reading every row of a session of 2,000,000 keys, the most one holds, took
#: 5.4-6.9 s on a 2-core machine at load 5); the bound is there for a database that is not
#: kvcli's, should one pass :func:`check_schema`.
STATEMENT_SECONDS = 60.0
#: SQLite virtual-machine instructions between two looks at the clock (about 0.5 ms of work).
_PROGRESS_STEPS = 20_000


class BoundedConnection(sqlite3.Connection):
    """An SQLite connection whose every statement has a deadline: SQLite interrupts one that
    runs :data:`STATEMENT_SECONDS` after its ``execute`` (each row of an ``executemany`` has
    its own), which then fails with SQLite's ``interrupted`` (see :func:`db_error`)."""

    #: what :func:`check_schema` found: the ``keys`` table has ``data`` (None: not known), and
    #: every table and index of :data:`SCHEMA` is there
    kvcli_data: bool | None = None
    kvcli_complete = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.started = time.monotonic()
        self.set_progress_handler(self._overdue, _PROGRESS_STEPS)

    def _overdue(self) -> int:
        return int(time.monotonic() - self.started > STATEMENT_SECONDS)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self.started = time.monotonic()
        return super().execute(sql, parameters)

    def executemany(self, sql: str, rows: Iterable[Any], /) -> sqlite3.Cursor:
        return super().executemany(sql, self._each(rows))

    def _each(self, rows: Iterable[Any]) -> Iterator[Any]:
        for row in rows:
            self.started = time.monotonic()
            yield row


def open_db(target: str, timeout: float, uri: bool = False) -> sqlite3.Connection:
    """A connection to a session database that runs only kvcli's SQL: every statement has a
    deadline (:class:`BoundedConnection`), and the schema is not trusted (``trusted_schema``
    off: no function with side effects runs from a view or trigger), before anything is read."""
    conn = sqlite3.connect(target, uri=uri, timeout=timeout, isolation_level=None, check_same_thread=False,
                           factory=BoundedConnection)
    conn.execute("PRAGMA trusted_schema=OFF")
    return conn


def check_schema(conn: sqlite3.Connection, path: Path) -> bool:
    """Refuse a database that holds anything but kvcli's tables and indexes (a trigger could
    rewrite every push, a view named ``keys`` could run a query that never ends); returns
    whether it has kvcli's tables (False: an empty database, which a writer fills).

    What it read is kept on the connection (its tables hold ``data``, every table and index
    of :data:`SCHEMA` is there), so nothing asks SQLite about the schema again.

    Raises:
        SessionError: it is not a kvcli session database, saying what it holds and how to
            repair it (reset builds a new one).
    """
    try:
        rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    except sqlite3.Error as error:
        raise db_error(path, error) from None
    order = {"trigger": 0, "view": 1}  # named first: the SQL that would run
    for row in sorted(rows, key=lambda row: order.get(str(row[0]), 2)):
        if tuple(row) not in KNOWN_SCHEMA:
            kind, name = (str(part)[:60] for part in row[:2])
            if any(known[:2] == tuple(row[:2]) for known in KNOWN_SCHEMA):
                found = f"its {kind} {name!r} is not defined as kvcli defines it"
            else:
                found = f"it holds the {kind} {name!r}, which kvcli never makes"
            raise corrupted(path, f"{found}: it is not a kvcli session database")
    present = {(str(row[0]), str(row[1])) for row in rows}
    if present and not REQUIRED_SCHEMA <= present:
        missing = ", ".join(sorted(name for _, name in REQUIRED_SCHEMA - present if not name.startswith("sqlite_")))
        raise corrupted(path, f"it lacks kvcli's {missing or 'key index'}: it is not a kvcli session database")
    have = {tuple(row) for row in rows}
    _note_schema(conn, ("table", "keys", "keys", _stored(SCHEMA[1])) in have, _COMPLETE <= have)
    return bool(present)


def _note_schema(conn: sqlite3.Connection, data: bool | None, complete: bool) -> None:
    if isinstance(conn, BoundedConnection):
        conn.kvcli_data, conn.kvcli_complete = data, complete


#: The sqlite_master rows of a database with every table and index of :data:`SCHEMA`.
_COMPLETE = frozenset({("table", "meta", "meta", _stored(SCHEMA[0])), ("table", "keys", "keys", _stored(SCHEMA[1])),
                       *(("index", statement.split()[5], "keys", _stored(statement)) for statement in SCHEMA[2:])})


def forget_schema(conn: sqlite3.Connection) -> None:
    """Another process committed since this connection read the schema (it may have added
    the ``data`` column): ask SQLite again when it matters."""
    _note_schema(conn, None, False)


def has_data_column(conn: sqlite3.Connection) -> bool:
    """Whether the ``keys`` table has the ``data`` column (a database of an older kvcli has
    not, until a writing command adds it); known from :func:`check_schema` when it ran."""
    known = getattr(conn, "kvcli_data", None)
    if known is not None:
        return bool(known)
    return any(row[1] == "data" for row in conn.execute("PRAGMA table_info(keys)").fetchall())


def key_select(conn: sqlite3.Connection) -> str:
    """The column list that reads :data:`KEY_COLUMNS` from this database (``data`` as NULL
    where the table has no such column)."""
    columns = KEY_COLUMNS if has_data_column(conn) else (*KEY_COLUMNS[:-1], "NULL")
    return ", ".join(columns)


#: The files SQLite keeps beside a database: its write-ahead log and the log's index, and a
#: rollback journal (kvcli's databases use the log; a journal is left only by a crash while a
#: database made by a migration or reset switches to it).
SIDE_FILES = ("-wal", "-shm", "-journal")


def db_path(folder: Path) -> Path:
    return folder / DB


def _check_file(path: Path) -> bool:
    """Whether ``path`` exists; a symlink or a non-file there is a corrupted session."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as error:
        raise SessionError(f"cannot read {path}: {error.strerror}") from None
    if stat_.S_ISLNK(info.st_mode):
        raise corrupted(path, "it is a symbolic link, not a file of the session")
    if not stat_.S_ISREG(info.st_mode):
        raise corrupted(path, "it is not a regular file")
    return True


def exists(folder: Path) -> bool:
    return os.path.lexists(db_path(folder))


def connect(folder: Path, timeout: float, write: bool, immutable: bool = False) -> sqlite3.Connection | None:
    """A connection to the session's database (None if there is none and ``write`` is false).

    A read-only session folder (a read-only home) is opened read-only: ``immutable`` when no
    write-ahead log is left (no writer can exist there), else SQLite's read-only WAL mode.
    ``immutable`` also serves a full disk, where the log and its index cannot be created
    (the caller holds the session's lock and has checked that no log is left).
    """
    path = db_path(folder)
    present = _check_file(path)
    for suffix in SIDE_FILES:  # SQLite would open them by name: never through a symlink
        _check_file(Path(str(path) + suffix))
    if not present and not write:
        return None
    conn: sqlite3.Connection | None = None
    created = False
    try:
        if immutable:
            conn = open_db(f"file:{path}?mode=ro&immutable=1", timeout, uri=True)
        elif write or os.access(folder, os.W_OK):
            if not present:  # created private, like every file kvcli writes
                os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), PRIVATE_FILE))
                created = True
            conn = open_db(str(path), timeout)
        else:
            flags = "" if os.path.exists(str(path) + "-wal") else "&immutable=1"
            conn = open_db(f"file:{path}?mode=ro{flags}", timeout, uri=True)
        if not check_schema(conn, path) and present:
            # kvcli makes the tables in the call that creates the file: an existing database
            # without them was emptied (truncated), and the session's keys are gone with it
            raise corrupted(path, "it is empty: it holds none of the session's tables, so its keys are lost")
        conn.execute("PRAGMA synchronous=FULL")  # a commit is on disk when COMMIT returns
        if write:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            if not getattr(conn, "kvcli_complete", False):  # a new database, or one of an older kvcli
                for statement in SCHEMA:
                    conn.execute(statement)
                forget_schema(conn)  # the statements above may have made the tables
                if not has_data_column(conn):  # a database of an older kvcli: small values move inline
                    conn.execute("ALTER TABLE keys ADD COLUMN data BLOB")
                _note_schema(conn, True, True)
    except (sqlite3.DatabaseError, SessionError, OSError) as error:
        if conn is not None:
            conn.close()
        if created:  # no half-made database is left (the next command would find it empty)
            _remove(path)
        if isinstance(error, sqlite3.DatabaseError):
            raise db_error(path, error) from None
        if isinstance(error, OSError):
            raise disk_error(path, error) from None
        raise
    return conn


#: SQLite's primary result codes that are not a damaged database
_BUSY, _LOCKED, _IOERR, _FULL, _CANTOPEN, _READONLY, _PERM = 5, 6, 10, 13, 14, 8, 3
_INTERRUPT = 9


def db_error(path: Path, error: sqlite3.Error) -> SessionError:
    """The one-line error for an SQLite failure: busy, a full or failing disk, no permission,
    or (anything else) a damaged database."""
    import errno

    text = str(error)
    code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (_BUSY, _LOCKED) or "locked" in text:
        return SessionError(f"session database {path} is busy ({text}): try again, or raise KVCLI_LOCK_TIMEOUT")
    if code in (_FULL, _IOERR) or "disk is full" in text:
        # SQLite reports a write that found no space as FULL, or as IOERR when the log or its
        # index could not grow: the free space tells which
        try:
            usage = os.statvfs(path.parent)
            free = usage.f_bavail * usage.f_frsize
        except OSError:
            free = 0
        if code == _FULL or "disk is full" in text or free < (1 << 20):
            return DiskError(f"cannot write {path}: no space left on the device; nothing was changed: "
                             "free some space and try again", errno.ENOSPC)
        return DiskError(f"cannot write {path}: an input/output error ({text}); nothing was changed: "
                         "check the disk and try again", errno.EIO)
    if code == _CANTOPEN or "unable to open" in text:
        # SQLite hides the errno: a process at its descriptor limit (ulimit -n) gets this too
        problem = _descriptors_exhausted()
        if problem is not None:
            return SessionError(f"cannot open {path}: {problem}; nothing was changed")
    if code in (_READONLY, _CANTOPEN, _PERM):
        return SessionError(f"cannot write {path}: {text}; nothing was changed")
    if code == _INTERRUPT or text == "interrupted":  # the statement's deadline (BoundedConnection)
        return corrupted(path, f"a statement did not finish within {STATEMENT_SECONDS:g} s: it is damaged or not "
                               "a kvcli session database")
    return corrupted(path, f"not a valid session database: {text[:120]}")


def _descriptors_exhausted() -> str | None:
    """:func:`kvcli.osutil.resource_problem`'s line when this process is (nearly) out of file
    descriptors — SQLite needs three (the database, its log and the log's index) — else None."""
    import errno
    import resource

    from kvcli.osutil import resource_problem

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    try:
        in_use = len(os.listdir("/proc/self/fd"))
    except OSError as error:  # listing them takes one more: at the limit, that fails too
        return resource_problem(error)
    if soft == resource.RLIM_INFINITY or in_use + 3 < soft:
        return None
    return resource_problem(OSError(errno.EMFILE, os.strerror(errno.EMFILE)))


def stamp_of(meta: dict[str, Any]) -> tuple[str, int] | None:
    """``(epoch, generation)`` of the committed manifest whose meta rows are ``meta`` (as
    :func:`read_meta` gives them with ``epoch``); None when it has none (a damaged database
    is reported by the validator)."""
    epoch, generation = meta.get("epoch"), meta.get("generation")
    if not isinstance(epoch, str) or not isinstance(generation, int) or isinstance(generation, bool):
        return None
    return epoch, generation


def read_meta(conn: sqlite3.Connection, path: Path, epoch: bool = False) -> dict[str, Any] | None:
    """The manifest's fields but its keys (unchecked), or None when the database is empty;
    ``epoch``: with the database's ``epoch`` (:func:`stamp_of`)."""
    try:
        meta = conn.execute("SELECT name, value FROM meta").fetchall()
    except sqlite3.Error as error:
        raise db_error(path, error) from None
    if not meta:
        return None
    data: dict[str, Any] = {}
    for name, value in meta:
        if not isinstance(name, str) or not isinstance(value, str):
            raise corrupted(path, "a meta row is malformed")
        try:
            data[name] = json.loads(value)
        except RecursionError:
            raise corrupted(path, f"meta field {name[:40]!r}: JSON nested too deeply") from None
        except ValueError as error:
            raise corrupted(path, f"meta field {name[:40]!r} is not valid JSON: {str(error)[:80]}") from None
    if not epoch:
        data.pop("epoch", None)
    return data


def write_meta(conn: sqlite3.Connection, meta: dict[str, Any]) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)",
                     [(name, json.dumps(value, ensure_ascii=False)) for name, value in meta.items()])


def upsert_keys(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """Insert or update key rows (:data:`KEY_COLUMNS`, as ``KeyEntry.row`` gives them); an
    updated key keeps its position."""
    conn.executemany(
        "INSERT INTO keys (key, file, dtype, shape, version, spare, residual, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET file=excluded.file, dtype=excluded.dtype, shape=excluded.shape, "
        "version=excluded.version, spare=excluded.spare, residual=excluded.residual, data=excluded.data",
        rows,
    )


def delete_keys(conn: sqlite3.Connection, keys: Iterable[Any]) -> None:
    rows = [(key,) for key in keys]
    if rows:
        conn.executemany("DELETE FROM keys WHERE key = ?", rows)


def write_all(conn: sqlite3.Connection, meta: dict[str, Any], rows: Iterable[tuple[Any, ...]],
              epoch: str | None = None) -> None:
    """Replace every row by the meta fields ``meta`` and the key rows ``rows`` (inside the
    caller's transaction)."""
    conn.execute("DELETE FROM meta")
    conn.execute("DELETE FROM keys")
    write_meta(conn, {**meta, "epoch": epoch or unique_token()})
    upsert_keys(conn, rows)


def create_from(folder: Path, meta: dict[str, Any], rows: Iterable[tuple[Any, ...]], timeout: float,
                before_replace: Any = None) -> None:
    """Build ``session.db`` in ``folder`` from a manifest's meta fields and key rows, whole or
    not at all: a temporary database, fsynced, renamed into place (the migration's commit
    point)."""
    from kvcli.osutil import fsync_dir

    path = db_path(folder)
    temp = folder / f".{DB}.{unique_token()}.tmp"
    try:
        fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), PRIVATE_FILE)
        os.close(fd)
        conn = open_db(str(temp), timeout)
        try:
            conn.execute("PRAGMA journal_mode=DELETE")  # one file to rename; WAL from the first open on
            conn.execute("PRAGMA synchronous=FULL")
            for statement in SCHEMA:
                conn.execute(statement)
            conn.execute("BEGIN IMMEDIATE")
            write_all(conn, meta, rows)
            conn.execute("COMMIT")
        finally:
            conn.close()
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        if before_replace is not None:
            before_replace()
        os.replace(temp, path)
        fsync_dir(folder)
    except sqlite3.Error as error:
        _remove(temp)
        raise db_error(path, error) from None
    except OSError as error:
        _remove(temp)
        raise disk_error(path, error) from None


def _remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(str(path) + suffix)
        except OSError:
            pass


def remove_stale_temporaries(folder: Path) -> None:
    """Remove databases a killed migration left half-built."""
    for stale in folder.glob(f".{DB}.*.tmp*"):
        _remove(stale)


def load_raw(folder: Path) -> dict[str, Any] | None:
    """The committed manifest of the session in ``folder`` in the shape of a ``manifest.json``
    (each key an object, its ``data`` bytes included), unchecked: for inspection and tests.
    Commands never read this form: they read each row into a ``KeyEntry``."""
    conn = connect(folder, 5.0, write=False)
    if conn is None:
        return None
    path = db_path(folder)
    try:
        data = read_meta(conn, path)
        if data is None:
            return None
        try:
            rows = conn.execute(f"SELECT {key_select(conn)} FROM keys ORDER BY pos").fetchall()
        except sqlite3.Error as error:
            raise db_error(path, error) from None
    finally:
        conn.close()
    data["keys"] = [_inspected(row) for row in rows]
    return data


def _inspected(row: tuple[Any, ...]) -> dict[str, Any]:
    """A ``keys`` row as a ``manifest.json`` key object (an absent optional field left out)."""
    entry = {name: value for name, value in zip(KEY_COLUMNS, row) if value is not None or name in KEY_COLUMNS[:5]}
    shape = entry["shape"]
    entry["shape"] = json.loads(shape) if isinstance(shape, str) else shape
    return entry
