"""Transactions of a session: lock, read the manifest, run, commit atomically or leave the
last committed state.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from kvcli.errors import SessionError, DiskError
from kvcli.arrays.npyio import remove_quietly
from kvcli.osutil import fsync_dir, unique_token
from kvcli.session import db
from kvcli.session.db import DB
from kvcli.session.files import (
    lock_timeout,
    crash_point,
    private_session,
    session_lock,
    new_file_name,
    remove_empty_dir,
    same_size,
    corrupted,
    disk_error,
    Syncer,
    write_npy,
)
from kvcli.session.keytable import KeyTable
from kvcli.session.live import LiveStore, Place
from kvcli.session.manifest import KeyEntry, Manifest, load_manifest_file
from kvcli.session.names import DATA, INLINE_BYTES, MANIFEST, RECYCLE_BYTES, Key
from kvcli.session.schema import MAX_COUNTER


class _Txn:
    """What one transaction reads and changes (a plain class: no dataclass to create at
    start-up)."""

    def __init__(self, manifest: Manifest, all_rows: bool = False, old_state: str | None = None) -> None:
        self.manifest = manifest
        #: values to write as they are, without going through the store (plain replacing pushes,
        #: loaded checkpoints: a numpy array, or a body copied from a file, see npyio.write_file)
        self.direct: dict[Key, Any] = {}
        self.changed: list[Key] = []
        #: keys this transaction removes (their rows and, after the commit, their files)
        self.deleted: list[Key] = []
        #: keys the live store may have changed (forgotten if the command fails)
        self.at_risk: list[Key] = []
        self.dirty = False
        #: every row is rewritten (a new session, an import, compression switched off)
        self.all_rows = all_rows
        self.save_state = False
        #: keys whose compression residuals changed (written at commit)
        self.residuals: list[Key] = []
        #: the committed optimizer-state file (removed after a commit that replaces it)
        self.old_state = old_state

    def touch(self, key: Key) -> None:
        if key not in self.changed:
            self.changed.append(key)
        self.dirty = True


#: what a committed row names: (file, spare, residual, dtype, shape); file None for a value
#: held in the row
Row = tuple["str | None", "str | None", "str | None", str, tuple[int, ...]]


def _row(entry: KeyEntry) -> Row:
    return entry.files_row()


class Committer:
    """Locking, transactions and the commit protocol of a
    :class:`~kvcli.session.core.Session`: new files beside the old ones, fsync, the rows
    written in one SQLite transaction (the commit point), then garbage collection. Owned by
    the session; it keeps the database connection and the cached committed manifest, and
    tells the live store (:class:`~kvcli.session.live.LiveStore`) what it committed."""

    def __init__(self, place: Place, live: LiveStore) -> None:
        self.place = place
        self.live = live
        #: the committed manifest of the last command, reused while the database's
        #: ``(epoch, generation)`` is unchanged
        self.manifest: Manifest | None = None
        #: this command's manifest is the cached one (no other process committed since)
        self.reused = False
        self._db: sqlite3.Connection | None = None
        self._db_write = False
        self._db_inode: int | None = None
        self._stamp: tuple[str, int] | None = None  # (epoch, generation) of the cached manifest
        #: the committed meta fields as read or last written: a commit writes those that changed
        self._meta: dict[str, object] | None = None
        self._committed: dict[Key, Row] = {}  # key -> the files and layout its committed row names
        self._scanned = False  # crash leftovers are collected once per object

    def _check_requested(self, manifest: Manifest) -> None:
        if self.place.requested_type and self.place.requested_type != manifest.store_type:
            found = f"session {self.place.name!r} uses the {manifest.store_type!r} store, not {self.place.requested_type!r}"
            raise SessionError(
                f"{found}: to change it, call Session.reset({self.place.requested_type!r}) (this deletes its keys)",
                problem=found, remedy="reset-type", store_type=self.place.requested_type, options={},
            )
        for option, value in self.place.requested_options.items():
            have = manifest.store_options.get(option)
            if have != value:
                # None: the store type's default, or an option the store type does not take
                from kvcli.store import REGISTRY

                entry = REGISTRY.get(manifest.store_type)
                takes = entry is not None and option in entry.session_options
                has = f"{option}={have!r}" if have is not None else f"the default {option}" if takes else f"no {option}"
                found = f"session {self.place.name!r} ({manifest.store_type!r} store) has {has}, not {value!r}"
                raise SessionError(
                    f"{found}: to change it, call Session.reset({manifest.store_type!r}, {{{option!r}: {value!r}}}) "
                    "(this deletes its keys)",
                    problem=found, remedy="reset-type", store_type=manifest.store_type, options={option: value},
                )

    @contextmanager
    def locked(self, shared: bool, create: bool) -> Iterator[bool]:
        """Hold the session lock; yields False (no lock) when the session does not exist
        and ``create`` is false."""
        if not self.place.path.is_dir() and not create:
            yield False
            return
        private_session(self.place.home, self.place.name, create=create)
        data = self.place.path / DATA
        if data.is_symlink():  # O_NOFOLLOW guards each file; the folder holding them must be real too
            raise corrupted(data, "the data folder is a symbolic link, not a folder inside the session")
        lock = session_lock(self.place.path)
        lock.acquire(shared=shared)
        try:
            yield True
        finally:
            lock.release()

    @contextmanager
    def transaction(self, write: bool, create: bool = False) -> Iterator[_Txn]:
        with self.locked(shared=not write, create=write and create) as have_lock:
            manifest = self.read_manifest(write=write) if have_lock else None
            if manifest is None:
                manifest = Manifest(self.place.requested_type or "local", dict(self.place.requested_options))
                new = True
            else:
                new = False
                self._check_requested(manifest)
            txn = _Txn(manifest, all_rows=new, old_state=manifest.optimizer_state)
            committed = False
            try:
                yield txn
                if write and (txn.dirty or (new and create)):
                    self._commit(txn)
                    committed = True
            except BaseException:
                self.live.invalidate([*txn.changed, *txn.at_risk])
                self.forget_manifest()  # the cached manifest may hold this command's changes
                raise
            finally:
                if new and not committed:  # a failed first command leaves no session behind
                    self._remove_empty_session()

    # ------------------------------------------------------------------ the database
    def _connection(self, write: bool, immutable: bool = False) -> sqlite3.Connection | None:
        """The session's database connection, kept across commands while the file is the
        same (a reset of a damaged session or a migration puts a new file in place)."""
        path = self.place.path / DB
        try:
            inode = os.stat(path).st_ino
        except OSError:
            inode = None
        conn = self._db
        if conn is not None and self._db_inode != inode:
            self.close_db()
            conn = None
        if conn is not None and write and not self._db_write:
            # a writer's connection for the same file: the cached manifest stays valid (a
            # full disk may have opened it read-only, see read_manifest)
            new = db.connect(self.place.path, lock_timeout(), True)
            assert new is not None
            if self.manifest is not None and isinstance(self.manifest.keys, KeyTable):
                self.manifest.keys._conn = new
            self._db, self._db_write = new, True
            try:
                conn.close()
            except sqlite3.Error:
                pass
            return new
        if conn is None:
            conn = db.connect(self.place.path, lock_timeout(), write, immutable=immutable)
            if conn is None:
                return None
            self._db, self._db_write = conn, write
            try:
                self._db_inode = os.stat(path).st_ino
            except OSError:
                self._db_inode = None
        return conn

    def close_db(self) -> None:
        conn, self._db = self._db, None
        self.forget_manifest()
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass

    def forget_manifest(self) -> None:
        self.reused = False
        self.manifest = None
        self._stamp = None
        self._meta = None
        self._committed = {}

    def _remove_empty_session(self) -> None:
        """After a failed first command: no database with rows, no folder left behind."""
        conn = self._db
        if conn is not None:
            try:
                empty = db.read_meta(conn, self.place.path / DB) is None
            except SessionError:
                empty = False
            if not empty:
                return
            self.close_db()
            for suffix in ("", *db.SIDE_FILES):
                remove_quietly(self.place.path / (DB + suffix))
        remove_empty_dir(self.place.path / DATA)

    def read_manifest(self, write: bool = False) -> Manifest | None:
        """The committed manifest (None: no session yet), from the cache while the database's
        ``(epoch, generation)`` is unchanged. An old ``manifest.json`` session is migrated by
        a writing command (the caller holds the exclusive lock) and read as it is otherwise."""
        path = self.place.path / DB
        if not db.exists(self.place.path):
            legacy = load_manifest_file(self.place.manifest_path)
            if legacy is None or not write:
                self.forget_manifest()
                if legacy is not None:
                    self._committed = {key: _row(entry) for key, entry in legacy.keys.items()}
                return legacy
            self.close_db()
            db.create_from(self.place.path, legacy.meta_json(), legacy.rows(), lock_timeout(),
                           before_replace=lambda: crash_point("before-migration"))
            crash_point("after-migration")
            remove_quietly(self.place.manifest_path)
            fsync_dir(self.place.path)
        try:
            conn = self._connection(write)
        except DiskError as error:
            # a full disk: SQLite cannot create its log to read. With the lock held and no log
            # left, the database file alone is the committed state: read it as it is, so that
            # `delete` and `reset` can free space (their commit opens for writing again).
            try:
                log = os.lstat(str(path) + "-wal").st_size  # the failed open may have made it, empty
            except FileNotFoundError:
                log = 0
            if not error.no_space or log:
                raise
            self.close_db()
            conn = self._connection(False, immutable=True)
        if conn is None:
            return None
        meta = db.read_meta(conn, path, epoch=True)  # the one read of the meta rows: stamp and fields
        if meta is None:
            self.forget_manifest()
            return None
        stamp = db.stamp_of(meta)
        meta.pop("epoch", None)
        if stamp is not None and stamp == self._stamp and self.manifest is not None:
            self.reused = True
            return self.manifest
        if self._stamp is not None:  # a connection kept across commands: its schema may be older
            db.forget_schema(conn)
        self.reused = False
        manifest = Manifest.from_db(meta, conn, path)
        self._meta = meta
        self.manifest, self._stamp = manifest, stamp
        self._committed = manifest.keys.original if isinstance(manifest.keys, KeyTable) else {}
        return manifest

    def _commit(self, txn: _Txn) -> None:
        manifest = txn.manifest
        self._check_counts(txn)
        data = self.place.path / DATA
        store = self.live.store
        written: list[Path] = []  # new files: removed again if the commit fails (no orphans)
        syncer = Syncer()  # value files are fsynced in the background, all before the commit point
        old_state = txn.old_state
        try:
            for key in txn.changed:
                entry = manifest.keys.get(key)
                if entry is None:
                    continue
                direct = txn.direct.get(key)
                array = direct if direct is not None else store.view(key)
                self._write_value(data, entry, self._committed.get(key), array, written, syncer)
                if direct is None:
                    self.live.loaded[key] = entry.signature
                elif store is not None and store.has(key):  # the store's copy is now stale
                    store.delete(key)
                    self.live.loaded.pop(key, None)
            for key in dict.fromkeys(txn.residuals):
                entry = manifest.keys.get(key)
                if entry is not None:
                    from kvcli.store.compression import save_residuals

                    entry.residual = new_file_name(".npz")
                    written.append(data / entry.residual)
                    try:
                        save_residuals(data / entry.residual, store.compression_residuals(key))
                    except OSError as error:
                        raise disk_error(data / entry.residual, error) from None
                    self.live.residuals[key] = entry.residual
            if txn.save_state:
                name = new_file_name(".npz")
                written.append(data / name)
                try:
                    store.save_optimizer_states(data / name, dump_optimizer=True)
                except OSError as error:
                    raise disk_error(data / name, error) from None
                manifest.optimizer_state = name
                self.live.updater_sig = None
            syncer.wait()
            crash_point("after-data")
            if written:
                fsync_dir(data)
            manifest.generation += 1
            manifest.updated = time.time()
            try:
                self._write_rows(txn)
            except DiskError as error:
                freeable = self._freeable(txn) if error.no_space else []
                if not freeable:
                    raise
                # A full disk: free what this commit drops anyway (old spares, files of deleted
                # keys) before the new rows are in place, so `delete` and `reset` still work.
                # A crash in between leaves deleted keys without files: deleting them again works.
                for path in freeable:
                    remove_quietly(path)
                self._write_rows(txn)
        except BaseException:
            try:
                syncer.wait()  # no thread is left fsyncing a file removed below
            except DiskError:
                pass
            for path in written:
                remove_quietly(path)
            raise
        if txn.save_state:
            self.live.updater_sig = self.live.updater_signature(manifest)
        # the files this commit stopped naming: old values, spares and residuals of the keys
        # it changed or deleted, the old optimizer state (cost: the keys touched)
        drop: set[str] = set()
        keep: set[str] = set()
        touched = manifest.keys.keys() if txn.all_rows else [*txn.changed, *txn.residuals, *txn.deleted]
        old_rows = self._committed if txn.all_rows else {k: self._committed[k] for k in touched if k in self._committed}
        if txn.all_rows:
            drop.update(name for row in self._committed.values() for name in row[:3] if name)
            for name in (txn.manifest.files() if len(drop) else ()):
                keep.add(name)
        for key in touched:
            before = old_rows.get(key)
            if before is not None:
                drop.update(name for name in before[:3] if name)
            entry = manifest.keys.get(key)
            if entry is not None:
                keep.update(name for name in _row(entry)[:3] if name)
        if old_state and old_state != manifest.optimizer_state:
            drop.add(old_state)
        keep.add(manifest.optimizer_state or "")
        new_committed = self._committed
        if txn.all_rows:
            new_committed = {key: _row(entry) for key, entry in manifest.keys.items()}
            if isinstance(manifest.keys, KeyTable):
                manifest.keys.original = new_committed
        else:
            for key in touched:
                entry = manifest.keys.get(key)
                if entry is None:
                    new_committed.pop(key, None)
                else:
                    new_committed[key] = _row(entry)
        self._committed = new_committed
        for name in drop - keep:
            remove_quietly(data / name)
        if not self._scanned:  # once per Session object: crash leftovers of other processes
            self._scanned = True
            if self._leftovers_possible(manifest):
                self.collect_garbage(manifest)

    def _check_counts(self, txn: _Txn) -> None:
        """Refuse a commit whose generation or a key's version would pass what a manifest
        holds (the next read would find the session corrupted), before anything is written."""
        manifest = txn.manifest
        if manifest.generation + 1 > MAX_COUNTER - 1:
            raise SessionError(f"session {self.place.name!r} has had {manifest.generation:,} commits, the most it "
                               "counts; nothing was changed: call Session.reset() to start it over (this deletes "
                               "its keys), or export it and import the copy into a new session")
        for key in txn.changed:
            entry = manifest.keys.get(key)
            if entry is not None and entry.version > MAX_COUNTER - 1:
                raise SessionError(f"key {key!r} has had {MAX_COUNTER - 1:,} writes, the most a session counts; "
                                   "nothing was changed: delete the key and init it again (its count starts "
                                   "over)")

    def _leftovers_possible(self, manifest: Manifest) -> bool:
        """Whether the folder may hold files no committed row names (a killed command's):
        more files in ``data/`` than the rows name, or a stale temporary or old manifest.
        Counting costs a directory listing, not a read of every row."""
        if not isinstance(manifest.keys, KeyTable):
            return True
        try:
            present = len(os.listdir(self.place.path / DATA))
            top = os.listdir(self.place.path)
        except OSError:
            return True
        if any(name.endswith(".tmp") or name == MANIFEST for name in top):
            return True
        named = manifest.keys.file_count() + (1 if manifest.optimizer_state else 0)
        return present != named

    def _write_rows(self, txn: _Txn) -> None:
        """The commit point: one SQLite transaction writes the rows this command changed."""
        manifest = txn.manifest
        path = self.place.path / DB
        conn = self._connection(write=True)
        assert conn is not None
        epoch = self._stamp[0] if self._stamp is not None else None
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if txn.all_rows or epoch is None:
                    epoch = epoch or unique_token()
                    db.write_all(conn, manifest.meta_json(), manifest.rows(), epoch)
                else:
                    fields = manifest.meta_json()
                    known = self._meta
                    db.write_meta(conn, fields if known is None else {
                        name: value for name, value in fields.items() if name not in known or known[name] != value})
                    db.delete_keys(conn, txn.deleted)
                    keys = dict.fromkeys([*txn.changed, *txn.residuals])
                    db.upsert_keys(conn, [manifest.keys[k].row() for k in keys if k in manifest.keys])
                crash_point("before-manifest")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as error:  # the caller forgets the cached manifest if it gives up
            raise db.db_error(path, error) from None
        crash_point("after-manifest")
        self.manifest, self._stamp, self._meta = manifest, (epoch, manifest.generation), manifest.meta_json()

    def write_manifest(self, manifest: Manifest) -> None:
        """Replace every row by ``manifest`` (reset); a damaged database is replaced whole."""
        txn = _Txn(manifest, all_rows=True)
        if db.exists(self.place.path):
            try:
                self._write_rows(txn)
                return
            except DiskError:
                self.forget_manifest()
                raise
            except SessionError:
                pass  # damaged: build a new database below
        self.close_db()
        for suffix in db.SIDE_FILES:  # of the damaged database (a symlink is removed, not followed)
            remove_quietly(self.place.path / (DB + suffix))
        crash_point("before-manifest")
        db.create_from(self.place.path, manifest.meta_json(), manifest.rows(), lock_timeout())
        crash_point("after-manifest")

    def _freeable(self, txn: _Txn) -> list[Path]:
        """Committed files the new manifest does not need and no committed value is in:
        spares, and the files of keys this transaction deletes."""
        keep = txn.manifest.files()  # reads every row (a full disk is no fast path)
        names = {row[1] for row in self._committed.values() if row[1]}
        names.update(row[0] for key, row in self._committed.items() if key not in txn.manifest.keys and row[0])
        return [self.place.path / DATA / name for name in sorted(names - keep)]

    @staticmethod
    def _write_value(data: Path, entry: KeyEntry, before: Row | None, array: Any, written: list[Path],
                     syncer: Syncer) -> None:
        """Write ``entry``'s new value beside the committed one and point ``entry`` at it.

        A value of at most ``INLINE_BYTES`` goes into the row itself (no file; a committed
        file of the key is removed after the commit). A big value of unchanged shape and
        dtype is written over its spare file (an older value no manifest needs any more) and
        the committed file becomes the next spare; anything else gets a new file, and the
        old one is removed after the commit.
        """
        if entry.nbytes <= INLINE_BYTES:  # in the row: the commit's one transaction writes it
            entry.hold(array)
            entry.file = new_file_name(".npy")  # a new name, so other processes see a new value
            return
        entry.spare = None
        entry.data = None
        if before is not None and before[0] is not None \
                and (before[3], tuple(before[4])) == (entry.dtype, tuple(entry.shape)) \
                and entry.nbytes >= RECYCLE_BYTES:
            old_file, old_spare = before[0], before[1]
            if old_spare and same_size(data / old_spare, data / old_file):
                write_npy(data / old_spare, array, overwrite=True, sync=False)
                syncer.add(data / old_spare)
                entry.file, entry.spare = old_spare, old_file
                return
            entry.spare = old_file
        entry.file = new_file_name(".npy")
        written.append(data / entry.file)
        write_npy(data / entry.file, array, sync=False)
        syncer.add(data / entry.file)

    def collect_garbage(self, manifest: Manifest) -> None:
        """Remove data files the manifest does not reference (old values, crash leftovers),
        half-built databases and a migrated ``manifest.json``."""
        keep = manifest.files()
        data = self.place.path / DATA
        try:
            names = os.listdir(data)
        except FileNotFoundError:
            names = []
        for name in names:
            if name not in keep:
                try:
                    os.unlink(data / name)
                except OSError:
                    pass
        db.remove_stale_temporaries(self.place.path)
        stale = list(self.place.path.glob(f".{MANIFEST}.*.tmp"))
        if db.exists(self.place.path):
            stale.append(self.place.manifest_path)
        for path in stale:
            try:
                path.unlink()
            except OSError:
                pass


def load_folder(folder: Path) -> Manifest | None:
    """The committed manifest of the session in ``folder``, read without its lock (listing):
    from its database, or from an old ``manifest.json`` not migrated yet."""
    if not db.exists(folder):
        return load_manifest_file(folder / MANIFEST)
    conn = db.connect(folder, lock_timeout(), write=False)
    if conn is None:
        return None
    try:
        meta = db.read_meta(conn, folder / DB)
        if meta is None:
            return None
        manifest = Manifest.from_db(meta, conn, folder / DB)
        manifest.keys = dict(manifest.keys)  # every row, checked, before the connection closes
        return manifest
    finally:
        conn.close()


def session_exists(folder: Path) -> bool:
    """Whether ``folder`` holds a session (a database, or an old manifest)."""
    return db.exists(folder) or (folder / MANIFEST).exists()
