"""MXNet checkpoints and sessions: a ``.params`` file's arrays as keys
(:meth:`Session.load_params <kvcli.session.Session.load_params>`), keys as a ``.params``
file (:meth:`~kvcli.session.Session.save_params`), and the committed values of keys read
at once (:meth:`~kvcli.session.Session.snapshot`, what ``viz``/``summary`` check a graph
against).

Loading reads the file with the one codec (:mod:`kvcli.arrays.mxparams`: bounded,
pickle-free). The whole file is scanned and every array checked (its name is a valid key
once renamed, it is dense, within ``KVCLI_MAX_ELEMENTS``) before the session changes; then
one transaction writes every value: small ones into their rows, big ones as ``.npy`` files
whose bodies are copied from the ``.params`` file (the kernel's copy where it can, never a
whole array in memory), all fsynced before the one commit. A failure anywhere leaves the
session as it was. Replacing keys that exist is refused unless ``replace=True`` (the error's
``replaced`` field lists them); a replaced key starts afresh, as :meth:`init` starts it (its
optimizer state and compression residuals go).

Saving writes MXNet's format (names as stored, in the session's order, int keys as their
decimal names) from the committed values, atomically and private (0600), fsynced.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Sequence

from kvcli import config
from kvcli.arrays import mxparams
from kvcli.errors import KeyTypeError, NpyError, ParamsFileError, SessionError, bad_param
from kvcli.osutil import PRIVATE_FILE
from kvcli.session.manifest import KeyEntry, Manifest
from kvcli.session.names import DATA, Key, KEY_RULE, check_key

if TYPE_CHECKING:
    import numpy as np  # imported where values are made: a checkpoint's bytes are copied without it

    from kvcli.session.core import Session  # the session imports this module on first use


class LoadedParams(NamedTuple):
    """What :meth:`Session.load_params` did: the keys it set (file order), those of them
    that replaced keys of the session, and the bytes of their values."""

    keys: list[Key]
    replaced: list[Key]
    nbytes: int


class SavedParams(NamedTuple):
    """What :meth:`Session.save_params` wrote: the file, its names (in order) and the bytes
    of their values."""

    path: Path
    names: list[str]
    nbytes: int


def _renamed(name: str, prefix: str, strip_prefix: Sequence[str]) -> str:
    for strip in strip_prefix:
        if strip and name.startswith(strip):
            name = name[len(strip):]
            break
    return prefix + name


def choose(params: mxparams.ParamsFile, prefix: str = "", strip_prefix: Sequence[str] = (),
           keys: Sequence[str] | None = None) -> list[tuple[Key, mxparams.Entry]]:
    """The arrays of ``params`` to load and their keys: those whose name in the file matches
    one of ``keys`` (names or glob patterns; every one must match), renamed (the first of
    ``strip_prefix`` a name starts with is removed, then ``prefix`` is put in front). Each
    must become a valid key, once; each must be dense, of a dtype a session holds and within
    ``KVCLI_MAX_ELEMENTS`` elements.

    Raises:
        ParamsFileError: the file names no arrays, or an array cannot be a session's value.
        KeyTypeError: a name does not make a valid key, or two make the same.
        SessionError: a pattern of ``keys`` matches nothing.
    """
    source = params.source
    if params.names is None:
        raise ParamsFileError(f"{source}: the file holds {len(params.entries)} unnamed arrays: a session needs a name "
                              "per array (mx.model.save_checkpoint, Gluon's export and nd.save of a dict write them)")
    items = [(name, entry) for name, entry in params.items() if name is not None]
    if keys is not None:
        unmatched = [pattern for pattern in keys if not any(fnmatch.fnmatchcase(n, pattern) for n, _ in items)]
        if unmatched:
            raise bad_param(SessionError, "keys", f"{unmatched[0]!r} matches no array of {source} (it holds "
                            f"{_names_text([n for n, _ in items])})")
        items = [(n, e) for n, e in items if any(fnmatch.fnmatchcase(n, pattern) for pattern in keys)]
    limit = int(config.get(config.MAX_ELEMENTS))
    chosen: dict[Key, tuple[str, mxparams.Entry]] = {}
    for name, entry in items:
        key_text = _renamed(name, prefix, strip_prefix)
        try:
            key = check_key(key_text)
        except KeyTypeError:
            found = f"{source}: array {name!r} would be the key {_short(key_text)}, which is not allowed ({KEY_RULE})"
            raise KeyTypeError(f"{found}; rename it with prefix= or strip_prefix=, or leave it out with keys=",
                               problem=found, remedy="rename-params") from None
        if key in chosen:
            found = f"{source}: arrays {chosen[key][0]!r} and {name!r} would both be the key {key!r}"
            raise KeyTypeError(f"{found}; rename them with prefix= or strip_prefix=, or leave one out with keys=",
                               problem=found, remedy="rename-params")
        if entry.stype != "default":
            raise ParamsFileError(f"{source}: array {name!r} is {entry.stype}: a session holds dense arrays only (load "
                                  "it with mx.nd.load and convert it with .tostype('default'), or leave it out with "
                                  "keys=)")
        if entry.size > limit:
            raise ParamsFileError(f"{source}: array {name!r} holds {entry.size:,} elements {entry.shape}, more than the "
                                  f"limit of {limit:,} (set {config.MAX_ELEMENTS.name} to raise it)")
        chosen[key] = (name, entry)
    return [(key, entry) for key, (_, entry) in chosen.items()]


def _names_text(names: Sequence[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:6])
    return f"{shown}{' and %d more' % (len(names) - 6) if len(names) > 6 else ''}" if names else "no named array"


def _short(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:57] + "...")


def load(session: "Session", path: Path, prefix: str, strip_prefix: Sequence[str], keys: Sequence[str] | None,
         replace: bool) -> LoadedParams:
    """:meth:`Session.load_params` (see the module docs)."""
    if isinstance(strip_prefix, str):
        strip_prefix = [strip_prefix]
    with mxparams.open_file(path) as params:  # open until the commit has copied the values
        chosen = choose(params, prefix, strip_prefix, keys)
        if not chosen:
            raise ParamsFileError(f"{params.source}: the file holds no arrays: nothing to load")
        values = {key: params.body(entry) for key, entry in chosen}
        key_list = [key for key, _ in chosen]
        with session._committer.transaction(write=True, create=True) as txn:
            manifest = txn.manifest
            session._check_kinds(manifest, key_list)
            replaced = [key for key in key_list if key in manifest.keys]
            if not replace:
                session.refuse_replacing(manifest, replaced, f"loading {path}")
            session._forget_live(manifest, replaced, txn)
            for key, entry in chosen:
                old = manifest.keys.get(key)
                manifest.keys[key] = KeyEntry(key, "", entry.dtype.name, entry.shape, old.version + 1 if old else 1)
                txn.direct[key] = values[key]
                txn.touch(key)
    return LoadedParams(key_list, replaced, sum(entry.nbytes for _, entry in chosen))


def _entries(session: "Session", manifest: Manifest, keys: Sequence[Key] | None) -> list[KeyEntry]:
    if not session.exists():
        raise SessionError(f"session {session.name!r} does not exist yet: it holds no keys")
    chosen = list(manifest.keys) if keys is None else [check_key(k) for k in keys]
    return [session._entry(manifest, key) for key in chosen]


def snapshot(session: "Session", keys: Sequence[Key] | None = None) -> list[tuple[KeyEntry, np.ndarray]]:
    """:meth:`Session.snapshot`: each key's entry and committed value, all of one commit
    (read under the session's lock: a later write cannot change them)."""
    import numpy as np

    with session._committer.transaction(write=False) as txn:
        data = session.path / DATA
        return [(entry, np.array(entry.value(data), copy=True)) for entry in _entries(session, txn.manifest, keys)]


def save(session: "Session", path: Path, keys: Sequence[Key] | None) -> SavedParams:
    """:meth:`Session.save_params` (see the module docs): written under the session's lock,
    big values copied file to file from their ``.npy`` files."""
    target = Path(os.path.expanduser(path))
    with session._committer.transaction(write=False) as txn:
        entries = _entries(session, txn.manifest, keys)
        if not entries:
            raise SessionError(f"session {session.name!r} holds no keys: nothing to save")
        for entry in entries:  # every refusal before the file is touched
            label = f"key {entry.key!r}"
            if not entry.shape:
                raise ParamsFileError(f"{label} is 0-d, which MXNet 1.x reads back as a shapeless array: nothing "
                                      "was written (leave it out, or init it again with shape (1,))")
            if entry.dtype not in mxparams.FLAG_OF_DTYPE:
                raise ParamsFileError(f"{label} has dtype {entry.dtype}, which MXNet cannot store "
                                      f"({mxparams.dtype_names()}): nothing was written (leave it out)")
        data = session.path / DATA
        values = [entry.body(data) for entry in entries]
        names = [str(entry.key) for entry in entries]
        try:
            mxparams.save(target, values, names, mode=PRIVATE_FILE, sync=True)
        except NpyError as error:  # a value file cut after its check (by hand: the session's lock is held)
            raise SessionError(f"cannot save session {session.name!r}: a value file {error}; nothing was written "
                               f"to {target}") from None
    return SavedParams(target, names, sum(entry.nbytes for entry in entries))


__all__ = ["LoadedParams", "SavedParams", "choose", "load", "save", "snapshot"]
