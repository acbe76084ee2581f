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

#: Public names loaded on first use (``import kvcli`` stays light), and where they live.
_LAZY = {
    "KVStore": "kvcli.store.api",
    "Session": "kvcli.session",
    "device_array": "kvcli.store.device.shm",
}
_ERRORS = "kvcli.errors"

__all__ = ["KVStore", "Session", "__version__", "create", "device_array", "errors"]

if TYPE_CHECKING:  # pragma: no cover
    from kvcli.store.api import KVStore


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
        A :class:`kvcli.store.api.KVStore`; use it as a context manager or call ``close()``.
        Its ``set_updater`` / ``set_optimizer`` take spec strings too (``"sgd:lr=0.1"``),
        parsed by :func:`kvcli.updaters.parse_updater`.
    """
    from kvcli.store import create as _create

    return _create(type, parse_updater=_parse_updater, **options)  # the engine takes updater objects; this entry parses


def _parse_updater(spec: str) -> Any:
    """The optimizer layer's one parser (:func:`kvcli.updaters.parse_updater`), imported on
    first use: a store that is never given a spec string loads no optimizer code."""
    from kvcli.optim.spec import parse_updater

    return parse_updater(spec)


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY and name != "config":
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name == "errors" or name.endswith("Error"):
        errors = importlib.import_module(_ERRORS)
        if name == "errors":
            return errors
        if isinstance(getattr(errors, name, None), type):
            return getattr(errors, name)
    raise AttributeError(f"module 'kvcli' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Only the public API (the error classes are in :mod:`kvcli.errors`, and here too)."""
    from kvcli import errors

    classes = [n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, Exception)]
    return sorted({*__all__, *classes})
