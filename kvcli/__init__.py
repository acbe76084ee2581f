"""kvcli: MXNet's KVStore and network visualisation, without MXNet.

>>> import kvcli
>>> with kvcli.create("local") as kv:
...     kv.init(3, [[2.0, 2.0]])
...     kv.push(3, [[8.0, 8.0]])
...     kv.pull(3).tolist()
[[8.0, 8.0]]

This module imports nothing heavy: the engine is loaded on first use of :func:`create`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["KVStore", "__version__", "create"]

if TYPE_CHECKING:  # pragma: no cover
    from kvcli.store.base import KVStore


def create(type: str = "local", **options: Any) -> "KVStore":  # noqa: A002 - MXNet's name
    """Create a key-value store.

    Args:
        type: ``"local"`` (in-process numpy), ``"device"`` (one worker process per device,
            arrays in shared memory), ``"dist_sync"`` or ``"dist_async"`` (Ray; needs the
            ``kvcli[dist]`` extra), or one of MXNet's other names for them
            (``"local_allreduce_cpu"``, ``"local_allreduce_device"``, ``"dist_device_sync"``,
            ...; see :data:`kvcli.store.REGISTRY`). ``store.type`` is the name given.
        **options: backend options, e.g. ``num_devices=4`` for ``device``,
            ``num_servers=2`` / ``address="auto"`` for the distributed types.

    Returns:
        A :class:`kvcli.store.base.KVStore`; use it as a context manager or call ``close()``.
    """
    from kvcli.store import create as _create

    return _create(type, **options)


def __getattr__(name: str) -> Any:
    if name == "KVStore":
        from kvcli.store.base import KVStore

        return KVStore
    raise AttributeError(f"module 'kvcli' has no attribute {name!r}")
