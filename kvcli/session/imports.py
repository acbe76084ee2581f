"""Reading an export for :meth:`kvcli.session.Session.import_`: bounded, and checked before
anything of it is adopted.

* The manifest must be a regular file (a FIFO or a device is refused without waiting) and
  passes the one validator; each value may hold at most ``KVCLI_MAX_ELEMENTS`` elements, as
  a pushed value may, checked from the manifest before one byte of a value is read.
* The updater must parse (a ``python:`` updater is never adopted: an import brings no code);
  what is adopted is the parser's own spelling of it, so no byte of the export's text
  reaches a terminal.
* Each file is read once: a value is copied (at most the bytes its shape needs) into a new
  private file of the session and checked there, so the bytes checked are the bytes kept;
  the optimizer state is read into memory once (bounded), checked, and those bytes written.

Every refusal is one line, ``DIR cannot be imported: ...; nothing was changed``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Sequence

from kvcli import config
from kvcli.errors import KVCliError, NpyError, OptimizerStateError, SessionError
from kvcli.session.files import copy_file, disk_error, open_regular
from kvcli.session.manifest import KeyEntry, Manifest, load_manifest_file
from kvcli.session.names import DATA, MANIFEST, Key, python_spec

if TYPE_CHECKING:  # numpy is imported where values are made: copying a checkpoint needs none of it
    import numpy as np

#: Bytes a value file may hold beyond its data: the ``.npy`` header (at most 64 KiB, as the
#: reader allows) and its fixed start.
HEADER_ROOM = (1 << 16) + 16
#: Bytes of an optimizer state file per byte of the values it is for: MXNet's optimizers keep
#: at most 4 arrays per weight (FTML's 3, plus a float32 copy with multi_precision), each of
#: at most twice the weight's bytes (float32 state of a float16 weight) ...
STATE_BYTES_PER_VALUE_BYTE = 8
#: ... plus the archive's own (zip entries and the JSON header of the state file).
STATE_ROOM = (1 << 20) + 4096


class ImportPlan(NamedTuple):
    """What an import does to a session's keys."""

    #: keys of the session the export holds too: their values are replaced
    replaced: list[Key]
    #: keys of the session the export lacks: gone after the import (none with ``merge``)
    dropped: list[Key]
    #: keys of the export the session lacks
    added: list[Key]


def refused(folder: Path, problem: str) -> SessionError:
    """The one-line refusal of an import."""
    return SessionError(f"{folder} cannot be imported: {problem}; nothing was changed")


def read_export(folder: Path) -> Manifest:
    """The export's manifest, validated, with every value within ``KVCLI_MAX_ELEMENTS``.

    Raises:
        SessionError: not an export, a manifest that is not a regular file or not valid, or
            a value over the limit.
    """
    try:
        source = load_manifest_file(folder / MANIFEST)
    except SessionError as error:
        detail = error.fields.get("detail")
        if detail is None:
            raise
        raise refused(folder, f"its {MANIFEST} {detail}") from None
    if source is None:
        raise SessionError(f"{folder} is not a kvcli export: it has no {MANIFEST}")
    limit = int(config.get(config.MAX_ELEMENTS))
    for key, entry in source.keys.items():
        if entry.size > limit:
            raise refused(folder, f"key {key!r} holds {entry.size:,} elements {tuple(entry.shape)}, more than the "
                                  f"limit of {limit:,} (set {config.MAX_ELEMENTS.name} to raise it)")
    return source


def plan(session_keys: Sequence[Key], export_keys: Sequence[Key], merge: bool) -> ImportPlan:
    """Which of the session's keys an import of ``export_keys`` replaces and drops."""
    exported = set(export_keys)
    held = set(session_keys)
    return ImportPlan([k for k in session_keys if k in exported],
                      [] if merge else [k for k in session_keys if k not in exported],
                      [k for k in export_keys if k not in held])


def adopted_updater(folder: Path, source: Manifest) -> tuple[str, list[str]]:
    """The updater spec an import adopts (the parser's spelling of the export's, or
    ``assign`` for a ``python:`` one, which is never adopted) and what to tell the user.

    Raises:
        SessionError: the export's updater does not parse.
    """
    if python_spec(source.updater) is not None:  # an export never brings code to run
        notice = (f"the exported updater {source.updater!r} was not adopted"
                  + (" nor its optimizer state" if source.optimizer_state else "")
                  + " (an import never brings code to run); the session uses assign: set the updater again if you "
                    "trust that file")
        return "assign", [notice]
    from kvcli.optim.spec import parse_updater

    try:
        return str(parse_updater(source.updater).spec), []
    except KVCliError as error:
        raise refused(folder, f"its updater {source.updater[:200]!r} is not valid ({error})") from None


def stage_value(folder: Path, key: Key, entry: KeyEntry, target: Path) -> np.ndarray | None:
    """Copy the value file of ``entry`` into the new private file ``target`` and check the
    copy (what is checked is what is kept). Returns the value when it is small enough to be
    held in its row (``target`` is then removed again), else None.

    Raises:
        SessionError: the file is not a regular file, bigger than its shape needs, or not
            the ``.npy`` its manifest entry describes (``target`` is removed).
        DiskError: the copy cannot be written.
    """
    from kvcli.arrays.npyio import check_file, read_array, remove_quietly
    from kvcli.session.names import INLINE_BYTES

    source = folder / DATA / entry.file
    try:
        copy_file(source, target, limit=HEADER_ROOM + entry.nbytes)
    except SessionError as error:
        raise refused(folder, f"the value of key {key!r}: {error}") from None
    try:
        if entry.nbytes <= INLINE_BYTES:
            value: np.ndarray = read_array(target, dtype=entry.dtype, shape=tuple(entry.shape), session_file=True)
            remove_quietly(target)
            return value
        check_file(target, entry.dtype, tuple(entry.shape))
    except NpyError as error:
        remove_quietly(target)
        raise refused(folder, f"the value of key {key!r}, {source}, {error}") from None
    return None


def stage_state(folder: Path, source: Manifest, target: Path) -> None:
    """Read the export's optimizer state once (bounded), check it against the export's own
    updater (never one its file names: a file cannot bring code) and keys, and write those
    bytes to the new private file ``target``.

    Raises:
        SessionError: the state is not a regular file, too big, names code, or does not
            load into the export's updater; nothing is written.
        DiskError: ``target`` cannot be written.
    """
    from kvcli.optim.spec import parse_updater
    from kvcli.optim.state import names_code, read_meta, read_state
    from kvcli.osutil import atomic_write

    assert source.optimizer_state is not None
    path = folder / DATA / source.optimizer_state
    limit = STATE_BYTES_PER_VALUE_BYTE * sum(entry.nbytes for entry in source.keys.values()) + STATE_ROOM
    try:
        with open_regular(path) as handle:
            data = handle.read(limit + 1)
    except SessionError as error:
        raise refused(folder, f"its optimizer state: {error}") from None
    except OSError as error:
        raise refused(folder, f"its optimizer state {path} cannot be read ({error.strerror})") from None
    if len(data) > limit:
        raise refused(folder, f"its optimizer state {path} holds more than the {limit:,} bytes the state of its "
                              f"{len(source.keys)} keys may")
    where = repr(str(path))
    try:
        saved = read_meta(data, where)
        if names_code(saved.spec):
            raise refused(folder, f"its optimizer state file names Python code ({str(saved.spec)[:200]!r}), which an "
                                  "import never runs")
        updater = parse_updater(source.updater)
        if not hasattr(updater, "load_state_dict"):
            raise refused(folder, f"it has an optimizer state file but its updater {source.updater!r} keeps no state")
        shapes = source.shapes()
        held, state = read_state(data, updater, where=where, shapes=shapes, all_keys=True, adopt_spec=False)
        try:
            held.load_state_dict(state.as_state(), shapes)
        except OptimizerStateError as error:
            raise OptimizerStateError(f"cannot load {where}: {error}") from None
    except SessionError:
        raise
    except KVCliError as error:
        raise refused(folder, str(error)) from None
    try:
        atomic_write(target, bytes(data))
    except OSError as error:
        raise disk_error(target, error, len(data)) from None


__all__ = ["ImportPlan", "adopted_updater", "plan", "read_export", "refused", "stage_state", "stage_value"]
