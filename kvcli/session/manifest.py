"""The manifest: what a session holds (store, updater, keys and their files), read from the
session database's rows or from a ``manifest.json`` (an old session, an export), checked
field by field (:mod:`kvcli.session.schema`) either way; each key is a
:class:`~kvcli.session.entry.KeyEntry`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, MutableMapping

from kvcli.errors import SessionError, ManifestProblem
from kvcli.arrays.npyio import NOFOLLOW
from kvcli.osutil import atomic_write
from kvcli.session.entry import KeyEntry as KeyEntry  # re-exported: the session's modules read it here
from kvcli.session.entry import files_belong_to_one_place
from kvcli.session.files import corrupted, disk_error
from kvcli.session.keytable import KeyTable
from kvcli.session.names import FORMAT, FORMAT_VERSION, Key
from kvcli.session.schema import FIELDS, MAX_MANIFEST_BYTES, META_FIELDS, check_meta, validate

if TYPE_CHECKING:  # read only for a python: updater (hashlib and hmac stay off a pull's path)
    from kvcli.session.trust import Trust


# ---------------------------------------------------------------------- the manifest
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

    def to_json(self) -> dict[str, Any]:
        """The manifest as a ``manifest.json`` holds it (an export)."""
        return {**self.meta_json(), "keys": [entry.to_json() for entry in self.keys.values()]}

    def meta_json(self) -> dict[str, Any]:
        """Every field but the keys, as the database's meta rows hold them (one row a field,
        its value as JSON): what a commit that changes a few keys rewrites."""
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

    def rows(self) -> list[tuple[Any, ...]]:
        """Every key's database row, in the manifest's order."""
        return [entry.row() for entry in self.keys.values()]

    @classmethod
    def from_json(cls, data: Any, where: Path) -> "Manifest":
        """Validate and read a ``manifest.json``; every problem is a :class:`SessionError`
        naming ``where``."""
        manifest = cls._from_meta(data, where, FIELDS)
        try:
            entries = [KeyEntry.from_json(raw) for raw in data["keys"]]
            files_belong_to_one_place(entries, manifest.optimizer_state)
        except ManifestProblem as problem:
            raise corrupted(where, str(problem)) from None
        kinds = set()
        for entry in entries:
            if entry.key in manifest.keys:
                raise corrupted(where, f"key {entry.key!r} has a repeated entry")
            kinds.add(type(entry.key))
            manifest.keys[entry.key] = entry
        if len(kinds) > 1:
            raise corrupted(where, "it mixes int and str keys")
        if data.get("key_kind") not in (None, manifest.key_kind):
            raise corrupted(where, f"key_kind says {data.get('key_kind')!r} but the keys are {manifest.key_kind}")
        return manifest

    @classmethod
    def from_db(cls, meta: dict[str, Any], conn: sqlite3.Connection, where: Path) -> "Manifest":
        """Validate and read the manifest whose meta rows are ``meta`` (name -> decoded value,
        see :func:`kvcli.session.db.read_meta`); its keys are the ``keys`` rows of ``conn``,
        each read and checked when it is first asked for (:class:`KeyTable`)."""
        manifest = cls._from_meta(meta, where, META_FIELDS)
        manifest.keys = KeyTable(conn, where, meta.get("key_kind"), manifest.optimizer_state)
        return manifest

    @classmethod
    def _from_meta(cls, data: Any, where: Path, fields: tuple[str, ...]) -> "Manifest":
        """A manifest without keys from its checked top-level ``fields`` (a ``manifest.json``
        has ``keys`` among them, checked to be a list)."""
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
            if "keys" in fields:
                validate(data)
            else:
                check_meta(data, fields)
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
        return manifest


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
