"""The :class:`Session`: a KVStore that persists between commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from kvcli import config
from kvcli.errors import KeyTypeError, bad_param, SessionError, UnknownKeyError, DiskError
from kvcli.osutil import fsync_dir
from kvcli.session.commit import Committer, session_exists
from kvcli.session.live import LiveStore, Place, count_keys, state_text
from kvcli.arrays.npyio import remove_quietly
from kvcli.session.files import (
    check_export_folder,
    copy_file,
    private_folder,
    new_file_name,
    read_npy,
    write_npy,
)
from kvcli.session.schema import MAX_COUNTER
from kvcli.session.imports import ImportPlan, adopted_updater, plan, read_export, stage_state, stage_value
from kvcli.session.manifest import KeyEntry, Manifest, write_json
from kvcli.session.names import (
    SAFE_DTYPES,
    DATA,
    DEFAULT_SESSION,
    export_format_version,
    MANIFEST,
    Key,
    absolute_python_spec,
    check_options,
    normal_type,
    python_spec,
    check_key,
    check_session_name,
    home_folder,
    session_folder,
)

if TYPE_CHECKING:
    import numpy as np  # imported where values are made: a checkpoint's bytes are copied without it

    from kvcli.session.params import LoadedParams, SavedParams  # imported when used: a push never loads them

# ---------------------------------------------------------------------- the session
ValuesFor = Callable[[Key, KeyEntry], Any]




class Session:
    """A named, persistent KVStore session (see the module docs).

    Args:
        name: the session name (default: ``KVCLI_SESSION`` or ``default``).
        home: the folder holding the sessions (default: :func:`~kvcli.session.names.default_home`).
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
        store_options: Mapping[str, Any] | None = None,
    ) -> None:
        if name is None:
            name = config.get(config.SESSION) or DEFAULT_SESSION
        name = check_session_name(name)
        home_ = home_folder(home)
        requested_type = normal_type(store_type) if store_type else None
        requested_options = {k: v for k, v in (store_options or {}).items() if v is not None}
        if requested_type:
            check_options(requested_type, requested_options)
        # the session's parts: where it is, the store it keeps alive, and its transactions
        self._place = Place(name, home_, session_folder(home_, name), requested_type, requested_options)
        self._live = LiveStore(self._place)
        self._committer = Committer(self._place, self._live)
        #: what the last operation wants the user to know (e.g. an import that dropped code)
        self.notices: list[str] = []

    @property
    def name(self) -> str:
        """The session's name."""
        return self._place.name

    @property
    def home(self) -> Path:
        """The folder holding the sessions."""
        return self._place.home

    @property
    def path(self) -> Path:
        """The session's folder (``home/sessions/name``)."""
        return self._place.path

    @property
    def requested_type(self) -> str | None:
        """The store type this object asked for (None: whatever the session has)."""
        return self._place.requested_type

    @requested_type.setter
    def requested_type(self, value: str | None) -> None:
        self._place.requested_type = value

    @property
    def requested_options(self) -> dict[str, Any]:
        """The store options this object asked for."""
        return self._place.requested_options

    @requested_options.setter
    def requested_options(self, value: dict[str, Any]) -> None:
        self._place.requested_options = value

    @property
    def on_store_start(self) -> Callable[[str], None] | None:
        """Called just before the session starts its store, with what starts: ``"store"``
        (local or device workers), ``"cluster"`` (joining a Ray cluster) or
        ``"private-ray"`` (a Ray runtime of this process): a front end says so then, and
        only then (a command that needs no store starts none)."""
        return self._live.on_start

    @on_store_start.setter
    def on_store_start(self, callback: Callable[[str], None] | None) -> None:
        self._live.on_start = callback

    def close(self) -> None:
        """Stop the store (device workers, connections) and close the session's database;
        the session on disk stays."""
        self._live.close()
        self._committer.close_db()

    def updater_problem(self, manifest: Manifest) -> str | None:
        """Why the session's ``python:`` updater would be refused (None: it would run, or it
        is not a python updater)."""
        return self._live.updater_problem(manifest)

    def _store_for(self, manifest: Manifest, keys: Sequence[Key]) -> Any:
        """The live store holding the committed values of ``keys``."""
        return self._live.store_for(manifest, keys, reused=self._committer.reused)

    # ------------------------------------------------------------------ context
    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



    def exists(self) -> bool:
        """Whether the session has been created on disk."""
        return session_exists(self.path)

    def peek_keys(self) -> list[Key]:
        """The committed keys, read without the lock (for completion; [] on any problem)."""
        try:
            manifest = self._committer.read_manifest()
        except SessionError:
            return []
        return list(manifest.keys) if manifest else []

    @property
    def store(self) -> Any:
        """The live store (None until a command needed one)."""
        return self._live.store

    @property
    def updater(self) -> str | None:
        """The session's updater spec as the last operation found it (None before one ran)."""
        manifest = self._committer.manifest
        return manifest.updater if manifest is not None else None

    def store_start(self) -> str | None:
        """What the next command must start before it runs (None: the store is running):
        ``"store"`` (local or device workers), ``"cluster"`` (join the home's running Ray
        cluster, see :mod:`kvcli.session.cluster`) or ``"private-ray"`` (a dist session with
        no cluster: a Ray runtime for this command alone, about 10 s)."""
        if self._live.store is not None:
            return None
        try:
            manifest = self._committer.read_manifest()
        except SessionError:
            return "store"
        kind = manifest.store_type if manifest else (self.requested_type or "local")
        if not kind.startswith("dist"):
            return "store"
        options = {**(manifest.store_options if manifest else {}), **self.requested_options}
        return "cluster" if self._live.cluster_address(options) else "private-ray"

    # ------------------------------------------------------------------ operations
    def init(self, keys: Sequence[Key], values: Sequence[Any], replace: bool = True) -> list[tuple[KeyEntry, bool]]:
        """Initialise ``keys`` with ``values`` (one per key); an existing key is reset (its
        optimizer state and compression residuals start afresh). With ``replace=False`` a key
        the session has already is refused (nothing changed; the error's ``replaced`` lists them).

        Returns each key's new entry and whether it existed before (re-initialised).
        """
        keys = [check_key(k) for k in keys]
        with self._committer.transaction(write=True, create=True) as txn:
            manifest = txn.manifest
            self._check_kinds(manifest, keys)
            if not replace:
                self.refuse_replacing(manifest, [key for key in keys if key in manifest.keys], "init")
            import numpy as np

            from kvcli.arrays.sparse import ROW_SPARSE, stype_of

            for key, value in zip(keys, values):  # files hold dense arrays only
                if stype_of(value) == ROW_SPARSE:
                    raise KeyTypeError(
                        f"init of key {key!r}: a session stores dense values, not row-sparse ones; "
                        "convert with .tostype('default') or use a store from kvcli.create()"
                    )
            arrays = [np.asarray(v) for v in values]
            for key, array in zip(keys, arrays):
                if array.dtype.name not in SAFE_DTYPES:
                    raise KeyTypeError(f"init of key {key!r}: dtype {array.dtype} cannot be stored; use a numeric dtype")
            store = self._store_for(manifest, [])
            if manifest.optimizer_state:
                self._live.sync_updater(manifest)
            txn.at_risk.extend(keys)
            store.init(list(keys), arrays)
            for key in keys:
                self._live.residuals.pop(key, None)  # init reset them; the new entry has none
            results = []
            for key in keys:
                info = store.info(key)
                old = manifest.keys.get(key)
                manifest.keys[key] = KeyEntry(key, "", info.dtype.name, tuple(info.shape), old.version + 1 if old else 1)
                results.append((manifest.keys[key], old is not None))
                txn.touch(key)
            txn.save_state = self._live.stateful(manifest)
        return results

    def push(self, keys: Sequence[Key], values: Sequence[Any] | ValuesFor) -> list[KeyEntry]:
        """Push to each key: ``values[i]`` is one array or a list of per-device arrays.

        ``values`` may also be a function ``(key, entry) -> value`` called under the lock
        (so a value can be built in the stored dtype).
        """
        keys = [check_key(k) for k in keys]
        with self._committer.transaction(write=True, create=False) as txn:
            manifest = txn.manifest
            entries = [self._entry(manifest, key) for key in keys]
            if callable(values):
                values = [values(key, entry) for key, entry in zip(keys, entries)]
            values = list(values)
            # compressed pushes change the value, so they all go through the store
            replace = {} if manifest.compression else self._replacing_push(manifest, keys, entries, values)
            txn.at_risk.extend(keys)
            # assign + one value: the old value is neither read nor loaded, and no store is
            # started (nor an updater parsed); the new one goes straight from the caller's
            # array to the file
            txn.direct.update(replace)
            rest = [(k, v) for k, v in zip(keys, values) if k not in replace]
            if rest:
                store = self._store_for(manifest, [k for k, _ in rest])
                self._live.sync_updater(manifest)
                self._live.sync_compression(manifest)
                if manifest.compression:
                    self._live.sync_residuals(manifest, keys)
                    txn.residuals.extend(keys)
                store.push([k for k, _ in rest], [v for _, v in rest])
            for entry in entries:
                entry.version += 1
                txn.touch(entry.key)
            txn.save_state = self._live.stateful(manifest)
        return entries

    def _replacing_push(
        self, manifest: Manifest, keys: Sequence[Key], entries: Sequence[KeyEntry], values: Sequence[Any]
    ) -> dict[Key, np.ndarray]:
        """Pushes that simply replace the stored value: the updater is ``assign`` and one
        array (not a list of per-device arrays) is pushed to a key the store has not loaded.
        They are checked like a push, then set with ``init`` (same result, no read)."""
        from kvcli.arrays.core import as_numpy, is_value_list
        from kvcli.errors import DTypeMismatchError, ShapeMismatchError

        if manifest.updater != "assign":
            return {}
        found: dict[Key, np.ndarray] = {}
        for key, entry, value in zip(keys, entries, values):
            if key in self._live.loaded or is_value_list(value):
                continue
            entry.check_value(self.path / DATA)  # a damaged file: refuse
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
            raise bad_param(KeyTypeError, "devices", f"must be at least 1, not {devices}")
        with self._committer.transaction(write=False) as txn:
            manifest = txn.manifest
            entries = [self._entry(manifest, key) for key in keys]
            if self._live.store is None:
                # the committed values are what a store would be loaded with: a one-shot pull
                # reads them without starting one (no devices, no Ray, no store imports)
                import numpy as np

                data = self.path / DATA
                values = [entry.value(data) for entry in entries]
                return [[np.array(value, copy=True) for _ in range(devices)] for value in values]
            import numpy as np

            store = self._store_for(manifest, keys)
            outs = [[np.empty(e.shape, e.dtype) for _ in range(devices)] for e in entries]
            store.pull(list(keys), out=outs)
        return outs

    def set_updater(self, spec: str, *, drop_state: bool = False) -> str:
        """Set the updater from a spec string (see :mod:`kvcli.updaters`); returns its spec.

        A ``python:FILE.py:FUNC`` path is made absolute so later commands find it. The same
        spec again (for ``python:``, the same file content) changes nothing and keeps the
        saved optimizer state. Another spec starts the state afresh: when the session has a
        saved state, that is refused (a :class:`SessionError` whose ``dropped`` field counts
        its keys; nothing changed) unless ``drop_state``; :attr:`notices` then says what
        was dropped.
        """
        from kvcli.optim.spec import parse_updater, python_updater

        spec = absolute_python_spec(spec.strip())
        self.notices = []
        with self._committer.transaction(write=True, create=True) as txn:
            manifest = txn.manifest
            python = python_spec(spec)
            if python is not None:  # the user names this file now: record what it is
                from kvcli.session.trust import trust_file

                trust, source = trust_file(self.home, python[0])
                updater = python_updater(python[0], python[1], source)
            else:
                trust, updater = None, parse_updater(spec)
            new_spec = str(getattr(updater, "spec", spec))
            dropped = self._live.saved_state_keys(manifest)
            if new_spec == manifest.updater and trust == manifest.updater_trust:
                if dropped != 0:  # nothing changes: the saved state stays
                    self.notices.append(f"the same updater: kept {state_text(manifest.updater, dropped)}")
                return new_spec
            if dropped != 0 and not drop_state:
                found = f"setting the updater {new_spec!r} would drop {state_text(manifest.updater, dropped)}"
                raise SessionError(f"{found}: nothing was changed; pass drop_state=True to drop it (the same spec "
                                   "again keeps it)", problem=found, remedy="drop-state", dropped=dropped)
            old_spec = manifest.updater
            store = self._store_for(manifest, [])
            store.set_updater(updater)
            manifest.updater = store.updater_spec
            manifest.updater_trust = trust
            manifest.optimizer_state = None
            self._live.updater_sig = self._live.updater_signature(manifest)
            txn.dirty = True
            txn.save_state = False
            if dropped != 0:
                self.notices.append(f"dropped {state_text(old_spec, dropped)}")
        return str(manifest.updater)

    def set_compression(self, spec: str | None, *, drop_residuals: bool = False) -> str | None:
        """Set gradient compression (``"2bit:threshold=0.5"``, ``"none"`` or None to turn it
        off; see :mod:`kvcli.store.compression`); returns the spec the session records.

        Each key's residual (the error feedback) is kept while compression stays on, with
        another threshold too. Turning it off drops them: when keys have one, that is refused
        (a :class:`SessionError` whose ``dropped`` field counts them; nothing changed) unless
        ``drop_residuals``; :attr:`notices` then says what was dropped."""
        from kvcli.store.compression import parse_compression

        self.notices = []
        off = parse_compression(spec) is None  # checked before the store changes
        with self._committer.transaction(write=True, create=True) as txn:
            manifest = txn.manifest
            dropped = sum(1 for entry in manifest.keys.values() if entry.residual) if off else 0
            if dropped and not drop_residuals:
                found = (f"turning gradient compression off would drop the compression residuals of "
                         f"{count_keys(dropped)}")
                raise SessionError(f"{found}: nothing was changed; pass drop_residuals=True to drop them",
                                   problem=found, remedy="drop-state", dropped=dropped)
            store = self._store_for(manifest, [])
            self._live.sync_compression(manifest)
            store.set_gradient_compression(spec)
            active = store.gradient_compression
            manifest.compression = None if active is None else active.spec
            if active is None:  # off: the residuals are gone (on again starts from zero)
                for entry in manifest.keys.values():
                    entry.residual = None
                self._live.residuals = {}
                txn.all_rows = True
            txn.dirty = True
            if dropped:
                self.notices.append(f"dropped the compression residuals of {count_keys(dropped)}")
        return manifest.compression

    def delete(self, keys: Sequence[Key]) -> list[KeyEntry]:
        """Forget ``keys`` (and their optimizer state)."""
        keys = [check_key(k) for k in keys]
        with self._committer.transaction(write=True, create=False) as txn:
            manifest = txn.manifest
            entries = [self._entry(manifest, key) for key in keys]
            self._forget_live(manifest, keys, txn)
            for key in keys:
                del manifest.keys[key]
                txn.deleted.append(key)
            txn.dirty = True
        return entries

    def refuse_replacing(self, manifest: Manifest, replaced: Sequence[Key], action: str) -> None:
        """Raise, when ``replaced`` is not empty, the :class:`SessionError` of a change that
        would replace those keys' values without ``replace=True``: what it would drop (their
        values; any optimizer state and compression residuals, when the session keeps them)
        as its ``problem``, ``remedy`` ``"replace-keys"``, and the keys as ``replaced``."""
        if not replaced:
            return
        plural = "" if len(replaced) == 1 else "s"
        shown = ", ".join(str(key) for key in replaced[:8]) + (" ..." if len(replaced) > 8 else "")
        kept = [what for what, there in (("optimizer state", manifest.optimizer_state),
                                         ("compression residuals", manifest.compression)) if there]
        state = f" and drop any {' and '.join(kept)} kept for {'it' if plural == '' else 'them'}" if kept else ""
        found = (f"{action} would replace the value{plural} of {len(replaced)} key{plural} of session {self.name!r} "
                 f"({shown}){state}")
        raise SessionError(f"{found}: nothing was changed; pass replace=True to replace them", problem=found,
                           remedy="replace-keys", replaced=list(replaced))

    def _forget_live(self, manifest: Manifest, keys: Sequence[Key], txn: Any) -> None:
        """Drop what the live store holds of ``keys`` (values, optimizer state, compression
        residuals) and have the commit save the state without them; the saved state is
        loaded first when there is one (no store is started otherwise)."""
        if not keys or (self._live.store is None and not manifest.optimizer_state):
            return
        store = self._store_for(manifest, [])
        if manifest.optimizer_state:
            self._live.sync_updater(manifest)
        for key in keys:
            if store.has(key):
                store.delete(key)
                self._live.loaded.pop(key, None)
            else:
                reset = getattr(store.updater, "reset", None)
                if reset is not None:
                    reset(key)
            self._live.residuals.pop(key, None)
        txn.save_state = self._live.stateful(manifest)

    # ------------------------------------------------------------------ MXNet checkpoints
    def load_params(self, path: str | Path, *, prefix: str = "", strip_prefix: str | Sequence[str] = (),
                    keys: Sequence[str] | None = None, replace: bool = False) -> "LoadedParams":
        """Put the arrays of an MXNet ``.params`` file (``save_checkpoint``, Gluon's ``export``
        and ``save_parameters``) into the session, one key per array, named as in the file
        (``arg:conv0_weight``), in one commit: all or nothing.

        ``keys``: only the arrays whose name matches one of these names or glob patterns
        (``"arg:*"``); ``strip_prefix`` (one or several): remove the first of them a name
        starts with; ``prefix``: then put this in front. Keys that exist are replaced only
        with ``replace`` (else a :class:`SessionError` whose ``replaced`` field lists them;
        nothing changed); a replaced key starts afresh, as :meth:`init` starts it. See
        :mod:`kvcli.session.params`.
        """
        from kvcli.session.params import load

        return load(self, Path(path).expanduser(), prefix, strip_prefix, keys, replace)

    def save_params(self, path: str | Path, keys: Sequence[Key] | None = None) -> "SavedParams":
        """Write the committed values of ``keys`` (default: every key, in the session's order)
        as an MXNet ``.params`` file named as stored (``mx.nd.load`` and
        ``mx.model.load_checkpoint`` read it), atomically, private (0600) and fsynced."""
        from kvcli.session.params import save

        return save(self, Path(path), keys)

    def snapshot(self, keys: Sequence[Key] | None = None) -> list[tuple[KeyEntry, np.ndarray]]:
        """Each key's entry and committed value (default: every key), all of one commit; big
        values are mapped from their files, not read."""
        from kvcli.session.params import snapshot

        return snapshot(self, keys)

    def keys(self) -> list[Key]:
        """The session's keys, in the order they were first initialised."""
        with self._committer.transaction(write=False) as txn:
            return list(txn.manifest.keys)

    def entries(self) -> list[KeyEntry]:
        """The manifest entry of every key."""
        with self._committer.transaction(write=False) as txn:
            return list(txn.manifest.keys.values())

    def describe(self) -> dict[str, Any]:
        """Everything ``kvcli show`` prints: store, updater, and each key's entry."""
        with self._committer.transaction(write=False) as txn:
            m = txn.manifest
            warnings = []
            python = python_spec(m.updater)
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

    def reset(self, store_type: str | None = None, store_options: Mapping[str, Any] | None = None) -> Manifest:
        """Delete every key, the updater and its state; optionally change the store type.

        Works on a damaged session too (the manifest is not read, except for its store type).
        """
        if store_type:
            self.requested_type = normal_type(store_type)
            self.requested_options = {k: v for k, v in (store_options or {}).items() if v is not None}
            check_options(self.requested_type, self.requested_options)
        with self._committer.locked(shared=False, create=True):
            old = None
            try:
                old = self._committer.read_manifest()
            except SessionError:
                pass
            if self.requested_type:
                store_type_, options = self.requested_type, dict(self.requested_options)
            elif old is not None:
                store_type_, options = old.store_type, dict(old.store_options)
            else:
                store_type_, options = "local", {}
            # a new generation: every cached copy of the old manifest is stale
            # (a session at the largest generation a manifest holds starts over at 0)
            generation = old.generation + 1 if old is not None and old.generation < MAX_COUNTER - 1 else 0
            manifest = Manifest(store_type_, options, generation=generation)
            self._live.close_if_changed(manifest)
            self._live.loaded.clear()
            self._live.residuals = {}
            if self._live.store is not None:
                for key in list(self._live.store.keys()):
                    self._live.store.delete(key)
                self._live.store.set_updater(None)
                self._live.store.set_gradient_compression(None)
            self._live.updater_sig = None
            try:
                self._committer.write_manifest(manifest)
            except DiskError as error:
                if not error.no_space:
                    raise
                # A full disk: every key goes anyway, so free their files first. A crash in
                # between leaves a session without files, which `reset` repairs.
                self._committer.collect_garbage(Manifest(store_type_, options))
                self._committer.write_manifest(manifest)
            self._committer.collect_garbage(manifest)
        from kvcli.session import cluster

        cluster.expire_kept(self.home, self.path)  # the home's cluster stops the kept servers
        return manifest

    def export(self, folder: str | Path) -> Path:
        """Copy the committed session into ``folder`` (same format; ``import`` reads it)."""
        folder = Path(folder).expanduser()
        new = check_export_folder(folder)
        with self._committer.transaction(write=False) as txn:
            manifest = txn.manifest
            if not self.exists():
                raise SessionError(f"session {self.name!r} does not exist yet: nothing to export")
            try:
                private_folder(folder, "export folder")
                private_folder(folder / DATA, "export data folder")
                for name in sorted(manifest.files()):
                    copy_file(self.path / DATA / name, folder / DATA / name)
                for entry in manifest.keys.values():  # an export holds every value as a file
                    if entry.inline:
                        write_npy(folder / DATA / entry.file, entry.value(self.path / DATA))
                exported = manifest.to_json()
                exported["format_version"] = export_format_version(manifest.keys)
                write_json(folder / MANIFEST, exported)
                fsync_dir(folder / DATA)
                fsync_dir(folder)
            except OSError as error:
                if new:  # half an export is no export: what this call made goes
                    import shutil

                    shutil.rmtree(folder, ignore_errors=True)
                raise SessionError(f"cannot write the export folder {folder}: {error.strerror or error}") from None
        return folder

    def import_plan(self, folder: str | Path, merge: bool = False) -> ImportPlan:
        """What :meth:`import_` of ``folder`` would do to the session's keys (replaced,
        dropped, added), read without changing anything (the export is checked as the
        import checks it)."""
        source = read_export(Path(folder).expanduser())
        return plan(self.peek_keys() if self.exists() else [], list(source.keys), merge)

    def import_(self, folder: str | Path, merge: bool = False) -> Manifest:
        """Replace the session's keys, updater and optimizer state by an exported copy; with
        ``merge``, only set the exported keys (as :meth:`init` would: their optimizer state
        starts afresh) and keep the session's other keys, its updater and its state.

        Everything in ``folder`` is checked (see :mod:`kvcli.session.imports`) before the
        session changes; the session keeps its own store type. Call :meth:`import_plan`
        first to tell the user which keys are replaced and dropped.
        """
        folder = Path(folder).expanduser()
        source = read_export(folder)
        self.notices = []
        if merge:
            return self._merge(folder, source)
        updater, notices = adopted_updater(folder, source)
        staged: list[Path] = []  # new files of the session: removed again if the import fails
        try:
            with self._committer.transaction(write=True, create=True) as txn:
                manifest = txn.manifest
                manifest.keys = {}
                txn.all_rows = True
                data = self.path / DATA
                for key, entry in source.keys.items():
                    new = KeyEntry(key, new_file_name(".npy"), entry.dtype, entry.shape, entry.version)
                    staged.append(data / new.file)
                    small = stage_value(folder, key, entry, data / new.file)
                    if small is not None:
                        new.hold(small)
                    manifest.keys[key] = new
                manifest.updater, manifest.updater_trust, manifest.optimizer_state = updater, None, None
                if source.optimizer_state and python_spec(source.updater) is None:  # else dropped unread
                    manifest.optimizer_state = new_file_name(".npz")
                    staged.append(data / manifest.optimizer_state)
                    stage_state(folder, source, data / manifest.optimizer_state)
                txn.dirty = True
        except BaseException:
            for path in staged:
                remove_quietly(path)
            raise
        self.notices = notices
        return manifest

    def _merge(self, folder: Path, source: Manifest) -> Manifest:
        """``import_(merge=True)``: each exported key set as :meth:`init` sets it."""
        import tempfile

        values: list[np.ndarray] = []
        with tempfile.TemporaryDirectory(prefix="kvcli-import-") as scratch:  # 0700: this user's
            for key, entry in source.keys.items():  # each file read once, checked, held
                staged = Path(scratch) / entry.file
                small = stage_value(folder, key, entry, staged)
                values.append(small if small is not None else read_npy(staged, entry.dtype, tuple(entry.shape)).copy())
        if source.updater != "assign" or source.optimizer_state:
            self.notices.append(f"the exported updater {source.updater!r}"
                                + (" and its optimizer state were" if source.optimizer_state else " was")
                                + " not adopted (a merge keeps the session's)")
        self.init(list(source.keys), values)
        with self._committer.transaction(write=False) as txn:
            return txn.manifest


    def _entry(self, manifest: Manifest, key: Key) -> KeyEntry:
        entry = manifest.keys.get(key)
        if entry is None:
            known = ", ".join(repr(k) for k in list(manifest.keys)[:8]) or "none"
            found = f"key {key!r} is not initialised in session {self.name!r} (known keys: {known})"
            raise UnknownKeyError(f"{found}: call init({key!r}, value) first", problem=found, remedy="init", key=key)
        return entry

    def _check_kinds(self, manifest: Manifest, keys: Sequence[Key]) -> None:
        kinds = {type(k).__name__ for k in keys}
        held = manifest.key_kind  # without reading every row
        if held is not None:
            kinds.add(held)
        if len(kinds) > 1:
            held = manifest.key_kind or "mixed"
            found = f"keys {list(keys)!r} mix int and str keys (session {self.name!r} holds {held} keys)"
            raise KeyTypeError(
                f"{found}: use one kind of key per session, or Session.reset()", problem=found, remedy="one-kind"
            )
