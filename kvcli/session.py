"""A KVStore that persists between commands: a folder with a manifest and one ``.npy`` per key.

Layout of a session (``KVCLI_HOME/sessions/NAME``)::

    manifest.json   format version, generation, key kind, store type and options, updater
                    spec, optimizer-state file, gradient compression, and per key: file,
                    dtype, shape, version, compression-residual file
    data/           one <random hex>.npy per key (key names never become paths), the
                    optimizer state and compression residuals (<random hex>.npz); all read
                    with allow_pickle=False
    .lock           taken by every command (exclusive to write, shared to read)

A command locks the session, reads the manifest, loads into the engine only the keys it
touches, runs the operation, then commits: new files are written beside the old ones and
fsynced, the manifest is written to a temporary file, fsynced and renamed over the old one
(the commit point), the folder is fsynced, and files no longer referenced are removed. A
crash at any point leaves the last committed state.

Nothing in a session folder is trusted: every manifest is checked field by field
(:mod:`kvcli.session_schema`), every file is read and written by :mod:`kvcli.npyio` with
``O_NOFOLLOW`` (regular files only), a failed write removes what it wrote and says how much
space it needed, a ``python:`` updater runs only from the file and content the user named
with ``set_updater`` in this home (:mod:`kvcli.session_trust`), and a manifest's Ray address
off this machine is used only when the caller names it too.

A :class:`Session` object may live across many commands (the ``kvcli shell`` does this):
it keeps its store — and so the device workers — and on each command re-reads the manifest
and reloads only what another process changed.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, Union

import numpy as np

from kvcli import config
from kvcli.errors import KeyTypeError, SessionError, UnknownKeyError
from kvcli.npyio import DTYPES, NOFOLLOW, NpyError, check_file, read_array, remove_quietly, write_file
from kvcli.session_schema import MAX_MANIFEST_BYTES, ManifestProblem, validate
from kvcli.session_trust import Trust

Key = Union[int, str]

FORMAT = "kvcli-session"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DATA = "data"
LOCK = ".lock"
DEFAULT_SESSION = "default"
DEFAULT_LOCK_TIMEOUT = config.LOCK_TIMEOUT.default
#: Values at least this big keep their previous file as a spare that the next write
#: overwrites in place: rewriting existing blocks costs less than allocating a new file
#: and freeing the old one (about 0.6x on ext4 for 256 MiB), for twice the disk space.
RECYCLE_BYTES = 1 << 20

_SESSION_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
_INT_KEY_RE = re.compile(r"[0-9]{1,18}")
_STR_KEY_RE = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_FILE_RE = re.compile(r"[0-9a-f]{32}\.(npy|npz)")
_SAFE_DTYPES = frozenset(DTYPES)
KEY_RULE = "keys are whole numbers (e.g. 3) or 1-128 letters, digits, '_', '.', '-' (e.g. fc1.weight)"


# ---------------------------------------------------------------------- names and keys
def default_home() -> Path:
    """``KVCLI_HOME``, else the platform's user-data folder for kvcli."""
    env = config.get(config.HOME)
    if env:
        return Path(env)
    if sys.platform.startswith("linux"):  # what platformdirs says, without importing it
        base = os.environ.get("XDG_DATA_HOME", "").strip() or str(Path.home() / ".local" / "share")
        return Path(base) / "kvcli"
    import platformdirs

    return Path(platformdirs.user_data_dir("kvcli", appauthor=False))


def check_session_name(name: str) -> str:
    """Session names become folder names, so they are strict."""
    if not isinstance(name, str) or not _SESSION_RE.fullmatch(name):
        shown = repr(name) if len(str(name)) <= 40 else repr(str(name)[:37] + "...")
        raise SessionError(
            f"session name {shown} is not allowed: use 1-64 letters, digits, '_', '.', '-' "
            "(not starting with '.' or '-')"
        )
    return name


def parse_key(text: str) -> Key:
    """A key as typed on the command line: digits make an int key, else a checked str key."""
    if isinstance(text, str) and _INT_KEY_RE.fullmatch(text):
        return int(text)
    return check_key(text)


def parse_keys(text: str) -> list[Key]:
    """``"5,7,9"`` -> ``[5, 7, 9]`` (each checked); a key may not repeat."""
    keys = [parse_key(part) for part in text.split(",")] if text else [parse_key(text)]
    if len(set(keys)) != len(keys):
        raise KeyTypeError(f"key list {text!r} names a key twice: give each key once")
    return keys


def check_key(key: Any) -> Key:
    """Validate a key for the session: an int >= 0 or a str of the allowed characters."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        if 0 <= int(key) < 10**18:
            return int(key)
        raise KeyTypeError(f"key {key!r} is out of range: {KEY_RULE}")
    if isinstance(key, str) and _STR_KEY_RE.fullmatch(key):
        return key
    shown = repr(key) if len(repr(key)) <= 50 else repr(key)[:47] + "..."
    raise KeyTypeError(f"key {shown} is not allowed: {KEY_RULE}")


# ---------------------------------------------------------------------- the manifest
@dataclass
class KeyEntry:
    """What the manifest records about one key."""

    key: Key
    file: str
    dtype: str
    shape: tuple[int, ...]
    version: int = 1
    #: A file with an older value of the same shape and dtype, overwritten by the next write.
    spare: str | None = None
    #: The gradient-compression residuals of the key (an .npz), once a compressed push ran.
    residual: str | None = None

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    @property
    def signature(self) -> tuple[str, int]:
        """What identifies this committed value (files are reused, versions are not)."""
        return self.file, self.version

    def to_json(self) -> dict[str, Any]:
        data = {"key": self.key, "file": self.file, "dtype": self.dtype, "shape": list(self.shape), "version": self.version}
        if self.spare:
            data["spare"] = self.spare
        if self.residual:
            data["residual"] = self.residual
        return data


@dataclass
class Manifest:
    """The committed state of a session (file names, not data)."""

    store_type: str = "local"
    store_options: dict[str, Any] = field(default_factory=dict)
    updater: str = "assign"
    optimizer_state: str | None = None
    generation: int = 0
    keys: dict[Key, KeyEntry] = field(default_factory=dict)
    #: gradient compression spec (``"2bit:threshold=0.5"``) or None; each key's residuals
    #: are in its entry's ``residual`` file.
    compression: str | None = None
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    #: for a ``python:`` updater: the file the user named, its sha256 and MAC (see kvcli.session_trust)
    updater_trust: Trust | None = None

    @property
    def key_kind(self) -> str | None:
        if not self.keys:
            return None
        return "int" if isinstance(next(iter(self.keys)), int) else "str"

    def files(self) -> set[str]:
        names = {entry.file for entry in self.keys.values()}
        names.update(entry.spare for entry in self.keys.values() if entry.spare)
        names.update(entry.residual for entry in self.keys.values() if entry.residual)
        if self.optimizer_state:
            names.add(self.optimizer_state)
        return names

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "generation": self.generation,
            "created": self.created,
            "updated": self.updated,
            "store": {"type": self.store_type, "options": self.store_options},
            "updater": self.updater,
            "updater_trust": self.updater_trust.to_json() if self.updater_trust else None,
            "optimizer_state": self.optimizer_state,
            "compression": self.compression,
            "key_kind": self.key_kind,
            "keys": [entry.to_json() for entry in self.keys.values()],
        }

    @classmethod
    def from_json(cls, data: Any, where: Path) -> "Manifest":
        """Validate and read a manifest; every problem is a :class:`SessionError` naming ``where``."""

        def bad(problem: str) -> SessionError:
            return corrupted(where, problem)

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise bad("it is not a kvcli session manifest")
        version = data.get("format_version")
        if not isinstance(version, int):
            raise bad("format_version is missing")
        if version > FORMAT_VERSION:
            raise SessionError(
                f"{where} was written by a newer kvcli (session format {version}, this kvcli reads "
                f"{FORMAT_VERSION}): upgrade kvcli"
            )
        try:
            validate(data)
        except ManifestProblem as problem:
            raise bad(str(problem)) from None
        store = data["store"]
        trust = data.get("updater_trust")
        manifest = cls(
            store["type"], dict(store["options"]), data["updater"], data["optimizer_state"], data["generation"],
            created=float(data.get("created", 0)), updated=float(data.get("updated", 0)),
            updater_trust=Trust(**trust) if trust else None,
        )
        manifest.compression = _read_compression(data.get("compression"), bad)
        kinds = set()
        for raw in data["keys"]:
            try:
                key = check_key(raw["key"])
            except KeyTypeError as error:
                raise bad(f"a key entry is malformed ({error})") from None
            if key in manifest.keys:
                raise bad(f"key {key!r} has a repeated entry")
            kinds.add(type(key))
            manifest.keys[key] = KeyEntry(
                key, raw["file"], raw["dtype"], tuple(raw["shape"]), raw["version"], raw.get("spare"), raw.get("residual")
            )
        if len(kinds) > 1:
            raise bad("it mixes int and str keys")
        if data.get("key_kind") not in (None, manifest.key_kind):
            raise bad(f"key_kind says {data.get('key_kind')!r} but the keys are {manifest.key_kind}")
        return manifest


def corrupted(path: Path, problem: str) -> SessionError:
    """The error for a damaged session file: names it and says how to recover."""
    found = f"session file {path} is corrupted ({problem}); nothing was changed"
    return SessionError(
        f"{found}: restore the file, or call Session.reset() to start the session over (this deletes its keys)",
        problem=found, remedy="reset",
    )


# ---------------------------------------------------------------------- locking
class _FileLock:
    """An exclusive or shared lock on a file: fcntl.flock on POSIX, filelock elsewhere."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None
        self._fallback: Any = None

    def acquire(self, shared: bool) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            import filelock

            self._fallback = filelock.FileLock(str(self.path), timeout=self.timeout)
            try:
                self._fallback.acquire()
            except filelock.Timeout:
                raise self._busy() from None
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o644)
        except OSError as error:
            raise SessionError(f"cannot open the session lock {self.path}: {error.strerror}") from None
        mode = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
        deadline = time.monotonic() + self.timeout
        delay = 0.0005
        while True:
            try:
                fcntl.flock(fd, mode)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise self._busy() from None
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None
        if self._fallback is not None:  # pragma: no cover - Windows
            self._fallback.release()
            self._fallback = None

    def _busy(self) -> SessionError:
        return SessionError(
            f"session lock {self.path} is held by another kvcli command (waited {self.timeout:g} s): "
            "try again when it finishes, or raise KVCLI_LOCK_TIMEOUT"
        )


def _lock_timeout() -> float:
    return float(config.get(config.LOCK_TIMEOUT))


# ---------------------------------------------------------------------- file helpers
def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _remove_empty_dir(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:  # not empty, or not there: keep it
        pass


def _crash_point(name: str) -> None:
    """Test hook: ``KVCLI_TEST_CRASH_POINT=name`` kills this process here (as SIGKILL would)."""
    if config.raw(config.CRASH_POINT) == name:
        import signal

        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


#: errno values that mean the disk cannot take the write, with how to say so.
_DISK_PROBLEMS = {
    "ENOSPC": "no space left on the device",
    "EDQUOT": "the disk quota is exceeded",
    "EROFS": "the file system is read-only",
    "EIO": "an input/output error (a failing disk?)",
}


class DiskError(SessionError):
    """A session file could not be written (a full, read-only or failing disk)."""

    def __init__(self, message: str, errno_: int | None) -> None:
        super().__init__(message)
        self.errno = errno_

    @property
    def no_space(self) -> bool:
        import errno

        return self.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def disk_error(path: Path, error: OSError, needed: int | None = None) -> DiskError:
    """The one-line error for a failed write: the path, the cause, the space needed and free."""
    import errno

    names = {getattr(errno, name, None): text for name, text in _DISK_PROBLEMS.items()}
    cause = names.get(error.errno) or error.strerror or str(error)
    detail = ""
    if needed is not None and error.errno in (getattr(errno, "ENOSPC", None), getattr(errno, "EDQUOT", None)):
        detail = f"; it needs {_human(needed)}"
        try:
            usage = os.statvfs(path.parent)
            detail += f", {_human(usage.f_bavail * usage.f_frsize)} are free"
        except OSError:
            pass
    return DiskError(
        f"cannot write {path}: {cause}{detail}; nothing was changed: free some space (or fix the disk) and try again",
        error.errno,
    )


def _human(size: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} bytes"  # pragma: no cover


def write_npy(path: Path, array: np.ndarray, overwrite: bool = False) -> None:
    """Write ``array`` as a ``.npy`` session file and fsync it (never pickled, never through
    a symlink); on a full or failing disk the new file is removed and the error is a
    :class:`SessionError` naming the path and the space needed.

    ``overwrite`` rewrites an existing file of the same size in place (no truncation, so
    its blocks are reused); otherwise the file must not exist yet.
    """
    try:
        write_file(path, array, overwrite=overwrite)
    except NpyError as error:
        raise SessionError(f"session file {path} {error}; nothing was written to it") from None
    except OSError as error:
        raise disk_error(path, error, int(array.nbytes) + 128) from None


def _npy_error(path: Path, error: NpyError) -> SessionError:
    if error.kind == "pickle":
        return _pickled(path)
    if error.kind == "missing":
        return corrupted(path, "the file is missing")
    return corrupted(path, str(error))


def read_npy(path: Path, dtype: str | None = None, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Read a session ``.npy`` file (a regular file, not a symlink; big ones mapped) with the
    one reader of :mod:`kvcli.npyio`; a damaged file is a :class:`SessionError` naming it."""
    try:
        return read_array(path, dtype=dtype, shape=shape, session_file=True)
    except NpyError as error:
        raise _npy_error(path, error) from None


def check_npy(path: Path, dtype: str, shape: tuple[int, ...]) -> None:
    """Check a value file without reading its data: header, dtype, shape and size."""
    try:
        check_file(path, dtype, shape)
    except NpyError as error:
        raise _npy_error(path, error) from None


def _pickled(path: Path) -> SessionError:
    found = f"session file {path} holds pickled Python objects, which kvcli refuses to load; nothing was changed"
    return SessionError(f"{found}: call Session.reset() to start the session over", problem=found, remedy="reset")


def _same_size(path: Path, other: Path) -> bool:
    """Both are regular files (not symlinks) of the same size: the spare can be reused."""
    import stat as stat_

    try:
        first, second = os.lstat(path), os.lstat(other)
    except OSError:
        return False
    return stat_.S_ISREG(first.st_mode) and stat_.S_ISREG(second.st_mode) and first.st_size == second.st_size


def _new_file(suffix: str) -> str:
    return uuid.uuid4().hex + suffix


# ---------------------------------------------------------------------- the session
ValuesFor = Callable[[Key, KeyEntry], Any]


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


class Session:
    """A named, persistent KVStore session (see the module docs).

    Args:
        name: the session name (default: ``KVCLI_SESSION`` or ``default``).
        home: the folder holding the sessions (default: :func:`default_home`).
        store_type: the store type a *new* session gets; for an existing session, a
            different type is an error (change it with :meth:`reset`).
        store_options: options of the store (``num_devices``, ``address``, ``num_servers``);
            checked the same way.

    Each method locks the session, does one operation and commits. The object keeps its
    store between calls; call :meth:`close` (or use ``with``) to stop it.
    """

    def __init__(
        self,
        name: str | None = None,
        home: str | Path | None = None,
        *,
        store_type: str | None = None,
        store_options: dict[str, Any] | None = None,
    ) -> None:
        if name is None:
            name = config.get(config.SESSION) or DEFAULT_SESSION
        self.name = check_session_name(name)
        self.home = Path(home).expanduser() if home is not None else default_home()
        self.path = self.home / "sessions" / self.name
        self.requested_type = _normal_type(store_type) if store_type else None
        self.requested_options = {k: v for k, v in (store_options or {}).items() if v is not None}
        if self.requested_type:
            _check_options(self.requested_type, self.requested_options)
        self._store: Any = None
        self._store_sig: tuple[str, str] | None = None
        self._loaded: dict[Key, tuple[str, int]] = {}  # key -> signature of the value the store holds
        self._updater_sig: tuple[str, str | None] | None = None
        self._manifest: Manifest | None = None
        #: what the last operation wants the user to know (e.g. an import that dropped code)
        self.notices: list[str] = []
        self._residuals: dict[Key, str | None] = {}  # key -> residual file the live store holds

    # ------------------------------------------------------------------ context
    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the store (device workers, connections). The session on disk stays."""
        store, self._store = self._store, None
        self._store_sig = None
        self._loaded = {}
        self._updater_sig = None
        self._residuals = {}
        if store is not None:
            store.close()

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def exists(self) -> bool:
        """Whether the session has been created on disk."""
        return self.manifest_path.exists()

    def peek_keys(self) -> list[Key]:
        """The committed keys, read without the lock (for completion; [] on any problem)."""
        try:
            manifest = self._read_manifest()
        except SessionError:
            return []
        return list(manifest.keys) if manifest else []

    @property
    def store(self) -> Any:
        """The live store (None until a command needed one)."""
        return self._store

    # ------------------------------------------------------------------ operations
    def init(self, keys: Sequence[Key], values: Sequence[Any]) -> list[tuple[KeyEntry, bool]]:
        """Initialise ``keys`` with ``values`` (one per key); an existing key is reset.

        Returns each key's new entry and whether it existed before (re-initialised).
        """
        keys = [check_key(k) for k in keys]
        with self._transaction(write=True, create=True) as txn:
            manifest = txn.manifest
            self._check_kinds(manifest, keys)
            from kvcli.store.sparse import ROW_SPARSE, stype_of

            for key, value in zip(keys, values):  # files hold dense arrays only
                if stype_of(value) == ROW_SPARSE:
                    raise KeyTypeError(
                        f"init of key {key!r}: a session stores dense values, not row-sparse ones; "
                        "convert with .tostype('default') or use a store from kvcli.create()"
                    )
            arrays = [np.asarray(v) for v in values]
            for key, array in zip(keys, arrays):
                if array.dtype.name not in _SAFE_DTYPES:
                    raise KeyTypeError(f"init of key {key!r}: dtype {array.dtype} cannot be stored; use a numeric dtype")
            store = self._store_for(manifest, [])
            if manifest.optimizer_state:
                self._sync_updater(manifest)
            txn.at_risk.extend(keys)
            store.init(list(keys), arrays)
            for key in keys:
                self._residuals.pop(key, None)  # init reset them; the new entry has none
            results = []
            for key in keys:
                info = store.info(key)
                old = manifest.keys.get(key)
                manifest.keys[key] = KeyEntry(key, "", info.dtype.name, tuple(info.shape), old.version + 1 if old else 1)
                results.append((manifest.keys[key], old is not None))
                txn.touch(key)
            txn.save_state = self._stateful(manifest)
        return results

    def push(self, keys: Sequence[Key], values: Sequence[Any] | ValuesFor) -> list[KeyEntry]:
        """Push to each key: ``values[i]`` is one array or a list of per-device arrays.

        ``values`` may also be a function ``(key, entry) -> value`` called under the lock
        (so a value can be built in the stored dtype).
        """
        keys = [check_key(k) for k in keys]
        with self._transaction(write=True, create=False) as txn:
            manifest = txn.manifest
            entries = [self._entry(manifest, key) for key in keys]
            if callable(values):
                values = [values(key, entry) for key, entry in zip(keys, entries)]
            values = list(values)
            # compressed pushes change the value, so they all go through the store
            replace = {} if manifest.compression else self._replacing_push(manifest, keys, entries, values)
            store = self._store_for(manifest, [k for k in keys if k not in replace])
            self._sync_updater(manifest)
            self._sync_compression(manifest)
            if manifest.compression:
                self._sync_residuals(manifest, keys)
                txn.residuals.extend(keys)
            txn.at_risk.extend(keys)
            # assign + one value: the old value is neither read nor loaded; the new one goes
            # straight from the caller's array to the file
            txn.direct.update(replace)
            rest = [(k, v) for k, v in zip(keys, values) if k not in replace]
            if rest:
                store.push([k for k, _ in rest], [v for _, v in rest])
            for entry in entries:
                entry.version += 1
                txn.touch(entry.key)
            txn.save_state = self._stateful(manifest)
        return entries

    def _replacing_push(
        self, manifest: Manifest, keys: Sequence[Key], entries: Sequence[KeyEntry], values: Sequence[Any]
    ) -> dict[Key, np.ndarray]:
        """Pushes that simply replace the stored value: the updater is ``assign`` and one
        array (not a list of per-device arrays) is pushed to a key the store has not loaded.
        They are checked like a push, then set with ``init`` (same result, no read)."""
        from kvcli.errors import DTypeMismatchError, ShapeMismatchError
        from kvcli.store.base import as_numpy, is_value_list

        if manifest.updater != "assign":
            return {}
        found: dict[Key, np.ndarray] = {}
        for key, entry, value in zip(keys, entries, values):
            if key in self._loaded or is_value_list(value):
                continue
            check_npy(self.path / DATA / entry.file, entry.dtype, entry.shape)  # damaged: refuse
            array = as_numpy(value)
            if array.shape != tuple(entry.shape):
                raise ShapeMismatchError(
                    f"push of key {key!r}: shape {array.shape} does not match the stored "
                    f"{tuple(entry.shape)}; use an array of shape {tuple(entry.shape)} or init the key again"
                )
            if array.dtype.name != entry.dtype:
                raise DTypeMismatchError(
                    f"push of key {key!r}: dtype {array.dtype} does not match the stored "
                    f"{entry.dtype}; convert with .astype('{entry.dtype}') or init the key again"
                )
            found[key] = array
        return found

    def pull(self, keys: Sequence[Key], devices: int = 1) -> list[list[np.ndarray]]:
        """Pull each key into ``devices`` outputs; returns, per key, the list of copies."""
        keys = [check_key(k) for k in keys]
        if devices < 1:
            raise KeyTypeError(f"--devices must be at least 1, not {devices}")
        with self._transaction(write=False) as txn:
            manifest = txn.manifest
            entries = [self._entry(manifest, key) for key in keys]
            store = self._store_for(manifest, keys)
            outs = [[np.empty(e.shape, e.dtype) for _ in range(devices)] for e in entries]
            store.pull(list(keys), out=outs)
        return outs

    def set_updater(self, spec: str) -> str:
        """Set the updater from a spec string (see :mod:`kvcli.updaters`); returns its spec.

        A ``python:FILE.py:FUNC`` path is made absolute so later commands find it. The
        optimizer state starts afresh.
        """
        spec = _absolute_python_spec(spec.strip())
        with self._transaction(write=True, create=True) as txn:
            manifest = txn.manifest
            store = self._store_for(manifest, [])
            python = _python_spec(spec)
            if python is not None:  # the user names this file now: record what it is
                from kvcli.session_trust import trust_file
                from kvcli.optim.spec import python_updater

                trust, source = trust_file(self.home, python[0])
                store.set_updater(python_updater(python[0], python[1], source))
            else:
                trust = None
                store.set_updater(spec)
            new_spec = store.updater_spec
            manifest.updater = new_spec
            manifest.updater_trust = trust
            manifest.optimizer_state = None
            self._updater_sig = self._updater_signature(manifest)
            txn.dirty = True
            txn.save_state = False
        return new_spec

    def set_compression(self, spec: str | None) -> str | None:
        """Set gradient compression (``"2bit:threshold=0.5"``, ``"none"`` or None to turn it
        off; see :mod:`kvcli.store.compression`); returns the spec the session records."""
        with self._transaction(write=True, create=True) as txn:
            manifest = txn.manifest
            store = self._store_for(manifest, [])
            self._sync_compression(manifest)
            store.set_gradient_compression(spec)
            active = store.gradient_compression
            manifest.compression = None if active is None else active.spec
            if active is None:  # off: the residuals are gone (on again starts from zero)
                for entry in manifest.keys.values():
                    entry.residual = None
                self._residuals = {}
            txn.dirty = True
        return manifest.compression

    def _sync_compression(self, manifest: Manifest) -> None:
        """Give the live store the manifest's compression (another process may have set it)."""
        active = self._store.gradient_compression
        if (None if active is None else active.spec) != manifest.compression:
            self._store.set_gradient_compression(manifest.compression)
            if active is None or manifest.compression is None:
                self._residuals = {}  # the store's residuals started or ended with this

    def _sync_residuals(self, manifest: Manifest, keys: Sequence[Key]) -> None:
        """Give the live store each key's committed compression residuals (error feedback
        carries on across commands and processes, as within one MXNet process)."""
        from kvcli.errors import StoreError
        from kvcli.store.compression import load_residuals

        for key in keys:
            want = manifest.keys[key].residual
            if self._residuals.get(key) == want:
                continue
            arrays: list[np.ndarray] = []
            if want:
                try:
                    arrays = load_residuals(self.path / DATA / want)
                except (OSError, ValueError, StoreError) as error:
                    raise corrupted(self.path / DATA / want, f"compression residuals unreadable: {error}") from None
            self._store.set_compression_residuals(key, arrays)
            self._residuals[key] = want

    def delete(self, keys: Sequence[Key]) -> list[KeyEntry]:
        """Forget ``keys`` (and their optimizer state)."""
        keys = [check_key(k) for k in keys]
        with self._transaction(write=True, create=False) as txn:
            manifest = txn.manifest
            entries = [self._entry(manifest, key) for key in keys]
            store = self._store_for(manifest, [])
            if manifest.optimizer_state:
                self._sync_updater(manifest)
            for key in keys:
                if store.has(key):
                    store.delete(key)
                    self._loaded.pop(key, None)
                else:
                    reset = getattr(store.updater, "reset", None)
                    if reset is not None:
                        reset(key)
                self._residuals.pop(key, None)
                del manifest.keys[key]
            txn.dirty = True
            txn.save_state = self._stateful(manifest)
        return entries

    def keys(self) -> list[Key]:
        """The session's keys, in the order they were first initialised."""
        with self._transaction(write=False) as txn:
            return list(txn.manifest.keys)

    def entries(self) -> list[KeyEntry]:
        """The manifest entry of every key."""
        with self._transaction(write=False) as txn:
            return list(txn.manifest.keys.values())

    def describe(self) -> dict[str, Any]:
        """Everything ``kvcli show`` prints: store, updater, and each key's entry."""
        with self._transaction(write=False) as txn:
            m = txn.manifest
            warnings = []
            python = _python_spec(m.updater)
            if python is not None:
                problem = self.updater_problem(m)
                warnings.append(
                    f"this session runs Python code from {python[0]} (function {python[1]}) on every push"
                    + (f"; it is refused now: {problem}" if problem else "; check that the file is yours")
                )
            return {
                "warnings": warnings,
                "session": self.name,
                "path": str(self.path),
                "exists": self.exists(),
                "store": {"type": m.store_type, "options": dict(m.store_options)},
                "updater": m.updater,
                "compression": m.compression,
                "optimizer_state": m.optimizer_state is not None,
                "generation": m.generation,
                "keys": [
                    {"key": e.key, "shape": list(e.shape), "dtype": e.dtype, "version": e.version, "nbytes": e.nbytes}
                    for e in m.keys.values()
                ],
            }

    def reset(self, store_type: str | None = None, store_options: dict[str, Any] | None = None) -> Manifest:
        """Delete every key, the updater and its state; optionally change the store type.

        Works on a damaged session too (the manifest is not read, except for its store type).
        """
        if store_type:
            self.requested_type = _normal_type(store_type)
            self.requested_options = {k: v for k, v in (store_options or {}).items() if v is not None}
            _check_options(self.requested_type, self.requested_options)
        with self._locked(shared=False, create=True):
            old = None
            try:
                old = self._read_manifest()
            except SessionError:
                pass
            if self.requested_type:
                store_type_, options = self.requested_type, dict(self.requested_options)
            elif old is not None:
                store_type_, options = old.store_type, dict(old.store_options)
            else:
                store_type_, options = "local", {}
            manifest = Manifest(store_type_, options, generation=(old.generation if old else 0))
            self._close_store_if_changed(manifest)
            self._loaded.clear()
            self._residuals = {}
            if self._store is not None:
                for key in list(self._store.keys()):
                    self._store.delete(key)
                self._store.set_updater(None)
                self._store.set_gradient_compression(None)
            self._updater_sig = None
            try:
                self._write_manifest(manifest)
            except DiskError as error:
                if not error.no_space:
                    raise
                # A full disk: every key goes anyway, so free their files first. A crash in
                # between leaves a session without files, which `reset` repairs.
                self._collect_garbage(Manifest(store_type_, options))
                self._write_manifest(manifest)
            self._collect_garbage(manifest)
        return manifest

    def export(self, folder: str | Path) -> Path:
        """Copy the committed session into ``folder`` (same format; ``import`` reads it)."""
        folder = Path(folder).expanduser()
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise SessionError(f"export folder {folder} exists and is not empty: choose a new folder")
        with self._transaction(write=False) as txn:
            manifest = txn.manifest
            if not self.exists():
                raise SessionError(f"session {self.name!r} does not exist yet: nothing to export")
            (folder / DATA).mkdir(parents=True, exist_ok=True)
            for name in sorted(manifest.files()):
                _copy_file(self.path / DATA / name, folder / DATA / name)
            _write_json(folder / MANIFEST, manifest.to_json())
            _fsync_dir(folder / DATA)
            _fsync_dir(folder)
        return folder

    def import_(self, folder: str | Path) -> Manifest:
        """Replace the session's keys, updater and optimizer state by an exported copy.

        Everything in ``folder`` is validated before the session changes; the session
        keeps its own store type.
        """
        folder = Path(folder).expanduser()
        source = _load_manifest_file(folder / MANIFEST)
        if source is None:
            raise SessionError(f"{folder} is not a kvcli export: it has no {MANIFEST}")
        for entry in source.keys.values():
            read_npy(folder / DATA / entry.file, entry.dtype, entry.shape)  # validate every array
        if source.optimizer_state:
            state_path = folder / DATA / source.optimizer_state
            _check_regular(state_path, "the optimizer state file")
            from kvcli.updaters import load_state

            load_state(state_path, None)
        with self._transaction(write=True, create=True) as txn:
            manifest = txn.manifest
            manifest.keys = {}
            for key, entry in source.keys.items():
                name = _new_file(".npy")
                _copy_file(folder / DATA / entry.file, self.path / DATA / name)
                manifest.keys[key] = KeyEntry(key, name, entry.dtype, entry.shape, entry.version)
            manifest.updater = source.updater
            manifest.updater_trust = None
            self.notices = []
            if _python_spec(source.updater) is not None:  # an export never brings code to run
                manifest.updater = "assign"
                self.notices.append(
                    f"the exported updater {source.updater} was not adopted (an import never brings code to run); "
                    "the session uses assign: set the updater again if you trust that file"
                )
            manifest.optimizer_state = None
            if source.optimizer_state and manifest.updater != "assign":
                manifest.optimizer_state = _new_file(".npz")
                _copy_file(folder / DATA / source.optimizer_state, self.path / DATA / manifest.optimizer_state)
            txn.dirty = True
        return manifest

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def _locked(self, shared: bool, create: bool) -> Iterator[bool]:
        """Hold the session lock; yields False (no lock) when the session does not exist
        and ``create`` is false."""
        if not self.path.is_dir():
            if not create:
                yield False
                return
            try:
                (self.path / DATA).mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise SessionError(f"cannot create the session folder {self.path}: {error.strerror}") from None
        data = self.path / DATA
        if data.is_symlink():  # O_NOFOLLOW guards each file; the folder holding them must be real too
            raise corrupted(data, "the data folder is a symbolic link, not a folder inside the session")
        lock = _FileLock(self.path / LOCK, _lock_timeout())
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

    def _entry(self, manifest: Manifest, key: Key) -> KeyEntry:
        entry = manifest.keys.get(key)
        if entry is None:
            known = ", ".join(repr(k) for k in list(manifest.keys)[:8]) or "none"
            found = f"key {key!r} is not initialised in session {self.name!r} (known keys: {known})"
            raise UnknownKeyError(f"{found}: call init({key!r}, value) first", problem=found, remedy="init", key=key)
        return entry

    def _check_kinds(self, manifest: Manifest, keys: Sequence[Key]) -> None:
        kinds = {type(k) for k in keys}
        if manifest.keys:
            kinds.add(type(next(iter(manifest.keys))))
        if len(kinds) > 1:
            held = manifest.key_kind or "mixed"
            found = f"keys {list(keys)!r} mix int and str keys (session {self.name!r} holds {held} keys)"
            raise KeyTypeError(
                f"{found}: use one kind of key per session, or Session.reset()", problem=found, remedy="one-kind"
            )

    # ------------------------------------------------------------------ the live store
    def _close_store_if_changed(self, manifest: Manifest) -> None:
        sig = (manifest.store_type, json.dumps(manifest.store_options, sort_keys=True))
        if self._store is not None and self._store_sig != sig:
            self.close()

    def _store_for(self, manifest: Manifest, keys: Sequence[Key]) -> Any:
        """The live store, holding the committed values of ``keys`` (loaded if needed)."""
        self._close_store_if_changed(manifest)
        if self._store is None:
            import kvcli

            self._check_ray_address(manifest)
            self._store = kvcli.create(manifest.store_type, **manifest.store_options)
            self._store_sig = (manifest.store_type, json.dumps(manifest.store_options, sort_keys=True))
            self._loaded = {}
            self._updater_sig = None
        store = self._store
        for key, signature in list(self._loaded.items()):  # drop what another process changed
            entry = manifest.keys.get(key)
            if entry is None or entry.signature != signature:
                if store.has(key):
                    store.delete(key)
                del self._loaded[key]
                self._residuals.pop(key, None)
        missing = [key for key in keys if key not in self._loaded]
        if missing:
            updater = store.updater
            if updater is not None:  # loading is not a user init: keep the optimizer state
                store.set_updater(None)
            try:
                for key in missing:
                    entry = manifest.keys[key]
                    array = read_npy(self.path / DATA / entry.file, entry.dtype, entry.shape)
                    store.init(key, array)
                    self._loaded[key] = entry.signature
                    self._residuals.pop(key, None)  # init started them from zero
            finally:
                if updater is not None:
                    store.set_updater(updater)
        return store

    @staticmethod
    def _updater_signature(manifest: Manifest) -> tuple[str, str | None, str | None]:
        trust = manifest.updater_trust
        return manifest.updater, manifest.optimizer_state, trust.mac if trust else None

    def _check_ray_address(self, manifest: Manifest) -> None:
        """A Ray address from the manifest alone is used only when it is on this machine:
        anything else must be confirmed by the caller (``--ray-address`` / the store
        options asked for, or ``KVCLI_RAY_ADDRESS``), so a folder cannot send pulls anywhere."""
        address = manifest.store_options.get("address")
        if not address or _is_loopback_address(address):
            return
        if address in (self.requested_options.get("address"), config.get(config.RAY_ADDRESS)):
            return
        raise SessionError(
            f"session {self.name!r} names the Ray cluster {address!r}, which is not on this machine; kvcli "
            "connects to it only when you confirm it: pass --ray-address with that address, or set KVCLI_RAY_ADDRESS"
        )

    def updater_problem(self, manifest: Manifest) -> str | None:
        """Why the session's ``python:`` updater would be refused (None: it would run, or it is
        not a python updater)."""
        python = _python_spec(manifest.updater)
        if python is None:
            return None
        from kvcli.session_trust import verified_source

        try:
            verified_source(self.home, python[0], manifest.updater_trust)
        except SessionError as error:
            return str(error)
        return None

    def _sync_updater(self, manifest: Manifest) -> None:
        sig = self._updater_signature(manifest)
        if self._updater_sig == sig:
            return
        from kvcli.errors import KVCliError

        store = self._store
        python = _python_spec(manifest.updater)
        try:
            if python is not None:  # only code the user named here, with the content they named
                from kvcli.session_trust import verified_source
                from kvcli.optim.spec import python_updater

                source, _digest = verified_source(self.home, python[0], manifest.updater_trust)
                store.set_updater(python_updater(python[0], python[1], source))
            else:
                store.set_updater(manifest.updater)
        except KVCliError as error:
            if isinstance(error, SessionError):
                raise

            found = f"the session's updater {manifest.updater!r} cannot be set up ({error})"
            raise SessionError(
                f"{found}: choose another with Session.set_updater(spec)", problem=found, remedy="set-updater"
            ) from None
        if manifest.optimizer_state:
            path = self.path / DATA / manifest.optimizer_state
            _check_regular(path, "the optimizer state file")
            try:
                store.load_optimizer_states(path)
            except KVCliError as error:
                raise corrupted(path, str(error)) from None
        self._updater_sig = sig

    def _stateful(self, manifest: Manifest) -> bool:
        """Whether the live updater is the manifest's and keeps state worth saving."""
        return (
            self._store is not None
            and self._updater_sig == self._updater_signature(manifest)
            and hasattr(self._store.updater, "state_dict")
        )

    def _invalidate(self, keys: Sequence[Key]) -> None:
        """After a failed command the store may hold uncommitted values: forget them."""
        store = self._store
        if store is None:
            return
        for key in keys:
            if key in self._loaded:
                del self._loaded[key]
            self._residuals.pop(key, None)
            try:
                if store.has(key):
                    store.delete(key)
            except Exception:  # pragma: no cover - a dying store
                self.close()
                return
        self._updater_sig = None

    # ------------------------------------------------------------------ commit
    def _commit(self, txn: _Txn) -> None:
        manifest = txn.manifest
        data = self.path / DATA
        data.mkdir(parents=True, exist_ok=True)
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
        tmp = self.path / f".{MANIFEST}.{os.getpid()}.tmp"
        _write_json(tmp, manifest.to_json())
        _crash_point("before-manifest")
        os.replace(tmp, self.manifest_path)
        _fsync_dir(self.path)
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


# ---------------------------------------------------------------------- listing
def list_sessions(home: str | Path | None = None) -> list[dict[str, Any]]:
    """Every session under ``home``: name, store type, updater, key count, or its problem."""
    root = (Path(home).expanduser() if home is not None else default_home()) / "sessions"
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir()):
        if not folder.is_dir() or not _SESSION_RE.fullmatch(folder.name):
            continue
        row: dict[str, Any] = {"session": folder.name, "path": str(folder)}
        try:
            manifest = _load_manifest_file(folder / MANIFEST)
        except (SessionError, OSError) as error:  # one damaged session must not hide the others
            row["error"] = str(error)
        else:
            if manifest is None:  # only a lock file: a first command failed or is running
                continue
            else:
                row.update(
                    type=manifest.store_type,
                    options=manifest.store_options,
                    updater=manifest.updater,
                    keys=len(manifest.keys),
                    bytes=sum(e.nbytes for e in manifest.keys.values()),
                    updated=manifest.updated,
                )
        found.append(row)
    return found


# ---------------------------------------------------------------------- helpers
def _load_manifest_file(path: Path) -> Manifest | None:
    """The manifest at ``path`` (None if there is none), validated; never follows a symlink."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as error:
        import errno

        if error.errno == errno.ELOOP:
            raise corrupted(path, "it is a symbolic link, not a file of the session") from None
        raise SessionError(f"cannot read {path}: {error.strerror}") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            import stat as stat_

            if not stat_.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise corrupted(path, "it is not a regular file")
            raw = handle.read(MAX_MANIFEST_BYTES + 1)
    except OSError as error:
        raise SessionError(f"cannot read {path}: {error.strerror}") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise corrupted(path, f"it is over {MAX_MANIFEST_BYTES >> 20} MiB")
    try:
        data = json.loads(raw)
    except RecursionError:
        raise corrupted(path, "JSON nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as error:  # also a 5000-digit number
        raise corrupted(path, f"not valid JSON: {str(error)[:120]}") from None
    return Manifest.from_json(data, path)


def _write_json(path: Path, payload: Any) -> None:
    """Write ``payload`` to a new file (never through a symlink) and fsync it; on failure
    nothing is left behind and the error names the path."""
    data = json.dumps(payload, indent=1, ensure_ascii=False).encode()
    remove_quietly(path)  # a stale temporary file (or a planted symlink) of the same name
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
    except OSError as error:
        raise disk_error(path, error, len(data)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as error:
        remove_quietly(path)
        raise disk_error(path, error, len(data)) from None


def _copy_file(source: Path, target: Path) -> None:
    """Copy a regular file (a symlink in the source is refused) into a new file."""
    import shutil
    import stat as stat_

    try:
        src_fd = os.open(source, os.O_RDONLY | NOFOLLOW)
    except OSError as error:
        raise SessionError(f"cannot read {source}: {error.strerror} (a session file must be a regular file)") from None
    with os.fdopen(src_fd, "rb") as src:
        info = os.fstat(src.fileno())
        if not stat_.S_ISREG(info.st_mode):
            raise SessionError(f"cannot copy {source}: it is not a regular file")
        try:
            dst_fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
        except OSError as error:
            raise disk_error(target, error, info.st_size) from None
        try:
            with os.fdopen(dst_fd, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
                dst.flush()
                os.fsync(dst.fileno())
        except OSError as error:
            remove_quietly(target)
            raise disk_error(target, error, info.st_size) from None


def _normal_type(store_type: str) -> str:
    """The canonical name of a store type (the registry in :mod:`kvcli.store` decides)."""
    from kvcli.errors import StoreError
    from kvcli.store import resolve

    try:
        return resolve(store_type).name
    except StoreError as error:
        raise SessionError(str(error)) from None


def _read_compression(raw: Any, bad: Callable[[str], SessionError]) -> str | None:
    """The manifest's compression spec, validated (a damaged one is a corrupted session)."""
    if raw is None:
        return None
    from kvcli.errors import StoreError
    from kvcli.store.compression import parse_compression

    try:
        spec = parse_compression(raw) if isinstance(raw, str) else None
    except StoreError as error:
        raise bad(f"compression {raw!r} is not valid ({error})") from None
    if spec is None:
        raise bad(f"compression {raw!r} is not a compression spec")
    return spec.spec


def _check_options(store_type: str, options: dict[str, Any]) -> None:
    from kvcli.store import REGISTRY

    allowed = REGISTRY[store_type].session_options
    for option in options:
        if option not in allowed:
            flag = "--" + option.replace("_", "-").replace("address", "ray-address")
            raise SessionError(
                f"{flag} does not apply to the {store_type!r} store"
                + (f" (it takes {', '.join(allowed)})" if allowed else "")
            )


def check_store_request(store_type: str, options: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """Normalise and check a requested store type and its options."""
    kind = _normal_type(store_type)
    given = {k: v for k, v in (options or {}).items() if v is not None}
    _check_options(kind, given)
    return kind, given


def _absolute_python_spec(spec: str) -> str:
    """A ``python:`` spec with its path resolved now, against the caller's directory."""
    python = _python_spec(spec)
    if python is None:
        return spec
    return f"python:{Path(python[0]).expanduser().resolve()}:{python[1]}"


def _check_regular(path: Path, what: str) -> None:
    """``path`` is a regular file, not a symlink (files read by name, such as the optimizer
    state's zip archive, get this check instead of O_NOFOLLOW)."""
    import stat as stat_

    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise corrupted(path, f"{what} is missing") from None
    except OSError as error:
        raise SessionError(f"cannot read {path}: {error.strerror}") from None
    if stat_.S_ISLNK(info.st_mode):
        raise corrupted(path, f"{what} is a symbolic link, not a file inside the session")
    if not stat_.S_ISREG(info.st_mode):
        raise corrupted(path, f"{what} is not a regular file")


def _python_spec(spec: str) -> tuple[str, str] | None:
    """``(path, function)`` of a ``python:PATH:FUNC`` spec, else None."""
    name, sep, rest = spec.partition(":")
    if name.strip().lower() != "python" or not sep:
        return None
    path, sep, function = rest.rpartition(":")
    if not sep or not path or not function:
        return None
    return path, function


def _is_loopback_address(address: str) -> bool:
    """Whether a Ray address stays on this machine: ``auto``/``local``, or a loopback host."""
    import ipaddress

    text = address.strip()
    if text.lower() in ("auto", "local"):
        return True
    if "://" in text:
        text = text.split("://", 1)[1]
    host = text.rsplit("@", 1)[-1]
    if host.startswith("["):  # [::1]:6379
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    host = host.split("/", 1)[0]
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
