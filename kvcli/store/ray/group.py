"""The Ray side of ``dist_sync`` / ``dist_async``: connecting to Ray, starting and finding a
worker group's actors (a coordinator and the key servers), and which server holds which rows
of a key. :class:`kvcli.store.ray.store.RayBackend` is the worker that uses them.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import time
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from kvcli import config
from kvcli.errors import DistributedError, KVCliError, StoreError
from kvcli.osutil import runtime_dir
from kvcli.arrays.core import Key

ENV_ADDRESS = config.RAY_ADDRESS.name
DEFAULT_TIMEOUT = config.DIST_TIMEOUT.default
#: How many times Ray restarts a dead server (which comes back without values).
DEFAULT_SERVER_RESTARTS = 1
#: Seconds :meth:`Group.stop` gives the servers to free their shared memory before the kill.
STOP_GRACE = 5.0


# ---------------------------------------------------------------------- Ray plumbing
def import_ray(kind: str) -> Any:
    """``import ray``, or a :class:`DistributedError` saying what to install."""
    try:
        import ray
    except ImportError:
        raise DistributedError(
            f"{kind} needs Ray, which is not installed: pip install 'kvcli[dist]'"
        ) from None
    return ray


#: Ray's system settings for an instance kvcli starts itself (``address="local"``). Ray
#: runs its worker processes at nice 15 by default, as background work; kvcli's key servers
#: and workers are the job's critical path, and at nice 15 a machine busy with anything else
#: leaves them a few percent of a core (100 keys of 64 KiB: one step went from 19 ms to
#: 220 ms with two busy processes on 2 cores). MXNet's ps-lite processes run at nice 0.
LOCAL_RAY_SYSTEM_CONFIG: dict[str, Any] = {"worker_niceness": 0}


#: Bytes the longest Unix socket path Ray makes takes after kvcli's runtime folder:
#: ``/ray/session_2026-12-04_22-25-45_016847_PID/sockets/plasma_store.N`` (a 7-digit pid).
RAY_SOCKET_ROOM = len("/ray/session_2026-12-04_22-25-45_016847_4194304/sockets/plasma_store.99")


def ray_temp_dir() -> Path:
    """The temp folder of the Ray instances kvcli starts: ``ray`` in this user's runtime
    folder in the temporary folder (:func:`kvcli.osutil.runtime_dir`: 0700, short enough
    for Ray's socket paths; where Ray's own ``/tmp/ray`` would be, for its bulky files).
    Ray makes the folders below it open to all (0777), as it does ``/tmp/ray``; the
    runtime folder keeps every other user out of its logs, sockets and spilled objects.

    Raises:
        UnsafePathError: the runtime folder is another user's or open to others.
    """
    return runtime_dir(room=RAY_SOCKET_ROOM, bulky=True) / "ray"


def ray_init_options(address: str) -> dict[str, Any]:
    """The ``ray.init`` arguments kvcli uses for ``address`` (``"local"`` starts an instance,
    whose logs and sockets go to the private :func:`ray_temp_dir`)."""
    options: dict[str, Any] = {"address": address, "include_dashboard": False, "logging_level": logging.WARNING}
    if address == "local":  # a cluster that is joined keeps its own settings
        options["_system_config"] = dict(LOCAL_RAY_SYSTEM_CONFIG)
        options["_temp_dir"] = str(ray_temp_dir())
    return options


#: The environment variables of Ray's token authentication (Ray 2.52 and later): the mode,
#: the file holding the token, and the token itself (which would win over the file).
AUTH_MODE, AUTH_TOKEN_PATH, AUTH_TOKEN = "RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_TOKEN"


def start_local_ray(ray: Any, token: Path | None = None, **options: Any) -> None:
    """Start a new local Ray instance for this process (``ray.init`` with
    :func:`ray_init_options` ``("local")`` and ``options``) that no other local user can join.

    Its auth token is a new private file (0600, in this user's 0700 runtime folder, removed
    when this process exits) or ``token`` (the home's cluster token); this process, Ray's
    processes and every worker they start (and the commands ``kvcli launch`` runs there)
    inherit ``RAY_AUTH_TOKEN_PATH`` naming it. Ray's own default, ``~/.ray/auth_token``
    (written 0644, in a home other users may read), is never written nor read.
    """
    from kvcli.osutil import process_secret

    path = token if token is not None else process_secret("ray-token")
    os.environ.pop(AUTH_TOKEN, None)
    os.environ.update({AUTH_MODE: "token", AUTH_TOKEN_PATH: str(path)})
    raylet: Any = getattr(ray, "_raylet", None)
    if hasattr(raylet, "AuthenticationTokenLoader"):  # Ray 2.52 and later
        # Ray read the variables when it was imported: read them again, as Ray itself does
        raylet.Config.initialize("")
        raylet.AuthenticationTokenLoader.instance().reset_cache()
    ray.init(**ray_init_options("local"), **options)


def connect(address: str | None = None, kind: str = "dist_sync") -> Any:
    """Connect this process to Ray and return the ``ray`` module.

    A process already connected (a launched worker, a test session) keeps its connection.
    Otherwise ``address`` (or ``KVCLI_RAY_ADDRESS``) names the cluster — ``"auto"`` or
    ``"host:port"`` — and without one a local Ray instance is started.
    """
    ray = import_ray(kind)
    if ray.is_initialized():
        return ray
    global _joined
    # "local", not None: Ray's own default joins whatever cluster /tmp/ray/ray_current_cluster
    # names (another user's `ray start`, or a dead one, which hangs for minutes); kvcli joins a
    # cluster only when told to (KVCLI_RAY_ADDRESS, --ray-address, a session's kept cluster).
    address = address or config.get(config.RAY_ADDRESS) or "local"
    try:
        if address == "local":
            start_local_ray(ray, ignore_reinit_error=True)
        else:
            ray.init(**ray_init_options(address), ignore_reinit_error=True)
    except KVCliError:  # an unsafe runtime folder: its own line
        raise
    except (ConnectionError, RuntimeError, ValueError, OSError) as error:
        if address == "local":
            raise DistributedError(
                f"{kind}: cannot start a local Ray instance: {error}; Ray's own messages above say why "
                "(`ray stop --force` ends Ray processes left from earlier runs)"
            ) from None
        raise DistributedError(
            f"{kind}: cannot connect to the Ray cluster at {address!r}: {error}; start one with "
            f"`ray start --head`, or pass no address (and unset {ENV_ADDRESS}) to start a local one"
        ) from None
    _joined = address != "local"
    return ray


#: Whether :func:`connect` joined a running cluster (rather than starting a private one).
_joined = False


def joined_cluster() -> bool:
    """Whether this process joined a Ray cluster that runs without it (its exit ends only
    its own Ray job there, so it may skip Ray's shutdown: see ``kvcli.cli.app.main``)."""
    return _joined


def mode_of(kind: str) -> str:
    """The servers' mode for a canonical distributed type: ``"sync"`` or ``"async"``."""
    return "sync" if kind == "dist_sync" else "async"


def cluster_address(ray: Any) -> str:
    """The address other processes pass to ``ray.init`` to join this process's cluster."""
    return str(ray.get_runtime_context().gcs_address)


def namespace_of(group: str) -> str:
    """The Ray namespace holding a group's actors."""
    return f"kvcli-{group}"


@dataclass
class Group:
    """Handles to one group's actors."""

    id: str
    coordinator: Any
    servers: list[Any]
    #: Whether this process started the actors (and so stops them).
    owned: bool

    def mark_gone(self, rank: int, reason: str) -> None:
        """Tell the coordinator and every server that ``rank`` will not come back."""
        for actor in (self.coordinator, *self.servers):
            actor.mark_gone.remote(rank, reason)

    def stop(self, ray: Any) -> None:
        """Kill the group's actors (used by whoever started them), after the servers have
        unlinked their shared memory (a kill leaves no time for it)."""
        try:
            ray.wait([s.close.remote() for s in self.servers], num_returns=len(self.servers), timeout=STOP_GRACE)
        except Exception:  # a dead server: Ray's resource tracker or sweep_orphans frees its memory
            pass
        for actor in (*self.servers, self.coordinator):
            if actor is None:  # stop_group found no coordinator
                continue
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # already dead: nothing left to stop
                pass
        # ray.kill only asks; a call sent in the next few ms can still be answered. Wait
        # until each server is really gone, so that a closed store's servers answer nothing
        # and hold nothing (measured: gone 1-8 ms after the kill).
        deadline = time.monotonic() + STOP_GRACE
        alive = list(self.servers)
        while alive and time.monotonic() < deadline:
            still = []
            for server in alive:
                try:
                    ray.get(server.ping.remote(), timeout=max(0.1, deadline - time.monotonic()))
                except Exception:  # dead (RayActorError), as wanted
                    continue
                still.append(server)
            alive = still
            if alive:
                time.sleep(0.005)


_ACTOR_CLASSES: dict[str, Any] = {}


def _actor_class(name: str) -> Any:
    """The Ray actor class for ``KeyServer`` / ``Coordinator`` (made once per process)."""
    if name not in _ACTOR_CLASSES:
        import ray

        from kvcli.store.ray import server as dist_server

        cls = getattr(dist_server, name)
        _ACTOR_CLASSES[name] = ray.remote(**dist_server.SERVER_ACTOR_OPTIONS)(cls) if name == "KeyServer" else ray.remote(cls)
    return _ACTOR_CLASSES[name]


def start_group(
    num_workers: int,
    num_servers: int = 1,
    *,
    group: str | None = None,
    mode: str | None = None,
    server_restarts: int = DEFAULT_SERVER_RESTARTS,
    timeout: float = DEFAULT_TIMEOUT,
    server_resources: dict[str, float] | Sequence[dict[str, float]] | None = None,
    detached: bool = False,
) -> Group:
    """Start a group's coordinator and servers (the launcher does this; so does a lone store).

    The actors need no CPU (``num_cpus=0``) so that servers and workers fit on a small
    machine; they live as long as this process or until :meth:`Group.stop`.
    ``server_resources`` (Ray custom resources, e.g. ``{"kvcli_server": 0.01}``) places the
    coordinator and servers on the nodes that offer them; a list gives each server its own
    (server ``i`` gets entry ``i``, the coordinator the first): servers on different nodes,
    so that no one node's link carries every key. ``detached`` actors outlive this
    process (a session's kept group, see :func:`keep_group`) until killed or Ray stops.
    """
    ray = import_ray("dist")
    if num_workers < 1:
        raise StoreError(f"num_workers must be at least 1, got {num_workers}")
    if num_servers < 1:
        raise StoreError(f"num_servers must be at least 1, got {num_servers}")
    group = group or uuid.uuid4().hex[:12]
    namespace = namespace_of(group)
    try:
        per_server = _per_server(server_resources, num_servers)
        placements: list[dict[str, Any]] = [{"resources": dict(r)} if r else {} for r in per_server]
        if detached:
            for placement in placements:
                placement["lifetime"] = "detached"
        coordinator = _actor_class("Coordinator").options(
            name="coordinator", namespace=namespace, num_cpus=0, max_restarts=0, **placements[0]
        ).remote(num_workers, num_servers)
        servers = [
            _actor_class("KeyServer").options(
                name=f"server-{index}",
                namespace=namespace,
                num_cpus=0,
                max_restarts=server_restarts,
                max_task_retries=0,
                **placements[index],
            ).remote(index, num_workers, mode)
            for index in range(num_servers)
        ]
    except ValueError as error:  # a name already taken
        raise DistributedError(f"cannot start kvcli group {group!r}: {error}") from None
    started = Group(group, coordinator, servers, owned=True)
    try:
        ray.get([coordinator.config.remote(), *(s.ping.remote() for s in servers)], timeout=timeout)
    except Exception as error:
        started.stop(ray)
        raise DistributedError(f"kvcli group {group!r} did not start within {timeout:g}s: {error}") from None
    return started


def _per_server(
    resources: dict[str, float] | Sequence[dict[str, float]] | None, num_servers: int
) -> list[dict[str, float] | None]:
    """``server_resources`` as one entry per server (a dict or None is every server's)."""
    if resources is None or isinstance(resources, dict):
        return [resources] * num_servers
    listed: list[dict[str, float] | None] = list(resources)
    if len(listed) != num_servers:
        raise StoreError(f"server_resources lists {len(listed)} servers but num_servers is {num_servers}")
    return listed


def find_group(group: str, timeout: float) -> Group | None:
    """The running group ``group``, or None when it has not been started."""
    ray = import_ray("dist")
    namespace = namespace_of(group)
    try:
        coordinator = ray.get_actor("coordinator", namespace=namespace)
    except ValueError:
        return None
    group_config = ray.get(coordinator.config.remote(), timeout=timeout)
    servers = []
    for index in range(group_config["num_servers"]):
        deadline = time.monotonic() + timeout
        while True:  # the starter names the coordinator first, then the servers
            try:
                servers.append(ray.get_actor(f"server-{index}", namespace=namespace))
                break
            except ValueError:
                if time.monotonic() > deadline:
                    raise DistributedError(
                        f"kvcli group {group!r} has no server {index} after {timeout:g}s"
                    ) from None
                time.sleep(0.1)
    return Group(group, coordinator, servers, owned=False)


# ---------------------------------------------------------------------- kept groups
#: Prefix of the groups that dist sessions keep in the home's cluster between commands.
KEPT_PREFIX = "kept-"


def kept_group_id(session_path: Path, kind: str, num_servers: int) -> str:
    """The group a session keeps: one per session folder, store type and server count (a
    session that changes either gets a new group; the old one idles out)."""
    digest = hashlib.sha256(f"{Path(session_path).resolve()}|{kind}|{num_servers}".encode()).hexdigest()[:16]
    return f"{KEPT_PREFIX}{digest}"


def keep_group(group: str, num_servers: int, mode: str, timeout: float, server_restarts: int = DEFAULT_SERVER_RESTARTS) -> Group:
    """The session's kept group of one worker, found alive or started detached.

    Only the actors are reused, never their values: the session reloads every key it uses
    from its folder, and the updater with its state, so the folder stays the one truth. A
    group with a dead or missing actor is stopped and started again.
    """
    ray = import_ray("dist")
    try:
        found = find_group(group, min(timeout, 2.0))
        if found is not None:
            ray.get([found.coordinator.config.remote(), *(s.ping.remote() for s in found.servers)], timeout=timeout)
            return found
    except Exception:  # a dead actor or one that never came: start afresh
        stop_group(group)
    try:
        return start_group(1, num_servers, group=group, mode=mode, server_restarts=server_restarts,
                           timeout=timeout, detached=True)
    except DistributedError:
        found = find_group(group, timeout)  # a concurrent command of the same session won the race
        if found is None:
            raise
        return found


def stop_group(group: str) -> bool:
    """Kill whatever actors of ``group`` are running; returns whether there were any."""
    ray = import_ray("dist")
    coordinator = _named_actor(ray, "coordinator", group)
    servers: list[Any] = []
    while (server := _named_actor(ray, f"server-{len(servers)}", group)) is not None:
        servers.append(server)
    # the servers as servers: Group.stop has them unlink their shared memory before the kill
    Group(group, coordinator, servers, owned=True).stop(ray)
    return coordinator is not None or bool(servers)


def _named_actor(ray: Any, name: str, group: str) -> Any:
    """The actor ``name`` of ``group``, or None when there is none."""
    try:
        return ray.get_actor(name, namespace=namespace_of(group))
    except ValueError:
        return None


def _home(key: Key, num_servers: int) -> int:
    """The server a key lives on (its first row range, when split)."""
    if isinstance(key, int):
        return key % num_servers
    return zlib.crc32(key.encode("utf-8")) % num_servers


#: Where the parts of a key live: (server index, row slice or None for the whole array).
Layout = list[tuple[int, slice | None]]


def layout_of(key: Key, shape: tuple[int, ...], num_servers: int, bound: int) -> Layout:
    """Split a value of ``shape`` by rows over the servers when it has ``bound`` elements or
    more (MXNet's big-array rule); otherwise the whole value lives on the key's home server."""
    home = _home(key, num_servers)
    size = math.prod(shape)
    if num_servers == 1 or not shape or shape[0] < 2 or size < bound:
        return [(home, None)]
    parts = min(num_servers, shape[0])
    rows, extra = divmod(shape[0], parts)
    layout: Layout = []
    start = 0
    for part in range(parts):
        stop = start + rows + (1 if part < extra else 0)
        layout.append(((home + part) % num_servers, slice(start, stop)))
        start = stop
    return layout
