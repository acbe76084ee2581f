"""The manifest: what a session holds (store, updater, keys and their files), read from
JSON that is checked field by field (:mod:`kvcli.session.schema`) and written atomically.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, MutableMapping

import numpy as np

from kvcli.errors import KeyTypeError, SessionError, ManifestProblem
from kvcli.arrays.npyio import NOFOLLOW
from kvcli.osutil import atomic_write
from kvcli.session.files import check_npy, corrupted, disk_error, read_npy
from kvcli.session.keytable import KeyTable
from kvcli.session.names import FORMAT, FORMAT_VERSION, Key, check_key
from kvcli.session.schema import MAX_MANIFEST_BYTES, validate

if TYPE_CHECKING:  # read only for a python: updater (hashlib and hmac stay off a pull's path)
    from kvcli.session.trust import Trust


# ---------------------------------------------------------------------- the manifest
class KeyEntry:
    """What the manifest records about one key.

    Attributes:
        key, file, dtype, shape, version: the key, its value's file name, dtype, shape and
            how many writes it has had.
        spare: a file with an older value of the same shape and dtype, overwritten by the
            next write.
        residual: the gradient-compression residuals of the key (an .npz), once a
            compressed push ran.
        data: the value's bytes (little-endian, C order) when it is held in the database
            row (at most :data:`~kvcli.session.names.INLINE_BYTES`); ``file`` then only
            names the value.
    """

    # a plain class, not a dataclass: creating a dataclass costs a one-shot command ~0.4 ms
    __slots__ = ("key", "file", "dtype", "shape", "version", "spare", "residual", "data")

    def __init__(self, key: Key, file: str, dtype: str, shape: tuple[int, ...], version: int = 1,
                 spare: str | None = None, residual: str | None = None, data: bytes | None = None) -> None:
        self.key = key
        self.file = file
        self.dtype = dtype
        self.shape = shape
        self.version = version
        self.spare = spare
        self.residual = residual
        self.data = data

    def __repr__(self) -> str:
        where = f"{len(self.data)} bytes in the row" if self.data is not None else self.file
        return f"KeyEntry({self.key!r}, {where}, {self.dtype} {tuple(self.shape)}, version {self.version})"

    @property
    def inline(self) -> bool:
        """Whether the value is held in the key's row rather than in a file."""
        return self.data is not None

    def files_row(self) -> tuple[str | None, str | None, str | None, str, tuple[int, ...]]:
        """The files this entry names and its layout: ``(file, spare, residual, dtype, shape)``,
        ``file`` None for a value held in the row (no file to keep or remove)."""
        return None if self.inline else self.file, self.spare, self.residual, self.dtype, tuple(self.shape)

    def value(self, data_folder: Path) -> np.ndarray:
        """The committed value: decoded from the row, or read from its file in ``data_folder``."""
        if self.data is not None:
            little = np.dtype(self.dtype).newbyteorder("<")
            return np.frombuffer(self.data, dtype=little).astype(self.dtype).reshape(self.shape)
        return read_npy(data_folder / self.file, self.dtype, tuple(self.shape))

    def check_value(self, data_folder: Path) -> None:
        """Refuse a damaged value file (a row's bytes were checked when the row was read)."""
        if self.data is None:
            check_npy(data_folder / self.file, self.dtype, tuple(self.shape))

    def hold(self, array: np.ndarray) -> None:
        """Hold ``array`` (of this entry's dtype and shape) in the row (the caller gives the
        value its new name in ``file``)."""
        little = np.dtype(self.dtype).newbyteorder("<")
        self.data = np.ascontiguousarray(array, dtype=little).tobytes()
        self.spare = None

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    @property
    def size(self) -> int:
        """Elements of the value."""
        return math.prod(self.shape)

    @property
    def signature(self) -> tuple[str, int]:
        """What identifies this committed value (files are reused, versions are not)."""
        return self.file, self.version

    def to_json(self, with_data: bool = False) -> dict[str, Any]:
        """The entry as the manifest's JSON object; ``with_data``: with the row's value bytes
        (for the database; JSON never holds them)."""
        data: dict[str, Any] = {"key": self.key, "file": self.file, "dtype": self.dtype, "shape": list(self.shape),
                                "version": self.version}
        if self.spare:
            data["spare"] = self.spare
        if self.residual:
            data["residual"] = self.residual
        if with_data and self.data is not None:
            data["data"] = self.data
        return data


class Manifest:
    """The committed state of a session (file names, not data).

    Attributes:
        store_type, store_options: the store the session runs and its recorded options.
        updater, optimizer_state: the updater's spec and its state file (or None).
        generation: how many commits the session has had.
        keys: a dict, or a :class:`~kvcli.session.keytable.KeyTable` reading rows as they
            are asked for.
        compression: the gradient compression spec (``"2bit:threshold=0.5"``) or None; each
            key's residuals are in its entry's ``residual`` file.
        created, updated: times (seconds since the epoch).
        updater_trust: for a ``python:`` updater, the file the user named, its sha256 and
            MAC (see :mod:`kvcli.session.trust`).
    """

    __slots__ = ("store_type", "store_options", "updater", "optimizer_state", "generation", "keys",
                 "compression", "created", "updated", "updater_trust")

    def __init__(self, store_type: str = "local", store_options: dict[str, Any] | None = None,
                 updater: str = "assign", optimizer_state: str | None = None, generation: int = 0,
                 keys: MutableMapping[Key, KeyEntry] | None = None, compression: str | None = None,
                 created: float | None = None, updated: float | None = None,
                 updater_trust: Trust | None = None) -> None:
        now = time.time()
        self.store_type = store_type
        self.store_options: dict[str, Any] = {} if store_options is None else store_options
        self.updater = updater
        self.optimizer_state = optimizer_state
        self.generation = generation
        self.keys: MutableMapping[Key, KeyEntry] = {} if keys is None else keys
        self.compression = compression
        self.created = now if created is None else created
        self.updated = now if updated is None else updated
        self.updater_trust = updater_trust

    def __repr__(self) -> str:
        return (f"Manifest({self.store_type!r}, updater {self.updater!r}, generation {self.generation}, "
                f"{len(self.keys)} keys)")

    @property
    def key_kind(self) -> str | None:
        first_kind = getattr(self.keys, "first_kind", None)
        if first_kind is not None:  # a KeyTable: without reading every row
            return first_kind()
        if not self.keys:
            return None
        return "int" if isinstance(next(iter(self.keys)), int) else "str"

    def shapes(self) -> dict[Key, tuple[int, ...]]:
        """Each key's shape (what its optimizer state must fit)."""
        return {key: tuple(entry.shape) for key, entry in self.keys.items()}

    def files(self) -> set[str]:
        """The names of every file the manifest needs (a value held in its row has none)."""
        names = {entry.file for entry in self.keys.values() if not entry.inline}
        names.update(entry.spare for entry in self.keys.values() if entry.spare)
        names.update(entry.residual for entry in self.keys.values() if entry.residual)
        if self.optimizer_state:
            names.add(self.optimizer_state)
        return names

    def to_json(self, with_data: bool = False) -> dict[str, Any]:
        return {**self.meta_json(), "keys": [entry.to_json(with_data) for entry in self.keys.values()]}

    def meta_json(self) -> dict[str, Any]:
        """Every field but the keys (what a commit that changes a few keys rewrites)."""
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
        }

    @classmethod
    def from_json(cls, data: Any, where: Path, keys: tuple[Any, Path] | None = None) -> "Manifest":
        """Validate and read a manifest; every problem is a :class:`SessionError` naming ``where``.

        ``keys``: (a database connection, its path) whose ``keys`` table holds the keys
        (``data`` then has no ``keys`` field; each row is checked when it is first read)."""
        if keys is not None:
            data = {**data, "keys": []}

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
        if trust:
            from kvcli.session.trust import Trust
        manifest = cls(
            store["type"], dict(store["options"]), data["updater"], data["optimizer_state"], data["generation"],
            created=float(data.get("created", 0)), updated=float(data.get("updated", 0)),
            updater_trust=Trust(**trust) if trust else None,
        )
        manifest.compression = _read_compression(data.get("compression"), bad)
        if keys is not None:  # the database's rows, read and checked as they are asked for
            table = KeyTable(*keys, data.get("key_kind"), manifest.optimizer_state, _entry_from, data)
            manifest.keys = table
            return manifest
        kinds = set()
        for raw in data["keys"]:
            try:
                key = check_key(raw["key"])
            except KeyTypeError as error:
                raise bad(f"a key entry is malformed ({error})") from None
            if key in manifest.keys:
                raise bad(f"key {key!r} has a repeated entry")
            kinds.add(type(key))
            manifest.keys[key] = _entry_from(raw)
        if len(kinds) > 1:
            raise bad("it mixes int and str keys")
        if data.get("key_kind") not in (None, manifest.key_kind):
            raise bad(f"key_kind says {data.get('key_kind')!r} but the keys are {manifest.key_kind}")
        return manifest




def _entry_from(raw: dict[str, Any]) -> KeyEntry:
    """A checked entry dictionary as a :class:`KeyEntry`."""
    return KeyEntry(check_key(raw["key"]), raw["file"], raw["dtype"], tuple(raw["shape"]), raw["version"],
                    raw.get("spare"), raw.get("residual"), raw.get("data"))


# ---------------------------------------------------------------------- helpers
def load_manifest_file(path: Path) -> Manifest | None:
    """The manifest at ``path`` (None if there is none), validated; never follows a symlink,
    never waits (a FIFO or device there is refused before it is read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW)
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
            os.set_blocking(fd, True)
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


def write_json(path: Path, payload: Any, before_replace: Callable[[], None] | None = None) -> None:
    """Replace ``path`` by ``payload`` as JSON, whole or not at all (a private temporary file,
    fsynced, renamed over it: :func:`kvcli.osutil.atomic_write`); on failure nothing is left
    behind and the error names the path and the space needed."""
    data = json.dumps(payload, indent=1, ensure_ascii=False).encode()
    try:
        atomic_write(path, data, before_replace=before_replace)
    except OSError as error:
        raise disk_error(path, error, len(data)) from None
