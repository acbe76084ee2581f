"""The live store behind a session: created on first use, kept across commands, synced
with the manifest (keys, updater and its state, gradient compression and residuals).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from kvcli import config
from kvcli.errors import SessionError
from kvcli.session.files import check_regular, corrupted
from kvcli.session.manifest import Manifest
from kvcli.session.names import DATA, MANIFEST, Key, is_local_address, python_spec


class SessionAttrs:
    """The state a :class:`~kvcli.session.core.Session` keeps, declared for its bases (the
    live store and the committer) which read it; ``Session.__init__`` sets every one."""

    name: str
    home: Path
    path: Path
    requested_type: str | None
    requested_options: dict[str, Any]
    notices: list[str]
    _store: Any
    _store_sig: tuple[str, str] | None
    _loaded: dict[Key, tuple[str, int]]
    _updater_sig: tuple[str, str | None, str | None] | None
    _manifest: Manifest | None
    _residuals: dict[Key, str | None]
    _db: Any  # the session database's connection (sqlite3.Connection), kept across commands
    _db_write: bool
    _db_inode: int | None
    _stamp: tuple[str, int] | None  # (epoch, generation) of the cached manifest
    _committed: dict[Key, Any]  # key -> the files and layout its committed row names
    _scanned: bool
    _reused: bool  # the manifest of this command is the cached one (no other process committed)

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST


class LiveStore(SessionAttrs):
    """The store a :class:`~kvcli.session.core.Session` keeps alive between commands (and so
    its device workers): which keys and updater it holds, and reloading only what another
    process changed. A base of ``Session``; its attributes are declared in :class:`SessionAttrs`."""

    def close(self) -> None:
        """Stop the store (device workers, connections). The session on disk stays."""
        store, self._store = self._store, None
        self._store_sig = None
        self._loaded = {}
        self._updater_sig = None
        self._residuals = {}
        if store is not None:
            store.close()

    def _close_store_if_changed(self, manifest: Manifest) -> None:
        sig = (manifest.store_type, json.dumps(manifest.store_options, sort_keys=True))
        if self._store is not None and self._store_sig != sig:
            self.close()

    def _store_for(self, manifest: Manifest, keys: Sequence[Key]) -> Any:
        """The live store, holding the committed values of ``keys`` (loaded if needed)."""
        self._close_store_if_changed(manifest)
        self._renew_kept_group()
        if self._store is None:
            import kvcli

            self._check_ray_address(manifest)
            options = dict(manifest.store_options)
            if manifest.store_type == "device":  # one-shot commands attach to the same devices
                from kvcli.store.device.store import warm_folder

                options["warm_dir"] = str(warm_folder(self.path))
            if manifest.store_type.startswith("dist") and not options.get("address") \
                    and not config.get(config.RAY_ADDRESS):
                from kvcli.session import cluster

                running = cluster.status(self.home)
                if running is not None:
                    options["address"] = running.address
                    # Ray reads its auth token from the environment when it connects
                    os.environ.update(cluster.join_environment(self.home))
                    options.update(self._kept_group(manifest, options, running.address))
            self._store = kvcli.create(manifest.store_type, **options)
            self._store_sig = (manifest.store_type, json.dumps(manifest.store_options, sort_keys=True))
            self._loaded = {}
            self._updater_sig = None
        store = self._store
        # drop what another process changed (nothing did when the manifest is this object's
        # own cached copy: then the check would only cost time, a key each)
        for key, signature in ([] if self._reused else list(self._loaded.items())):
            entry = manifest.keys.get(key)
            if entry is None or entry.signature != signature:
                if store.has(key):
                    store.delete(key)
                del self._loaded[key]
                self._residuals.pop(key, None)
        missing = [key for key in keys if key not in self._loaded]
        for key in missing:
            entry = manifest.keys[key]
            array = entry.value(self.path / DATA)
            store.load(key, array)  # not a user init: the optimizer state stays
            self._loaded[key] = entry.signature
        return store

    def _kept_group(self, manifest: Manifest, options: dict[str, Any], address: str) -> dict[str, Any]:
        """The store options that join this session's kept group in the home's cluster,
        started if need be ({} with ``KVCLI_DIST_IDLE=0``: the store starts its own servers
        and stops them when it closes)."""
        idle = config.get(config.DIST_IDLE)
        if not idle:
            return {}
        from kvcli.session import cluster
        from kvcli.store.dist.group import connect, keep_group, kept_group_id, mode_of

        kind = manifest.store_type
        servers = int(options.get("num_servers") or config.get(config.NUM_SERVERS) or 1)
        group = kept_group_id(self.path, kind, servers)
        cluster.note_kept(self.home, group, self.path, idle)  # before: the holder must not reap it meanwhile
        connect(address, kind)
        keep_group(group, servers, mode_of(kind), config.get(config.DIST_TIMEOUT))
        return {"group": group, "rank": 0, "num_workers": 1, "member": group}

    def _renew_kept_group(self) -> None:
        """Each command on a live store of a kept group renews the group's record; a group the
        holder stopped meanwhile (idle, or the session was reset elsewhere) means a new store."""
        group = getattr(self._store, "group", None) if self._store is not None else None
        if not isinstance(group, str):  # no store, or not a dist one
            return
        from kvcli.store.dist.group import KEPT_PREFIX

        if not group.startswith(KEPT_PREFIX):
            return
        from kvcli.session import cluster

        if not cluster.note_kept(self.home, group, self.path, config.get(config.DIST_IDLE)):
            self.close()

    @staticmethod
    def _updater_signature(manifest: Manifest) -> tuple[str, str | None, str | None]:
        trust = manifest.updater_trust
        return manifest.updater, manifest.optimizer_state, trust.mac if trust else None

    def _cluster_address(self, options: dict[str, Any]) -> str | None:
        """The Ray address a dist store of this session joins: its own (``address``,
        ``KVCLI_RAY_ADDRESS``), else the home's running cluster (:mod:`kvcli.session.cluster`),
        else None (the store starts a private Ray runtime)."""
        own = options.get("address") or config.get(config.RAY_ADDRESS)
        if own:
            return str(own)
        from kvcli.session import cluster

        running = cluster.status(self.home)
        return running.address if running is not None else None

    def _check_ray_address(self, manifest: Manifest) -> None:
        """A Ray address from the manifest alone is used only when it is on this machine:
        anything else must be confirmed by the caller (``--ray-address`` / the store
        options asked for, or ``KVCLI_RAY_ADDRESS``), so a folder cannot send pulls anywhere."""
        address = manifest.store_options.get("address")
        if not address or is_local_address(address):
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
        python = python_spec(manifest.updater)
        if python is None:
            return None
        from kvcli.session.trust import verified_source

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
        python = python_spec(manifest.updater)
        try:
            if python is not None:  # only code the user named here, with the content they named
                from kvcli.optim.spec import python_updater
                from kvcli.session.trust import verified_source

                source, _digest = verified_source(self.home, python[0], manifest.updater_trust)
                updater = python_updater(python[0], python[1], source)
            else:
                from kvcli.optim.spec import parse_updater

                updater = parse_updater(manifest.updater)
        except KVCliError as error:
            raise self._unusable_updater(manifest, error) from None
        if manifest.optimizer_state:
            # the state goes into the manifest's updater: the file's own spec is never adopted
            # (it could name other code or other settings), and its arrays must fit the keys
            from kvcli.optim.state import load_state

            path = self.path / DATA / manifest.optimizer_state
            check_regular(path, "the optimizer state file")
            try:
                updater = load_state(path, updater, shapes=manifest.shapes(), all_keys=True, adopt_spec=False)
            except KVCliError as error:
                raise corrupted(path, str(error)) from None
        try:
            store.set_updater(updater)
        except KVCliError as error:
            raise self._unusable_updater(manifest, error) from None
        self._updater_sig = sig

    @staticmethod
    def _unusable_updater(manifest: Manifest, error: Exception) -> SessionError:
        if isinstance(error, SessionError):
            return error
        found = f"the session's updater {manifest.updater!r} cannot be set up ({error})"
        return SessionError(f"{found}: choose another with Session.set_updater(spec)", problem=found, remedy="set-updater")

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
                    arrays = load_residuals(self.path / DATA / want, limit=manifest.keys[key].size)
                except (OSError, ValueError, StoreError) as error:
                    raise corrupted(self.path / DATA / want, f"compression residuals unreadable: {error}") from None
            self._store.set_compression_residuals(key, arrays)
            self._residuals[key] = want
