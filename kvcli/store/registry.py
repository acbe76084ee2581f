"""The one table of store types (:data:`REGISTRY`): every name a user may pass to
:func:`kvcli.create`, the backend class behind it, the options it takes and the ones a
session remembers. Numpy-free: the CLI's option table reads it at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

from kvcli.errors import StoreError, UnsupportedError

if TYPE_CHECKING:  # the registry stays numpy-free: the CLI's option table reads it at start-up
    from kvcli.store.backend import Backend


class OptionSpec(NamedTuple):
    """The values a store option a session records may take: ``kind`` (int or str) and its
    inclusive range (for a str: its length). Read by the session's manifest check, the
    CLI's option table and the backends, so each range is written once."""

    kind: type
    low: int
    high: int


#: Store options a session records, and their ranges.
SESSION_OPTION_SPECS: dict[str, OptionSpec] = {
    "num_devices": OptionSpec(int, 1, 64),
    "address": OptionSpec(str, 1, 4096),
    "num_servers": OptionSpec(int, 1, 1024),
}

#: Options of the distributed types (see :mod:`kvcli.store.ray`).
DIST_OPTIONS = (
    "address", "group", "rank", "num_workers", "num_servers", "timeout", "bigarray_bound",
    "server_restarts", "member",
)


class StoreType(NamedTuple):
    """One backend and the names it answers to.

    Attributes:
        name: the canonical name (what a session records).
        backend: ``"module:Class"`` of the :class:`~kvcli.store.backend.Backend`,
            imported on first use so that ``import kvcli`` stays light.
        aliases: other names for it, e.g. MXNet's ``local_allreduce_cpu``; the store's
            ``type`` is the name it was created with.
        options: keyword options the backend takes.
        session_options: the options a session remembers (a subset of ``options``).
        compression: whether ``set_gradient_compression`` applies (MXNet: the types
            whose name contains ``device`` or ``dist``).
        takes_kind: the backend's first argument is the canonical name (dist_sync/async).
    """

    name: str
    backend: str
    aliases: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    session_options: tuple[str, ...] = ()
    compression: bool = False
    takes_kind: bool = False

    def backend_class(self) -> type[Backend]:
        module, _, cls = self.backend.partition(":")
        return getattr(importlib.import_module(module), cls)


#: Canonical name -> type. Aliases are resolved through :data:`NAMES`.
REGISTRY: dict[str, StoreType] = {}
#: Every accepted name (canonical or alias, lower case) -> canonical name.
NAMES: dict[str, str] = {}
#: MXNet store types kvcli does not provide, and what to use instead.
UNAVAILABLE: dict[str, str] = {
    "nccl": "kvcli has no GPUs; use 'device' (device processes sum the values) or 'local'",
    "horovod": "use 'dist_sync' (start the workers with kvcli.store.ray.launch.launch or `kvcli launch`)",
    "byteps": "use 'dist_sync' (start the workers with kvcli.store.ray.launch.launch or `kvcli launch`)",
}


def register(store_type: StoreType) -> StoreType:
    """Add (or replace) a store type; its name and aliases become valid for :func:`create`."""
    for name in (store_type.name, *store_type.aliases):
        owner = NAMES.get(name.lower())
        if owner is not None and owner != store_type.name:
            raise StoreError(f"store type name {name!r} already belongs to {owner!r}: choose another name")
    REGISTRY[store_type.name] = store_type
    for name in (store_type.name, *store_type.aliases):
        NAMES[name.lower()] = store_type.name
    return store_type


register(StoreType("local", "kvcli.store.local:LocalBackend", aliases=("local_update_cpu", "local_allreduce_cpu")))
register(StoreType(
    "device", "kvcli.store.device.store:DeviceBackend", aliases=("local_allreduce_device",),
    options=("num_devices", "timeout", "warm_dir"), session_options=("num_devices",), compression=True,
))
register(StoreType(
    "dist_sync", "kvcli.store.ray.store:RayBackend", aliases=("dist", "dist_device_sync", "dist_sync_device"),
    options=DIST_OPTIONS, session_options=("address", "num_servers"), compression=True, takes_kind=True,
))
register(StoreType(
    "dist_async", "kvcli.store.ray.store:RayBackend", options=DIST_OPTIONS,
    session_options=("address", "num_servers"), compression=True, takes_kind=True,
))


def known_names() -> str:
    """The canonical type names, for error messages."""
    return ", ".join(REGISTRY)


def resolve(name: Any) -> StoreType:
    """The registered type called ``name`` (any case, aliases included), or a
    :class:`~kvcli.errors.StoreError` naming the valid ones."""
    key = name.lower() if isinstance(name, str) else None
    if key in UNAVAILABLE:
        raise UnsupportedError(f"store type {name!r} is not available in kvcli: {UNAVAILABLE[key]}")
    canonical = NAMES.get(key) if key is not None else None
    if canonical is None:
        raise StoreError(f"unknown store type {name!r}: use one of {known_names()}")
    return REGISTRY[canonical]


def check_options(store_type: StoreType, options: dict[str, Any]) -> None:
    """Refuse options the type does not take (before anything starts)."""
    unknown = sorted(set(options) - set(store_type.options))
    if unknown:
        takes = f"it takes {', '.join(store_type.options)}" if store_type.options else "it takes no options"
        raise StoreError(f"store type {store_type.name!r} has no option {unknown[0]!r}: {takes}")
