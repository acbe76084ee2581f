"""``device``: N worker processes act as devices; arrays live in shared memory.

Each key owns a few shared-memory arrays: the stored value, a buffer for the merged push,
and one slot per device that pushes. A push from K devices copies each value into its
slot; every device process then sums its own slice of the slots into the merged buffer
(MXNet's device-side reduce), so the reduction runs in parallel and no array is ever
pickled through a pipe — the pipes carry only names and offsets. The updater then runs
here, on the merged buffer, exactly as in the ``local`` store.

Device processes start on the first multi-device push (a store that is only read costs
no process) and stop in :meth:`DeviceStore.close`, when the store is garbage-collected,
at interpreter exit, or on their own when this process dies and their pipe closes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from kvcli.errors import DeviceError, StoreError
from kvcli.store.base import Key, KVStore
from kvcli.store.shm import Descriptor, SharedArray, device_descriptor, live_device_arrays

#: Smallest slice worth sending to a device; smaller pushes use fewer devices.
MIN_SLICE = 1 << 15
#: Values at least this large are copied into their slots by several threads at once.
PARALLEL_COPY_BYTES = 1 << 20
DEFAULT_TIMEOUT = 60.0


def default_num_devices() -> int:
    """One device per core, between 2 and 8."""
    return min(max(os.cpu_count() or 2, 2), 8)


class _Device:
    """One worker process and the two pipes that talk to it."""

    def __init__(self, index: int) -> None:
        self.index = index
        to_device_read, to_device_write = os.pipe()
        from_device_read, from_device_write = os.pipe()
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kvcli.store.device_worker",
                 str(to_device_read), str(from_device_write), str(index)],
                pass_fds=(to_device_read, from_device_write),
                stdin=subprocess.DEVNULL,
                env=env,
            )
        except OSError as error:
            for fd in (to_device_read, to_device_write, from_device_read, from_device_write):
                os.close(fd)
            raise DeviceError(f"cannot start device {index}: {error}") from None
        os.close(to_device_read)  # the device holds these ends now; closing ours lets EOF work
        os.close(from_device_write)
        self.outbox = Connection(to_device_write, readable=False)
        self.inbox = Connection(from_device_read, writable=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    def send(self, message: tuple[Any, ...]) -> None:
        try:
            self.outbox.send(message)
        except OSError:
            raise self._died() from None

    def receive(self, timeout: float) -> tuple[Any, ...]:
        if not wait([self.inbox], timeout):
            raise DeviceError(
                f"device {self.index} (pid {self.pid}) did not answer within {timeout:g} s; "
                "the store is closed: create a new one"
            )
        try:
            reply = self.inbox.recv()
        except (EOFError, OSError):
            raise self._died() from None
        if reply[0] == "error":
            raise DeviceError(f"device {self.index} failed: {reply[1]}")
        return reply

    def _died(self) -> DeviceError:
        code = self.process.poll()
        if code is None:
            try:
                code = self.process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
        return DeviceError(
            f"device {self.index} (pid {self.pid}) died (exit code {code}); "
            "the store is closed: create a new one"
        )

    def stop(self, timeout: float = 5.0) -> None:
        try:
            self.outbox.send(("stop",))
        except OSError:
            pass
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for connection in (self.outbox, self.inbox):
            connection.close()


@dataclass
class _KeyMemory:
    """The shared arrays of one key."""

    stored: SharedArray
    merged: SharedArray | None = None
    slots: list[SharedArray] = field(default_factory=list)

    def all(self) -> list[SharedArray]:
        return [self.stored, *([self.merged] if self.merged else []), *self.slots]


@dataclass
class _Resources:
    """Everything the store must release; kept apart from the store so that a finaliser can
    release it without keeping the store alive."""

    devices: list[_Device] = field(default_factory=list)
    memory: dict[Key, _KeyMemory] = field(default_factory=dict)
    copy_pool: ThreadPoolExecutor | None = None

    def release(self) -> None:
        for device in self.devices:
            device.stop()
        self.devices.clear()
        for memory in self.memory.values():
            for shared in memory.all():
                shared.free()
        self.memory.clear()
        if self.copy_pool is not None:
            self.copy_pool.shutdown(wait=True)
            self.copy_pool = None


class DeviceStore(KVStore):
    """A store whose devices are worker processes sharing memory with it.

    Args:
        num_devices: how many device processes sum a multi-device push (default: one per
            core, 2 to 8). A push may come from any number of devices; its values are
            summed in order, bit-for-bit as in the ``local`` store.
        timeout: seconds to wait for a device before declaring it dead.
    """

    type = "device"

    def __init__(self, num_devices: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__()
        if num_devices is None:
            num_devices = default_num_devices()
        if isinstance(num_devices, bool) or not isinstance(num_devices, int) or not 1 <= num_devices <= 64:
            raise StoreError(f"num_devices must be a whole number from 1 to 64, not {num_devices!r}")
        self.num_devices = num_devices
        self.timeout = float(timeout)
        self._resources = _Resources()
        self._unmapped: list[str] = []  # segments freed here that devices still map
        self._mapped_device_arrays: set[str] = set()  # device arrays the devices have mapped
        self._finalizer = weakref.finalize(self, self._resources.release)

    # ------------------------------------------------------------------ introspection
    @property
    def device_pids(self) -> list[int]:
        """Process ids of the running devices (empty until the first multi-device push)."""
        return [device.pid for device in self._resources.devices]

    def segment_names(self) -> list[str]:
        """Names of the shared-memory segments this store holds."""
        return [s.name for m in self._resources.memory.values() for s in m.all()]

    # ------------------------------------------------------------------ backend hooks
    def _write(self, key: Key, array: np.ndarray) -> None:
        memory = self._resources.memory.get(key)
        if memory is not None and (memory.stored.array.shape, memory.stored.array.dtype) == (array.shape, array.dtype):
            np.copyto(memory.stored.array, array)
            return
        self._forget(key)
        stored = SharedArray(array.shape, array.dtype)
        np.copyto(stored.array, array)
        self._resources.memory[key] = _KeyMemory(stored)

    def _stored(self, key: Key) -> np.ndarray:
        return self._resources.memory[key].stored.array

    def _reduce(self, key: Key, arrays: Sequence[np.ndarray]) -> np.ndarray:
        memory = self._resources.memory[key]
        stored = memory.stored.array
        if memory.merged is None:
            memory.merged = SharedArray(stored.shape, stored.dtype)
        merged = memory.merged
        if len(arrays) == 1 or stored.size == 0:
            np.copyto(merged.array, arrays[0])
            return merged.array
        sources = self._sources(memory, arrays)
        self._sum_on_devices(merged, sources)
        return merged.array

    def _assign_merged(self, key: Key, merged: np.ndarray) -> None:
        memory = self._resources.memory[key]
        memory.stored, memory.merged = memory.merged, memory.stored  # type: ignore[assignment]

    def _forget(self, key: Key) -> None:
        memory = self._resources.memory.pop(key, None)
        if memory is not None:
            for shared in memory.all():
                self._unmapped.append(shared.name)
                shared.free()

    def _shutdown(self) -> None:
        self._finalizer()

    # ------------------------------------------------------------------ the device work
    def _sources(self, memory: _KeyMemory, arrays: Sequence[np.ndarray]) -> list[Descriptor]:
        """Where the devices read each value: device arrays in place, others from a slot."""
        sources: list[Descriptor | None] = [device_descriptor(a) for a in arrays]
        self._mapped_device_arrays.update(source[0] for source in sources if source is not None)
        to_copy = [i for i, source in enumerate(sources) if source is None]
        while len(memory.slots) < len(to_copy):
            memory.slots.append(SharedArray(memory.stored.array.shape, memory.stored.array.dtype))
        slots = memory.slots[: len(to_copy)]
        self._copy_into(slots, [arrays[i] for i in to_copy])
        for i, slot in zip(to_copy, slots):
            sources[i] = slot.describe()
        return sources  # type: ignore[return-value]

    def _copy_into(self, slots: Sequence[SharedArray], arrays: Sequence[np.ndarray]) -> None:
        pairs = list(zip(slots, arrays))
        if not pairs:
            return
        if arrays[0].nbytes < PARALLEL_COPY_BYTES:
            for slot, array in pairs:
                np.copyto(slot.array, array)
            return
        if self._resources.copy_pool is None:
            self._resources.copy_pool = ThreadPoolExecutor(
                max_workers=min(4, os.cpu_count() or 2), thread_name_prefix="kvcli-copy"
            )
        # numpy releases the GIL while copying, so the threads copy in parallel
        list(self._resources.copy_pool.map(lambda pair: np.copyto(pair[0].array, pair[1]), pairs))

    def _devices(self) -> list[_Device]:
        devices = self._resources.devices
        if not devices:
            try:
                for index in range(self.num_devices):
                    devices.append(_Device(index))
                for device in devices:
                    device.receive(self.timeout)  # "ready"
            except DeviceError:
                self.close()
                raise
        return devices

    def _sum_on_devices(self, merged: SharedArray, slot_descs: Sequence[Descriptor]) -> None:
        devices = self._devices()
        size = merged.array.size
        count = max(1, min(len(devices), size // MIN_SLICE))
        bounds = [size * i // count for i in range(count + 1)]
        gone = self._mapped_device_arrays - live_device_arrays()
        self._mapped_device_arrays -= gone
        unmapped, self._unmapped = [*self._unmapped, *gone], []
        try:
            for device, start, stop in zip(devices, bounds, bounds[1:]):
                device.send(("reduce", merged.describe(), slot_descs, start, stop, unmapped))
            for device in devices[:count]:
                device.receive(self.timeout)
            for device in devices[count:]:
                if unmapped:
                    device.send(("release", unmapped))
                    device.receive(self.timeout)
        except DeviceError:
            self.close()
            raise

    def __repr__(self) -> str:
        running = len(self._resources.devices)
        return f"<DeviceStore devices={self.num_devices} running={running} keys={len(self._info)}>"
