"""The KVStore engine: one contract (:mod:`kvcli.store.base`), several backends."""

from __future__ import annotations

from typing import Any

from kvcli.errors import StoreError
from kvcli.store.base import KVStore

#: Store types and the aliases MXNet users know them by.
TYPES: dict[str, str] = {
    "local": "local",
    "local_update_cpu": "local",
    "local_allreduce_cpu": "local",
    "device": "device",
    "local_allreduce_device": "device",
    "dist_sync": "dist_sync",
    "dist_async": "dist_async",
    "dist": "dist_sync",
}


def create(type: str = "local", **options: Any) -> KVStore:  # noqa: A002 - MXNet's name
    """Create a store of ``type`` (see :func:`kvcli.create`)."""
    kind = TYPES.get(str(type).lower()) if isinstance(type, str) else None
    if kind is None:
        raise StoreError(
            f"unknown store type {type!r}: use one of local, device, dist_sync, dist_async"
        )
    if kind == "local":
        from kvcli.store.local import LocalStore

        _no_options(kind, options)
        return LocalStore()
    if kind == "device":
        from kvcli.store.device import DeviceStore

        return DeviceStore(**options)
    from kvcli.store.dist import create_dist

    return create_dist(kind, **options)


def _no_options(kind: str, options: dict[str, Any]) -> None:
    if options:
        raise StoreError(f"store type {kind!r} takes no options, got {sorted(options)}")


__all__ = ["KVStore", "TYPES", "create"]
