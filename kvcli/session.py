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

from kvcli.errors import KeyTypeError, SessionError, UnknownKeyError

Key = Union[int, str]

FORMAT = "kvcli-session"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DATA = "data"
LOCK = ".lock"
DEFAULT_SESSION = "default"
DEFAULT_LOCK_TIMEOUT = 120.0
MMAP_BYTES = 1 << 20  # files at least this big are read through mmap (one copy, not two)
#: Values at least this big keep their previous file as a spare that the next write
#: overwrites in place: rewriting existing blocks costs less than allocating a new file
#: and freeing the old one (about 0.6x on ext4 for 256 MiB), for twice the disk space.
RECYCLE_BYTES = 1 << 20

_SESSION_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
_INT_KEY_RE = re.compile(r"[0-9]{1,18}")
_STR_KEY_RE = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_FILE_RE = re.compile(r"[0-9a-f]{32}\.(npy|npz)")
_SAFE_DTYPES = frozenset(
    "float16 float32 float64 int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool".split()
)
KEY_RULE = "keys are whole numbers (e.g. 3) or 1-128 letters, digits, '_', '.', '-' (e.g. fc1.weight)"


# ---------------------------------------------------------------------- names and keys
def default_home() -> Path:
    """``KVCLI_HOME``, else the platform's user-data folder for kvcli."""
    env = os.environ.get("KVCLI_HOME")
    if env:
        return Path(env).expanduser()
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
            store = data["store"]
            store_type = store["type"]
            options = store["options"]
            updater = data["updater"]
            state = data["optimizer_state"]
            generation = data["generation"]
            raw_keys = data["keys"]
        except (KeyError, TypeError) as error:
            raise bad(f"field {error} is missing") from None
        from kvcli.store import REGISTRY

        if store_type not in REGISTRY or not isinstance(options, dict):
            raise bad(f"store type {store_type!r} is not known")
        if not isinstance(updater, str) or not isinstance(generation, int) or not isinstance(raw_keys, list):
            raise bad("updater, generation or keys has the wrong type")
        if state is not None and (not isinstance(state, str) or not _FILE_RE.fullmatch(state)):
            raise bad(f"optimizer_state {state!r} is not a session file name")
        manifest = cls(store_type, options, updater, state, generation,
                       created=float(data.get("created") or 0), updated=float(data.get("updated") or 0))
        manifest.compression = _read_compression(data.get("compression"), bad)
        kinds = set()
        for raw in raw_keys:
            try:
                key = check_key(raw["key"])
                file, dtype, shape, key_version = raw["file"], raw["dtype"], raw["shape"], raw["version"]
            except (KeyError, TypeError, KeyTypeError) as error:
                raise bad(f"a key entry is malformed ({error})") from None
            spare = raw.get("spare")
            for named in (file, spare) if spare is not None else (file,):
                if not isinstance(named, str) or not _FILE_RE.fullmatch(named) or not named.endswith(".npy"):
                    raise bad(f"key {key!r} names the file {named!r}, which is not a session file name")
            if dtype not in _SAFE_DTYPES:
                raise bad(f"key {key!r} has dtype {dtype!r}, which kvcli does not load")
            if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
                raise bad(f"key {key!r} has a malformed shape {shape!r}")
            if not isinstance(key_version, int) or key in manifest.keys:
                raise bad(f"key {key!r} has a malformed or repeated entry")
            residual = raw.get("residual")
            if residual is not None and (not isinstance(residual, str) or not _FILE_RE.fullmatch(residual)
                                         or not residual.endswith(".npz")):
                raise bad(f"key {key!r} names the residual file {residual!r}, which is not a session file name")
            kinds.add(type(key))
            manifest.keys[key] = KeyEntry(key, file, dtype, tuple(shape), key_version, spare, residual)
        if len(kinds) > 1:
            raise bad("it mixes int and str keys")
        return manifest


def corrupted(path: Path, problem: str) -> SessionError:
    """The error for a damaged session file: names it and says how to recover."""
    return SessionError(
        f"session file {path} is corrupted ({problem}); nothing was changed: restore the file, "
        "or run `kvcli reset` to start the session over (this deletes its keys)"
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
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
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
    try:
        return float(os.environ.get("KVCLI_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


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


def _crash_point(name: str) -> None:
    """Test hook: ``KVCLI_TEST_CRASH_POINT=name`` kills this process here (as SIGKILL would)."""
    if os.environ.get("KVCLI_TEST_CRASH_POINT") == name:
        import signal

        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def write_npy(path: Path, array: np.ndarray, overwrite: bool = False) -> None:
    """Write ``array`` as a ``.npy`` file and fsync it (never pickled).

    ``overwrite`` rewrites an existing file of the same size in place (no truncation, so
    its blocks are reused); otherwise the file must not exist yet.
    """
    from numpy.lib import format as npy

    if overwrite:
        handle = os.fdopen(os.open(path, os.O_WRONLY), "wb")
    else:
        handle = open(path, "xb")
    with handle:  # a real file: numpy writes the buffer directly (no copy)
        npy.write_array(handle, array, allow_pickle=False)
        handle.flush()
        os.fsync(handle.fileno())


def read_npy(path: Path, dtype: str | None = None, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Read a ``.npy`` file without pickle; a damaged file is a :class:`SessionError` naming it."""
    try:
        size = path.stat().st_size
        array = np.load(path, allow_pickle=False, mmap_mode="r" if size >= MMAP_BYTES else None)
    except FileNotFoundError:
        raise corrupted(path, "the file is missing") from None
    except ValueError as error:
        if "pickle" in str(error).lower() or "object" in str(error).lower():
            raise SessionError(
                f"session file {path} holds pickled Python objects, which kvcli refuses to load; "
                "nothing was changed: run `kvcli reset` to start the session over"
            ) from None
        raise corrupted(path, f"not a readable .npy file: {error}") from None
    except (OSError, EOFError) as error:
        raise corrupted(path, f"not a readable .npy file: {error}") from None
    if not isinstance(array, np.ndarray):
        raise corrupted(path, "it is not a single array")
    if array.dtype.name not in _SAFE_DTYPES or (dtype is not None and array.dtype.name != dtype):
        raise corrupted(path, f"it holds dtype {array.dtype}, the manifest says {dtype}")
    if shape is not None and array.shape != tuple(shape):
        raise corrupted(path, f"it holds shape {array.shape}, the manifest says {tuple(shape)}")
    return array


def check_npy(path: Path, dtype: str, shape: tuple[int, ...]) -> None:
    """Check a value file without reading its data: header, dtype, shape and size."""
    from numpy.lib import format as npy

    try:
        with open(path, "rb") as handle:
            magic = handle.read(6)
            if magic != npy.MAGIC_PREFIX:
                if magic[:1] == b"\x80":
                    raise SessionError(
                        f"session file {path} holds pickled Python objects, which kvcli refuses to load; "
                        "nothing was changed: run `kvcli reset` to start the session over"
                    )
                raise corrupted(path, "not a .npy file")
            major, _minor = handle.read(2)
            reader = npy.read_array_header_1_0 if major == 1 else npy.read_array_header_2_0
            found_shape, _, found_dtype = reader(handle)
            data_start = handle.tell()
        size = path.stat().st_size
    except FileNotFoundError:
        raise corrupted(path, "the file is missing") from None
    except (OSError, ValueError, EOFError) as error:
        raise corrupted(path, f"not a readable .npy file: {error}") from None
    if found_dtype.hasobject:
        raise SessionError(
            f"session file {path} holds pickled Python objects, which kvcli refuses to load; "
            "nothing was changed: run `kvcli reset` to start the session over"
        )
    if found_dtype.name != dtype or tuple(found_shape) != tuple(shape):
        raise corrupted(path, f"it holds {found_dtype} {tuple(found_shape)}, the manifest says {dtype} {tuple(shape)}")
    expected = data_start + int(np.prod(shape, dtype=np.int64)) * found_dtype.itemsize
    if size != expected:
        raise corrupted(path, f"it has {size} bytes, {expected} expected (truncated?)")


def _same_size(path: Path, other: Path) -> bool:
    try:
        return path.stat().st_size == other.stat().st_size
    except OSError:
        return False


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
            name = os.environ.get("KVCLI_SESSION") or DEFAULT_SESSION
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
            store.set_updater(spec)
            new_spec = store.updater_spec
            manifest.updater = new_spec
            manifest.optimizer_state = None
            self._updater_sig = (new_spec, None)
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
            return {
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
            manifest.optimizer_state = None
            if source.optimizer_state:
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
            try:
                yield txn
                if write and (txn.dirty or (new and create)):
                    self._commit(txn)
            except BaseException:
                self._invalidate([*txn.changed, *txn.at_risk])
                raise

    def _read_manifest(self) -> Manifest | None:
        return _load_manifest_file(self.manifest_path)

    def _check_requested(self, manifest: Manifest) -> None:
        if self.requested_type and self.requested_type != manifest.store_type:
            raise SessionError(
                f"session {self.name!r} uses the {manifest.store_type!r} store, not {self.requested_type!r}: "
                f"to change it, run `kvcli reset --type {self.requested_type}` (this deletes its keys)"
            )
        for option, value in self.requested_options.items():
            if manifest.store_options.get(option) != value:
                flag = "--" + option.replace("_", "-").replace("address", "ray-address")
                raise SessionError(
                    f"session {self.name!r} has {option}={manifest.store_options.get(option)!r}, not {value!r}: "
                    f"to change it, run `kvcli reset --type {manifest.store_type} {flag} {value}` (this deletes its keys)"
                )

    def _entry(self, manifest: Manifest, key: Key) -> KeyEntry:
        entry = manifest.keys.get(key)
        if entry is None:
            known = ", ".join(repr(k) for k in list(manifest.keys)[:8]) or "none"
            raise UnknownKeyError(
                f"key {key!r} is not initialised in session {self.name!r} (known keys: {known}): "
                f"run `kvcli init {key} VALUE` first"
            )
        return entry

    def _check_kinds(self, manifest: Manifest, keys: Sequence[Key]) -> None:
        kinds = {type(k) for k in keys}
        if manifest.keys:
            kinds.add(type(next(iter(manifest.keys))))
        if len(kinds) > 1:
            held = manifest.key_kind or "mixed"
            raise KeyTypeError(
                f"keys {list(keys)!r} mix int and str keys (session {self.name!r} holds {held} keys): "
                "use one kind of key per session, or `kvcli reset`"
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

    def _sync_updater(self, manifest: Manifest) -> None:
        sig = (manifest.updater, manifest.optimizer_state)
        if self._updater_sig == sig:
            return
        from kvcli.errors import KVCliError

        store = self._store
        try:
            store.set_updater(manifest.updater)
        except KVCliError as error:
            raise SessionError(
                f"the session's updater {manifest.updater!r} cannot be set up ({error}): "
                "choose another with `kvcli set-updater SPEC`"
            ) from None
        if manifest.optimizer_state:
            path = self.path / DATA / manifest.optimizer_state
            if not path.exists():
                raise corrupted(path, "the optimizer state file is missing")
            try:
                store.load_optimizer_states(path)
            except KVCliError as error:
                raise corrupted(path, str(error)) from None
        self._updater_sig = sig

    def _stateful(self, manifest: Manifest) -> bool:
        """Whether the live updater is the manifest's and keeps state worth saving."""
        return (
            self._store is not None
            and self._updater_sig == (manifest.updater, manifest.optimizer_state)
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
        for key in txn.changed:
            entry = manifest.keys.get(key)
            if entry is None:
                continue
            direct = txn.direct.get(key)
            self._write_value(data, entry, txn.before.get(key), direct if direct is not None else store.view(key))
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
                save_residuals(data / entry.residual, store.compression_residuals(key))
                self._residuals[key] = entry.residual
        if txn.save_state:
            name = _new_file(".npz")
            store.save_optimizer_states(data / name, dump_optimizer=True)
            manifest.optimizer_state = name
            self._updater_sig = (manifest.updater, name)
        _crash_point("after-data")
        _fsync_dir(data)
        manifest.generation += 1
        manifest.updated = time.time()
        self._write_manifest(manifest)
        self._collect_garbage(manifest)

    @staticmethod
    def _write_value(
        data: Path, entry: KeyEntry, before: tuple[str, str | None, str, tuple[int, ...]] | None, array: np.ndarray
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
        except SessionError as error:
            row["error"] = str(error)
        else:
            if manifest is None:
                row.update(type=None, updater=None, keys=0, bytes=0, updated=None)
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
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SessionError(f"cannot read {path}: {error.strerror}") from None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise corrupted(path, f"not valid JSON: {error}") from None
    return Manifest.from_json(data, path)


def _write_json(path: Path, payload: Any) -> None:
    data = json.dumps(payload, indent=1, ensure_ascii=False).encode()
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _copy_file(source: Path, target: Path) -> None:
    import shutil

    with open(source, "rb") as src, open(target, "xb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
        dst.flush()
        os.fsync(dst.fileno())


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
    name, sep, rest = spec.partition(":")
    if name.strip().lower() != "python" or not sep:
        return spec
    path, sep, function = rest.rpartition(":")
    if not sep or not path:
        return spec
    return f"python:{Path(path).expanduser().resolve()}:{function}"
