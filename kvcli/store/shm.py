"""Named shared-memory arrays, created by the store and attached by device workers.

The store's process creates and unlinks every segment, so exactly one process owns each
one; workers only attach. Python's resource tracker unlinks a creator's segments if the
creator dies, so a killed store leaks nothing. Before Python 3.13 a process that merely
*attaches* also registers the segment with a tracker of its own, which would unlink the
store's memory when the worker exits; :func:`attach` prevents that.
"""

from __future__ import annotations

import os
import secrets
import sys
from multiprocessing import resource_tracker, shared_memory
from typing import Any

import numpy as np

#: Every segment kvcli creates starts with this, so tests can look for leftovers.
PREFIX = "kvcli_"


class SharedArray:
    """A numpy array in a named shared-memory segment that this process created."""

    __slots__ = ("segment", "array", "name")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        self.name = f"{PREFIX}{os.getpid()}_{secrets.token_hex(6)}"
        self.segment = shared_memory.SharedMemory(name=self.name, create=True, size=max(nbytes, 1))
        self.array: np.ndarray = np.ndarray(shape, dtype=dtype, buffer=self.segment.buf)

    @property
    def nbytes(self) -> int:
        return self.array.nbytes

    def describe(self) -> tuple[str, tuple[int, ...], str]:
        """What a worker needs to attach: name, shape, dtype."""
        return self.name, self.array.shape, self.array.dtype.str

    def free(self) -> None:
        """Unlink the segment (its memory goes when the last mapping closes)."""
        self.array = np.empty(0)
        try:
            self.segment.close()
        except BufferError:  # a caller still holds a view; the mapping goes with it
            pass
        try:
            self.segment.unlink()
        except FileNotFoundError:
            pass


def attach(name: str, shape: tuple[int, ...], dtype: str) -> tuple[shared_memory.SharedMemory, np.ndarray]:
    """Map another process's segment without taking ownership of it."""
    if sys.version_info >= (3, 13):
        segment = shared_memory.SharedMemory(name=name, track=False)  # type: ignore[call-arg]
    else:
        register = resource_tracker.register
        resource_tracker.register = _ignore_registration  # type: ignore[assignment]
        try:
            segment = shared_memory.SharedMemory(name=name)
        finally:
            resource_tracker.register = register  # type: ignore[assignment]
    return segment, np.ndarray(shape, dtype=np.dtype(dtype), buffer=segment.buf)


def _ignore_registration(name: str, rtype: Any) -> None:
    """Stand-in for resource_tracker.register while attaching (see the module docstring)."""


def leftover_segments(pid: int | None = None) -> list[str]:
    """Names of kvcli segments still in ``/dev/shm`` (for one creator pid, or all)."""
    prefix = PREFIX if pid is None else f"{PREFIX}{pid}_"
    try:
        return sorted(n for n in os.listdir("/dev/shm") if n.startswith(prefix))
    except FileNotFoundError:  # not Linux: no way to list segments
        return []
