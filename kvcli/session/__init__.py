"""A KVStore that persists between commands: an SQLite manifest, small values in their rows,
one ``.npy`` per bigger value.

Layout of a session (``KVCLI_HOME/sessions/NAME``)::

    session.db      SQLite (WAL), :mod:`kvcli.session.db`: format version, generation, key
                    kind, store type and options, updater spec, optimizer-state file,
                    gradient compression, and one row per key: file, dtype, shape, version,
                    spare and compression-residual files, and the value itself when it
                    has at most INLINE_BYTES (4 KiB; an older session's ``manifest.json``
                    or value-less rows are read as they are and updated by a write)
    data/           one <random hex>.npy per bigger value (key names never become paths),
                    the optimizer state and compression residuals (<random hex>.npz); all
                    read with allow_pickle=False
    .lock           taken by every command (exclusive to write, shared to read)

A command locks the session, reads the manifest's meta rows and the rows of the keys it
touches (:mod:`kvcli.session.keytable`), loads only those keys into the engine, runs the
operation, then commits: new files of big values are written beside the old ones and
fsynced with their folder, one SQLite transaction writes the changed rows with the small
values in them (its COMMIT is the commit point: a small value costs that one fsync), and
files those rows no longer name are removed. A crash at any point leaves the last
committed state; a killed command's files are removed by the next process that writes.

Nothing in a session folder is trusted: every manifest is checked field by field
(:mod:`kvcli.session.schema`), every file is read and written by :mod:`kvcli.arrays.npyio` with
``O_NOFOLLOW`` (regular files only), a failed write removes what it wrote and says how much
space it needed, a ``python:`` updater runs only from the file and content the user named
with ``set_updater`` in this home (:mod:`kvcli.session.trust`), the optimizer state goes
into the manifest's updater only (a state file never names code; its arrays are bounded by
the keys' shapes before they are unpacked, :mod:`kvcli.optim.state`), no two manifest entries
share a file, and a manifest's Ray address off this machine is used only when the caller
names it too.

A :class:`Session` object may live across many commands (the ``kvcli shell`` does this):
it keeps its store — and so the device workers — and on each command re-reads the manifest
and reloads only what another process changed.
The package, one concern per module: :mod:`~kvcli.session.names` (session names, keys,
store requests), :mod:`~kvcli.session.manifest` (the manifest and its JSON),
:mod:`~kvcli.session.schema` (its field-by-field check), :mod:`~kvcli.session.files`
(lock, fsync, ``.npy`` files, full-disk errors), :mod:`~kvcli.session.trust` (trusted
``python:`` updaters), :mod:`~kvcli.session.live` (the live store), :mod:`~kvcli.session.commit`
(transactions and the commit protocol) and :mod:`~kvcli.session.core` (:class:`Session`).
A :class:`Session` owns its parts: a :class:`~kvcli.session.live.Place` (where it is, what
was asked for), a :class:`~kvcli.session.live.LiveStore` and a
:class:`~kvcli.session.commit.Committer` (which tells the live store what it committed).
"""

from kvcli.session.commit import session_exists
from kvcli.session.core import Session, ValuesFor
from kvcli.session.listing import list_sessions
from kvcli.session.files import (
    check_npy,
    corrupted,
    disk_error,
    read_npy,
    session_lock,
    write_npy,
)
from kvcli.errors import DiskError
from kvcli.session.manifest import KeyEntry, Manifest
from kvcli.session.names import (
    DATA,
    DEFAULT_SESSION,
    INLINE_BYTES,
    KEY_RULE,
    LOCK,
    MANIFEST,
    RECYCLE_BYTES,
    Key,
    is_local_address,
    check_key,
    check_session_name,
    check_store_request,
    default_home,
)

__all__ = [
    "DATA", "DEFAULT_SESSION", "INLINE_BYTES", "KEY_RULE", "LOCK", "MANIFEST", "RECYCLE_BYTES", "DiskError", "Key", "KeyEntry",
    "Manifest", "Session", "ValuesFor", "check_key", "check_npy", "check_session_name", "check_store_request",
    "corrupted", "default_home", "disk_error", "list_sessions", "read_npy", "session_exists", "session_lock",
    "write_npy",
    # for kvcli's own CLI (the shell checks addresses)
    "is_local_address",
]
