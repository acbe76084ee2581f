"""Transactions of a session: lock, read the manifest, run, commit atomically or leave the
last committed state.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from kvcli.errors import SessionError
from kvcli.arrays.npyio import remove_quietly
from kvcli.session.files import (
    DiskError,
    _crash_point,
    _fsync_dir,
    private_session,
    session_lock,
    _new_file,
    _remove_empty_dir,
    _same_size,
    corrupted,
    disk_error,
    write_npy,
)
from kvcli.session.live import LiveStore
from kvcli.session.manifest import KeyEntry, Manifest, _load_manifest_file, _write_json
from kvcli.session.names import DATA, MANIFEST, RECYCLE_BYTES, Key


@dataclass
class _Txn:
    manifest: Manifest
    #: the committed entries as the transaction found them: (file, spare, dtype, shape)
    before: dict[Key, tuple[str, str | None, str, tuple[int, ...]]] = field(default_factory=dict)
    #: values to write as they are, without going through the store (plain replacing pushes)
    direct: dict[Key, np.ndarray] = field(default_factory=dict)
    changed: list[Key] = field(default_factory=list)
    #: keys the live store may have changed (forgotten if the command fails)
    at_risk: list[Key] = field(default_factory=list)
    dirty: bool = False
    save_state: bool = False
    #: keys whose compression residuals changed (written at commit)
    residuals: list[Key] = field(default_factory=list)

    def touch(self, key: Key) -> None:
        if key not in self.changed:
            self.changed.append(key)
        self.dirty = True


class Committer(LiveStore):
    """Locking, transactions and the commit protocol of a
    :class:`~kvcli.session.core.Session`: new files beside the old ones, fsync, the manifest
    renamed into place (the commit point), then garbage collection. A base of ``Session``."""

    def _check_requested(self, manifest: Manifest) -> None:
        if self.requested_type and self.requested_type != manifest.store_type:
            found = f"session {self.name!r} uses the {manifest.store_type!r} store, not {self.requested_type!r}"
            raise SessionError(
                f"{found}: to change it, call Session.reset({self.requested_type!r}) (this deletes its keys)",
                problem=found, remedy="reset-type", store_type=self.requested_type, options={},
            )
        for option, value in self.requested_options.items():
            if manifest.store_options.get(option) != value:
                found = f"session {self.name!r} has {option}={manifest.store_options.get(option)!r}, not {value!r}"
                raise SessionError(
                    f"{found}: to change it, call Session.reset({manifest.store_type!r}, {{{option!r}: {value!r}}}) "
                    "(this deletes its keys)",
                    problem=found, remedy="reset-type", store_type=manifest.store_type, options={option: value},
                )

    @contextmanager
    def _locked(self, shared: bool, create: bool) -> Iterator[bool]:
        """Hold the session lock; yields False (no lock) when the session does not exist
        and ``create`` is false."""
        if not self.path.is_dir() and not create:
            yield False
            return
        private_session(self.home, self.name, create=create)
        data = self.path / DATA
        if data.is_symlink():  # O_NOFOLLOW guards each file; the folder holding them must be real too
            raise corrupted(data, "the data folder is a symbolic link, not a folder inside the session")
        lock = session_lock(self.path)
        lock.acquire(shared=shared)
        try:
            yield True
        finally:
            lock.release()

    @contextmanager
    def _transaction(self, write: bool, create: bool = False) -> Iterator[_Txn]:
        with self._locked(shared=not write, create=write and create) as have_lock:
            manifest = self._read_manifest() if have_lock else None
            if manifest is None:
                manifest = Manifest(self.requested_type or "local", dict(self.requested_options))
                new = True
            else:
                new = False
                self._check_requested(manifest)
            before = {k: (e.file, e.spare, e.dtype, e.shape) for k, e in manifest.keys.items()} if write else {}
            txn = _Txn(manifest, before=before)
            committed = False
            try:
                yield txn
                if write and (txn.dirty or (new and create)):
                    self._commit(txn)
                    committed = True
            except BaseException:
                self._invalidate([*txn.changed, *txn.at_risk])
                raise
            finally:
                if new and not committed:  # a failed first command leaves no session behind
                    _remove_empty_dir(self.path / DATA)

    def _read_manifest(self) -> Manifest | None:
        return _load_manifest_file(self.manifest_path)

    def _commit(self, txn: _Txn) -> None:
        manifest = txn.manifest
        data = self.path / DATA
        store = self._store
        written: list[Path] = []  # new files: removed again if the commit fails (no orphans)
        try:
            for key in txn.changed:
                entry = manifest.keys.get(key)
                if entry is None:
                    continue
                direct = txn.direct.get(key)
                array = direct if direct is not None else store.view(key)
                self._write_value(data, entry, txn.before.get(key), array, written)
                if direct is None:
                    self._loaded[key] = entry.signature
                elif store is not None and store.has(key):  # the store's copy is now stale
                    store.delete(key)
                    self._loaded.pop(key, None)
            for key in dict.fromkeys(txn.residuals):
                entry = manifest.keys.get(key)
                if entry is not None:
                    from kvcli.store.compression import save_residuals

                    entry.residual = _new_file(".npz")
                    written.append(data / entry.residual)
                    try:
                        save_residuals(data / entry.residual, store.compression_residuals(key))
                    except OSError as error:
                        raise disk_error(data / entry.residual, error) from None
                    self._residuals[key] = entry.residual
            if txn.save_state:
                name = _new_file(".npz")
                written.append(data / name)
                try:
                    store.save_optimizer_states(data / name, dump_optimizer=True)
                except OSError as error:
                    raise disk_error(data / name, error) from None
                manifest.optimizer_state = name
                self._updater_sig = None
            _crash_point("after-data")
            _fsync_dir(data)
            manifest.generation += 1
            manifest.updated = time.time()
            try:
                self._write_manifest(manifest)
            except DiskError as error:
                freeable = self._freeable(txn) if error.no_space else []
                if not freeable:
                    raise
                # A full disk: free what this commit drops anyway (old spares, files of deleted
                # keys) before the new manifest is in place, so `delete` and `reset` still work.
                # A crash in between leaves deleted keys without files: deleting them again works.
                for path in freeable:
                    remove_quietly(path)
                self._write_manifest(manifest)
        except BaseException:
            for path in written:
                remove_quietly(path)
            raise
        if txn.save_state:
            self._updater_sig = self._updater_signature(manifest)
        self._collect_garbage(manifest)

    def _freeable(self, txn: _Txn) -> list[Path]:
        """Committed files the new manifest does not need and no committed value is in:
        spares, and the files of keys this transaction deletes."""
        keep = txn.manifest.files()
        names = {spare for _, spare, _, _ in txn.before.values() if spare}
        names.update(file for key, (file, _, _, _) in txn.before.items() if key not in txn.manifest.keys)
        return [self.path / DATA / name for name in sorted(names - keep)]

    @staticmethod
    def _write_value(
        data: Path, entry: KeyEntry, before: tuple[str, str | None, str, tuple[int, ...]] | None, array: np.ndarray,
        written: list[Path],
    ) -> None:
        """Write ``entry``'s new value beside the committed one and point ``entry`` at it.

        A big value of unchanged shape and dtype is written over its spare file (an older
        value no manifest needs any more) and the committed file becomes the next spare;
        anything else gets a new file, and the old one is removed after the commit.
        """
        entry.spare = None
        if before is not None and (before[2], tuple(before[3])) == (entry.dtype, tuple(entry.shape)) \
                and entry.nbytes >= RECYCLE_BYTES:
            old_file, old_spare = before[0], before[1]
            if old_spare and _same_size(data / old_spare, data / old_file):
                write_npy(data / old_spare, array, overwrite=True)
                entry.file, entry.spare = old_spare, old_file
                return
            entry.spare = old_file
        entry.file = _new_file(".npy")
        written.append(data / entry.file)
        write_npy(data / entry.file, array)

    def _write_manifest(self, manifest: Manifest) -> None:
        _write_json(self.manifest_path, manifest.to_json(), before_replace=lambda: _crash_point("before-manifest"))
        _crash_point("after-manifest")
        self._manifest = manifest

    def _collect_garbage(self, manifest: Manifest) -> None:
        """Remove data files the manifest does not reference (old values, crash leftovers)."""
        keep = manifest.files()
        data = self.path / DATA
        try:
            names = os.listdir(data)
        except FileNotFoundError:
            return
        for name in names:
            if name not in keep:
                try:
                    os.unlink(data / name)
                except OSError:
                    pass
        for stale in self.path.glob(f".{MANIFEST}.*.tmp"):
            try:
                stale.unlink()
            except OSError:
                pass
