"""Devices, as ``mxnet.context``: ``cpu(i)``, ``gpu(i)``, ``Context``, ``current_context()``.

kvcli computes everything on the CPU; a context names the device an array belongs to (the
``device`` store gives each one a worker process). ``with mx.cpu(1): ...`` makes ``cpu(1)``
the default context of this thread inside the block, as in MXNet.
"""

from __future__ import annotations

from _thread import _local  # threading.local itself, without importing threading (import time)
from typing import Any

from kvcli.arrays import random as random_streams
# MXNet's device type ids (``Context.devtype2str``), declared beside the ``.params`` codec
# that stores them
from kvcli.arrays.mxparams import DEVICE_TYPE_IDS as DEVICE_TYPE_IDS, DEVICE_TYPES as DEVICE_TYPES

_default = _local()  # .value: this thread's default Context


class _ContextClass(type):
    """Gives ``Context`` MXNet's (deprecated) class property ``Context.default_ctx``: this
    thread's default context, settable."""

    @property
    def default_ctx(cls) -> "Context":
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, value: "Context") -> None:
        _default.value = value


class Context(metaclass=_ContextClass):
    """A device: ``Context('cpu', 0)`` or ``Context(other_context)``; a context manager."""

    __slots__ = ("device_type", "device_id", "_old_ctx")
    device_type: str
    device_id: int
    devtype2str = DEVICE_TYPES
    devstr2type = DEVICE_TYPE_IDS
    #: This thread's default context lives in ``_default_ctx.value``, as in MXNet.
    _default_ctx = _default

    def __init__(self, device_type: "str | Context" = "cpu", device_id: int = 0) -> None:
        if isinstance(device_type, Context):
            device_id = device_type.device_id
            device_type = device_type.device_type
        if device_type not in DEVICE_TYPE_IDS:
            raise ValueError(
                f"unknown device type {device_type!r}: use one of {', '.join(DEVICE_TYPE_IDS)}"
            )
        self.device_type = str(device_type)
        self.device_id = int(device_id)
        self._old_ctx: Context | None = None

    @property
    def device_typeid(self) -> int:
        """MXNet's number for the device type (1 = cpu, 2 = gpu)."""
        return DEVICE_TYPE_IDS[self.device_type]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Context)
            and other.device_type == self.device_type
            and other.device_id == self.device_id
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self) -> "Context":
        self._old_ctx = current_context()
        _default.value = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _default.value = self._old_ctx

    def empty_cache(self) -> None:
        """Nothing cached: kvcli does not pool device memory."""


def cpu(device_id: int = 0) -> Context:
    """The context ``cpu(device_id)``."""
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """The context ``gpu(device_id)`` (computed on the CPU here; kept for MXNet code)."""
    return Context("gpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """The context ``cpu_pinned(device_id)`` (plain CPU memory here)."""
    return Context("cpu_pinned", device_id)


def num_gpus() -> int:
    """kvcli uses no GPU: 0."""
    return 0


def current_context() -> Context:
    """This thread's default context: ``cpu(0)``, or the context of the enclosing ``with``."""
    ctx = getattr(_default, "value", None)
    return ctx if ctx is not None else cpu(0)



def _current_device() -> tuple[int, int]:
    ctx = current_context()
    return (ctx.device_typeid, ctx.device_id)


# the random streams (kvcli.arrays.random, shared with SGLD's noise) follow `with mx.cpu(1):`
random_streams.follow_current_device(_current_device)

__all__ = ["Context", "DEVICE_TYPES", "DEVICE_TYPE_IDS", "cpu", "cpu_pinned", "current_context", "gpu", "num_gpus"]
