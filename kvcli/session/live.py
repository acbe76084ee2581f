"""The live store behind a session: created on first use, kept across commands, synced
with the manifest (keys, updater and its state, gradient compression and residuals).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from kvcli import config
from kvcli.errors import SessionError
from kvcli.session.files import check_regular, corrupted
from kvcli.session.manifest import Manifest
from kvcli.session.names import DATA, MANIFEST, Key, is_local_address, python_spec

if TYPE_CHECKING:  # numpy is imported where values are made: copying a checkpoint needs none of it
    import numpy as np


class Place:
    """Where a session is and what its opener asked for: the one record that the
    :class:`~kvcli.session.core.Session`, its live store and its committer share (the
    session owns it; ``reset`` and the shell change the request)."""

    def __init__(self, name: str, home: Path, path: Path, requested_type: str | None = None,
                 requested_options: dict[str, Any] | None = None) -> None:
        self.name = name
        self.home = home
        self.path = path
        self.requested_type = requested_type
        self.requested_options: dict[str, Any] = requested_options or {}

    def __repr__(self) -> str:
        return f"Place({self.name!r}, {str(self.path)!r})"

    @property
    def manifest_path(self) -> Path:
        """Where an old (pre-SQLite) session keeps its manifest."""
        return self.path / MANIFEST


class LiveStore:
    """The store a :class:`~kvcli.session.core.Session` keeps alive between commands (and so
    its device workers): which committed values, updater and residuals it holds, and
    reloading only what another process changed. Owned by the session; the committer reads
    the store's values and records what it committed (:attr:`loaded`, :attr:`residuals`)."""

    def __init__(self, place: Place) -> None:
        self.place = place
        #: the running store (None until a command needed one)
        self.store: Any = None
        self._sig: tuple[str, str] | None = None
        #: key -> signature of the committed value the store holds
        self.loaded: dict[Key, tuple[str, int]] = {}
        #: the updater the store runs: (spec, optimizer-state file, trust MAC)
        self.updater_sig: tuple[str, str | None, str | None] | None = None
        #: key -> the residual file whose residuals the store holds
        self.residuals: dict[Key, str | None] = {}
        #: called just before a store starts, with what starts (see ``Session.on_store_start``)
        self.on_start: Callable[[str], None] | None = None

    def close(self) -> None:
        """Stop the store (device workers, connections). The session on disk stays."""
        store, self.store = self.store, None
        self._sig = None
        self.loaded = {}
        self.updater_sig = None
        self.residuals = {}
        if store is not None:
            store.close()

    def close_if_changed(self, manifest: Manifest) -> None:
        sig = (manifest.store_type, json.dumps(manifest.store_options, sort_keys=True))
        if self.store is not None and self._sig != sig:
            self.close()

    def store_for(self, manifest: Manifest, keys: Sequence[Key], reused: bool) -> Any:
        """The live store, holding the committed values of ``keys`` (loaded if needed).
        ``reused``: ``manifest`` is the committer's cached copy (no other process committed)."""
        self.close_if_changed(manifest)
        self._renew_kept_group()
        if self.store is None:
            import kvcli

            self.check_ray_address(manifest)
            options = dict(manifest.store_options)
            starting = "store"
            if manifest.store_type == "device":  # one-shot commands attach to the same devices
                from kvcli.store.device.store import warm_folder

                options["warm_dir"] = str(warm_folder(self.place.path))
            if manifest.store_type.startswith("dist"):
                starting = "cluster" if options.get("address") or config.get(config.RAY_ADDRESS) else "private-ray"
            if starting == "private-ray":
                from kvcli.session import cluster

                running = cluster.status(self.place.home)
                if running is not None:
                    starting = "cluster"
                    options["address"] = running.address
                    # Ray reads its auth token from the environment when it connects
                    os.environ.update(cluster.join_environment(self.place.home))
                    options.update(self._kept_group(manifest, options, running.address))
            if self.on_start is not None:
                self.on_start(starting)
            self.store = kvcli.create(manifest.store_type, **options)
            self._sig = (manifest.store_type, json.dumps(manifest.store_options, sort_keys=True))
            self.loaded = {}
            self.updater_sig = None
        store = self.store
        # drop what another process changed (nothing did when the manifest is this object's
        # own cached copy: then the check would only cost time, a key each)
        for key, signature in ([] if reused else list(self.loaded.items())):
            entry = manifest.keys.get(key)
            if entry is None or entry.signature != signature:
                if store.has(key):
                    store.delete(key)
                del self.loaded[key]
                self.residuals.pop(key, None)
        missing = [key for key in keys if key not in self.loaded]
        for key in missing:
            entry = manifest.keys[key]
            array = entry.value(self.place.path / DATA)
            store.load(key, array)  # not a user init: the optimizer state stays
            self.loaded[key] = entry.signature
        return store

    def _kept_group(self, manifest: Manifest, options: dict[str, Any], address: str) -> dict[str, Any]:
        """The store options that join this session's kept group in the home's cluster,
        started if need be ({} with ``KVCLI_DIST_IDLE=0``: the store starts its own servers
        and stops them when it closes)."""
        idle = config.get(config.DIST_IDLE)
        if not idle:
            return {}
        from kvcli.session import cluster
        from kvcli.store.ray.group import connect, keep_group, kept_group_id, mode_of

        kind = manifest.store_type
        servers = int(options.get("num_servers") or config.get(config.NUM_SERVERS) or 1)
        group = kept_group_id(self.place.path, kind, servers)
        cluster.note_kept(self.place.home, group, self.place.path, idle)  # before: the holder must not reap it meanwhile
        connect(address, kind)
        keep_group(group, servers, mode_of(kind), config.get(config.DIST_TIMEOUT))
        return {"group": group, "rank": 0, "num_workers": 1, "member": group}

    def _renew_kept_group(self) -> None:
        """Each command on a live store of a kept group renews the group's record; a group the
        holder stopped meanwhile (idle, or the session was reset elsewhere) means a new store."""
        group = getattr(self.store.backend, "group", None) if self.store is not None else None
        if not isinstance(group, str):  # no store, or not a dist one
            return
        from kvcli.store.ray.group import KEPT_PREFIX

        if not group.startswith(KEPT_PREFIX):
            return
        from kvcli.session import cluster

        if not cluster.note_kept(self.place.home, group, self.place.path, config.get(config.DIST_IDLE)):
            self.close()

    @staticmethod
    def updater_signature(manifest: Manifest) -> tuple[str, str | None, str | None]:
        trust = manifest.updater_trust
        return manifest.updater, manifest.optimizer_state, trust.mac if trust else None

    def cluster_address(self, options: dict[str, Any]) -> str | None:
        """The Ray address a dist store of this session joins: its own (``address``,
        ``KVCLI_RAY_ADDRESS``), else the home's running cluster (:mod:`kvcli.session.cluster`),
        else None (the store starts a private Ray runtime)."""
        own = options.get("address") or config.get(config.RAY_ADDRESS)
        if own:
            return str(own)
        from kvcli.session import cluster

        running = cluster.status(self.place.home)
        return running.address if running is not None else None

    def check_ray_address(self, manifest: Manifest) -> None:
        """A Ray address from the manifest alone is used only when it is on this machine:
        anything else must be confirmed by the caller (the store options asked for, or
        ``KVCLI_RAY_ADDRESS``), so a folder cannot send pulls anywhere."""
        address = manifest.store_options.get("address")
        if not address or is_local_address(address):
            return
        if address in (self.place.requested_options.get("address"), config.get(config.RAY_ADDRESS)):
            return
        problem = (f"session {self.place.name!r} names the Ray cluster {address!r}, which is not on this machine; "
                   "kvcli connects to it only when you confirm it")
        raise SessionError(
            f"{problem}: open the session with store option address={address!r}, or set KVCLI_RAY_ADDRESS",
            problem=problem, remedy="confirm-ray-address", address=address,
        )

    def updater_problem(self, manifest: Manifest) -> str | None:
        """Why the session's ``python:`` updater would be refused (None: it would run, or it is
        not a python updater)."""
        python = python_spec(manifest.updater)
        if python is None:
            return None
        from kvcli.session.trust import verified_source

        try:
            verified_source(self.place.home, python[0], manifest.updater_trust)
        except SessionError as error:
            return str(error)
        return None

    def sync_updater(self, manifest: Manifest) -> None:
        sig = self.updater_signature(manifest)
        if self.updater_sig == sig:
            return
        from kvcli.errors import KVCliError

        store = self.store
        python = python_spec(manifest.updater)
        try:
            if python is not None:  # only code the user named here, with the content they named
                from kvcli.optim.spec import python_updater
                from kvcli.session.trust import verified_source

                source, _digest = verified_source(self.place.home, python[0], manifest.updater_trust)
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

            path = self.place.path / DATA / manifest.optimizer_state
            check_regular(path, "the optimizer state file")
            try:
                updater = load_state(path, updater, shapes=manifest.shapes(), all_keys=True, adopt_spec=False)
            except KVCliError as error:
                raise corrupted(path, str(error)) from None
        try:
            store.set_updater(updater)
        except KVCliError as error:
            raise self._unusable_updater(manifest, error) from None
        self.updater_sig = sig

    @staticmethod
    def _unusable_updater(manifest: Manifest, error: Exception) -> SessionError:
        if isinstance(error, SessionError):
            return error
        found = f"the session's updater {manifest.updater!r} cannot be set up ({error})"
        return SessionError(f"{found}: choose another with Session.set_updater(spec)", problem=found, remedy="set-updater")

    def saved_state_keys(self, manifest: Manifest) -> int | None:
        """How many keys the committed optimizer state holds: 0 without one, None when its
        file cannot be read (a damaged state is still a state to drop knowingly)."""
        if not manifest.optimizer_state:
            return 0
        from kvcli.errors import KVCliError
        from kvcli.optim.state import read_meta

        path = self.place.path / DATA / manifest.optimizer_state
        try:
            check_regular(path, "the optimizer state file")
            return len(read_meta(path).keys)
        except (KVCliError, OSError):
            return None

    def stateful(self, manifest: Manifest) -> bool:
        """Whether the live updater is the manifest's and keeps state worth saving."""
        return (
            self.store is not None
            and self.updater_sig == self.updater_signature(manifest)
            and hasattr(self.store.updater, "state_dict")
        )

    def invalidate(self, keys: Sequence[Key]) -> None:
        """After a failed command the store may hold uncommitted values: forget them."""
        store = self.store
        if store is None:
            return
        for key in keys:
            if key in self.loaded:
                del self.loaded[key]
            self.residuals.pop(key, None)
            try:
                if store.has(key):
                    store.delete(key)
            except Exception:  # pragma: no cover - a dying store
                self.close()
                return
        self.updater_sig = None

    def sync_compression(self, manifest: Manifest) -> None:
        """Give the live store the manifest's compression (another process may have set it)."""
        active = self.store.gradient_compression
        if (None if active is None else active.spec) != manifest.compression:
            self.store.set_gradient_compression(manifest.compression)
            if active is None or manifest.compression is None:
                self.residuals = {}  # the store's residuals started or ended with this

    def sync_residuals(self, manifest: Manifest, keys: Sequence[Key]) -> None:
        """Give the live store each key's committed compression residuals (error feedback
        carries on across commands and processes, as within one MXNet process)."""
        from kvcli.errors import StoreError
        from kvcli.store.compression import load_residuals

        for key in keys:
            want = manifest.keys[key].residual
            if self.residuals.get(key) == want:
                continue
            arrays: list[np.ndarray] = []
            if want:
                try:
                    arrays = load_residuals(self.place.path / DATA / want, limit=manifest.keys[key].size)
                except (OSError, ValueError, StoreError) as error:
                    raise corrupted(self.place.path / DATA / want, f"compression residuals unreadable: {error}") from None
            self.store.set_compression_residuals(key, arrays)
            self.residuals[key] = want


def count_keys(count: int) -> str:
    """``1 key`` / ``3 keys``."""
    return f"{count} key{'' if count == 1 else 's'}"


def state_text(spec: str, count: int | None) -> str:
    """``the saved state of 'sgd:lr=0.1' for 2 keys`` (None: its file cannot be read)."""
    found = f"the saved state of {spec!r}"
    return f"{found} (its file cannot be read)" if count is None else f"{found} for {count_keys(count)}"
