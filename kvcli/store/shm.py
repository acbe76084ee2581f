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
import weakref
from multiprocessing import resource_tracker, shared_memory
from typing import Any, Optional

import numpy as np

#: Every segment kvcli creates starts with this, so tests can look for leftovers.
PREFIX = "kvcli_"


#: What a device needs to map an array: segment name, shape, dtype string.
Descriptor = tuple[str, tuple[int, ...], str]


def _create_segment(shape: tuple[int, ...], dtype: Any) -> shared_memory.SharedMemory:
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    name = f"{PREFIX}{os.getpid()}_{secrets.token_hex(6)}"
    return shared_memory.SharedMemory(name=name, create=True, size=max(nbytes, 1))


class SharedArray:
    """A numpy array in a named shared-memory segment that this process created."""

    __slots__ = ("segment", "array", "name")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.segment = _create_segment(shape, dtype)
        self.name = self.segment.name
        self.array: np.ndarray = np.ndarray(shape, dtype=dtype, buffer=self.segment.buf)

    @property
    def nbytes(self) -> int:
        return self.array.nbytes

    def describe(self) -> Descriptor:
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


#: Device arrays alive in this process, by the address of their first byte.
_device_arrays: dict[int, Descriptor] = {}


def device_array(shape: int | tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    """A new (uninitialised) numpy array in shared memory, as if it lived on a device.

    A ``device`` store's workers read such an array where it is, so pushing it costs no
    copy. It is an ordinary numpy array otherwise; its memory is released when the array
    (and every view of it) is garbage-collected.
    """
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    dtype = np.dtype(dtype)
    segment = _create_segment(shape, dtype)
    array = np.ndarray(shape, dtype=dtype, buffer=segment.buf)
    address = array.ctypes.data
    _device_arrays[address] = (segment.name, shape, dtype.str)
    weakref.finalize(array, _free_device_array, address, segment)
    return array


def _free_device_array(address: int, segment: shared_memory.SharedMemory) -> None:
    _device_arrays.pop(address, None)
    try:
        segment.close()
        segment.unlink()
    except (BufferError, FileNotFoundError):
        pass


def device_descriptor(array: np.ndarray) -> Optional[Descriptor]:
    """The descriptor of ``array`` if it is a whole device array (see :func:`device_array`)."""
    if not _device_arrays or not array.flags.c_contiguous:
        return None
    descriptor = _device_arrays.get(array.ctypes.data)
    if descriptor is None or descriptor[1] != array.shape or descriptor[2] != array.dtype.str:
        return None
    return descriptor


def live_device_arrays() -> set[str]:
    """Segment names of the device arrays still alive."""
    return {descriptor[0] for descriptor in _device_arrays.values()}


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
