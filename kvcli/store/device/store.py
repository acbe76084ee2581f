"""``device``: N worker processes act as devices; arrays live in shared memory.

Each key owns a few shared-memory arrays: the stored value, a buffer for the merged push,
and one slot per device that pushes. A push from K devices copies each value into its
slot; every device process then sums its own slice of the slots into the merged buffer
(MXNet's device-side reduce), so the reduction runs in parallel and no array is ever
pickled through a pipe — the pipes carry only names and offsets. The updater then runs
here, on the merged buffer, exactly as in the ``local`` store.

Device processes start on the first multi-device push (a store that is only read costs
no process) and stop in :meth:`DeviceBackend.close` (the store's ``close``), when the store is garbage-collected,
at interpreter exit, or on their own when this process dies and their pipe closes.
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from kvcli import config
from kvcli.store.registry import SESSION_OPTION_SPECS
from kvcli.errors import DeviceError, StoreError, UnsafePathError, ProtocolError
from kvcli.arrays.core import Key
from kvcli.arrays.sparse import RowSparse
from kvcli.store.backend import UpdaterFn, Value
from kvcli.store.rowsparse import rows_of
from kvcli.osutil import MAX_SOCKET_PATH, pid_alive, private_dir, runtime_dir
from kvcli.store.device.worker import READY, encode, peer_user, receive, send, send_encoded
from kvcli.store.interrupts import deferred_interrupts
from kvcli.store.device.shm import (
    Descriptor,
    SharedArray,
    check_space,
    device_descriptor,
    live_device_arrays,
    sweep_orphans,
)

#: Smallest slice worth sending to a device; smaller pushes use fewer devices.
MIN_SLICE = 1 << 15
#: Values at least this large are copied into their slots by several threads at once.
PARALLEL_COPY_BYTES = 1 << 20
DEFAULT_TIMEOUT = 60.0


def default_num_devices() -> int:
    """One device per core, between 2 and 8."""
    return min(max(os.cpu_count() or 2, 2), 8)


class _Device:
    """One worker process and the two pipes that talk to it.

    Requests are numbered; a reply repeats its request's number. ``sent`` and ``answered``
    say how far each side is, so after an interrupted wait the store drains the replies it
    no longer waits for (:meth:`settle`) before it touches memory the device may still be
    writing. A message is always written and read whole: interrupts are deferred meanwhile.
    """

    def __init__(self, index: int, warm_dir: Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.index = index
        self.sent = READY  # the greeting counts as the answer to request 0
        self.answered = READY - 1
        self.process: subprocess.Popen[bytes] | None = None
        self.warm_pid: int | None = None
        if warm_dir is not None:
            try:
                self._attach(Path(warm_dir), timeout)
            except OSError as error:  # no descriptor left for a socket, a folder that cannot be made
                raise _start_error(index, error) from None
            return
        to_device_read, to_device_write = _pipe(index)
        try:
            from_device_read, from_device_write = _pipe(index)
        except DeviceError:
            os.close(to_device_read)
            os.close(to_device_write)
            raise
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[3])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        env.setdefault("OPENBLAS_NUM_THREADS", "1")  # a device only adds arrays: no BLAS threads
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kvcli.store.device.worker",
                 str(to_device_read), str(from_device_write), str(index)],
                pass_fds=(to_device_read, from_device_write),
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # the terminal's Ctrl-C is for the store, not its devices
            )
        except OSError as error:
            for fd in (to_device_read, to_device_write, from_device_read, from_device_write):
                os.close(fd)
            raise _start_error(index, error) from None
        os.close(to_device_read)  # the device holds these ends now; closing ours lets EOF work
        os.close(from_device_write)
        self.outbox = Connection(to_device_write, readable=False)
        self.inbox = Connection(from_device_read, writable=False)

    def _attach(self, warm_dir: Path, timeout: float) -> None:
        """Connect to this session's warm device ``index``, starting it if none listens.

        The sockets' folder must be this user's and closed to others (created so), and the
        process listening must run as this user (``SO_PEERCRED``): anything else is refused
        before a byte is sent or read."""
        private_dir(warm_dir, "device socket folder", create=True, closed=True)
        path = warm_dir / socket_name(self.index)
        connected = _connect(path)
        if connected is None:
            _spawn_warm(path, self.index)
            deadline = time.monotonic() + timeout
            while connected is None and time.monotonic() < deadline:
                time.sleep(0.01)
                connected = _connect(path)
            if connected is None:
                raise DeviceError(f"device {self.index} did not start listening on {path} within {timeout:g} s")
        connection, peer_pid = connected
        self.outbox = connection
        self.inbox = Connection(os.dup(connection.fileno()))
        if not wait([self.inbox], timeout):  # busy with another store of the same session
            self.outbox.close()
            self.inbox.close()
            raise DeviceError(f"device {self.index} of this session is busy (it did not answer within {timeout:g} s)")
        with deferred_interrupts():
            try:
                seq, _, pid = receive(self.inbox)
            except (EOFError, OSError, ProtocolError, ValueError):
                self.outbox.close()
                self.inbox.close()
                raise DeviceError(f"device {self.index} closed its connection at once") from None
        self.warm_pid = int(pid) if peer_pid is None else peer_pid  # the kernel's word over the device's
        self.answered = seq

    @property
    def pid(self) -> int:
        return self.warm_pid if self.process is None else self.process.pid  # type: ignore[return-value]

    @property
    def alive(self) -> bool:
        if self.process is None:
            return pid_alive(self.pid)
        return self.process.poll() is None

    @property
    def idle(self) -> bool:
        """Whether every request has been answered."""
        return self.answered >= self.sent

    def request(self, *message: Any) -> None:
        """Send one numbered request (whole, even if Ctrl-C comes meanwhile)."""
        self.request_encoded(encode(message))

    def request_encoded(self, items: str) -> None:
        """:meth:`request` with the request's items already encoded (:func:`encode`)."""
        with deferred_interrupts():
            try:
                send_encoded(self.outbox, self.sent + 1, items)
            except OSError:
                raise self._died() from None
            self.sent += 1

    def settle(self, timeout: float, report: bool = True) -> None:
        """Wait until every request is answered; raise the first error if ``report``.

        The wait may be interrupted (nothing is lost: the next call picks up where it
        stopped); reading a reply is not.
        """
        failure = None
        while not self.idle:
            if not wait([self.inbox], timeout):
                raise DeviceError(
                    f"device {self.index} (pid {self.pid}) did not answer within {timeout:g} s; "
                    "it is stopped and will be restarted on the next push"
                )
            with deferred_interrupts():
                try:
                    seq, status, detail = receive(self.inbox)
                except (EOFError, OSError, ProtocolError, ValueError):
                    raise self._died() from None
                self.answered = seq
            if status == "error" and failure is None:
                failure = detail
        if failure is not None and report:
            raise DeviceError(f"device {self.index} failed: {failure}")

    def _died(self) -> DeviceError:
        if self.process is None:
            return DeviceError(f"device {self.index} (pid {self.pid}) closed its connection; "
                               "it will be restarted on the next push")
        code = self.process.poll()
        if code is None:
            try:
                code = self.process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
        return DeviceError(
            f"device {self.index} (pid {self.pid}) died (exit code {code}); "
            "it will be restarted on the next push"
        )

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the device to exit; kill it if it does not. A warm device is only let go:
        it waits for the session's next command (or its idle time)."""
        if self.process is None:
            if not self.idle:  # it may still write memory this store is about to free
                self.kill()
                return
            for connection in (self.outbox, self.inbox):
                connection.close()
            return
        try:
            send(self.outbox, [self.sent + 1, "stop"])
        except OSError:
            pass
        self.kill(timeout)

    def kill(self, timeout: float = 0.0) -> None:
        """Make sure the process is gone (killed if still running after ``timeout`` seconds;
        at once by default) and the pipes are closed."""
        if self.process is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            for connection in (self.outbox, self.inbox):
                connection.close()
            return
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for connection in (self.outbox, self.inbox):
            connection.close()


def _start_error(index: int, error: OSError) -> DeviceError:
    """One line for a device that could not be started (a process or descriptor limit says so)."""
    from kvcli.osutil import resource_problem

    return DeviceError(f"cannot start device {index}: {resource_problem(error) or error.strerror or error}")


def _pipe(index: int) -> tuple[int, int]:
    try:
        return os.pipe()
    except OSError as error:
        raise _start_error(index, error) from None


def socket_name(index: int) -> str:
    """The file name of warm device ``index``'s socket in its folder."""
    return f"d{index}.sock"


#: Bytes a warm folder's name and a socket name take after the runtime folder.
_WARM_ROOM = 1 + 16 + 1 + len(socket_name(999))


def warm_folder(session: str | Path) -> Path:
    """The folder where the warm devices of the session in folder ``session`` listen: a
    private folder under :func:`kvcli.osutil.runtime_dir` named by a hash of the session's
    real path, so a socket path stays short (under 108 bytes) whatever the session's name
    and home, and no other user can enter it."""
    digest = hashlib.sha256(os.fsencode(os.path.realpath(session))).hexdigest()[:16]
    return runtime_dir(room=_WARM_ROOM) / digest


def _connect(path: Path) -> tuple[Connection, int | None] | None:
    """A connection to the warm device listening on ``path`` and the pid the kernel gives
    for it, or None if none listens.

    Raises:
        UnsafePathError: the process listening there runs as another user (refused before
            anything is sent or read).
    """
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(str(path))
    except OSError:
        client.close()
        return None
    try:
        peer = peer_user(client)
    except OSError:
        client.close()
        return None
    if peer is not None and peer[1] != os.geteuid():
        client.close()
        raise UnsafePathError(
            f"kvcli refuses the device socket {path}: it is served by process {peer[0]} of uid {peer[1]}, "
            "not by you (nothing was sent to it or read from it): remove the socket and try again"
        )
    return Connection(client.detach()), (None if peer is None else peer[0])


def _spawn_warm(path: Path, index: int) -> None:
    """Start a warm device listening on ``path`` (it forks away: this waits for the fork)."""
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    idle = config.get(config.DEVICE_IDLE)
    try:
        starter = subprocess.Popen(
            [sys.executable, "-m", "kvcli.store.device.worker", "--listen", str(path), str(index), str(idle)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=env, start_new_session=True,
        )
    except OSError as error:
        raise _start_error(index, error) from None
    starter.wait()


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


class DeviceBackend:
    """A backend whose devices are worker processes sharing memory with this process.

    Args:
        num_devices: how many device processes sum a multi-device push (default: one per
            core, 2 to 8). A push may come from any number of devices; its values are
            summed in order, bit-for-bit as in the ``local`` store.
        timeout: seconds to wait for a device before declaring it dead.
        warm_dir: keep the devices running after :meth:`close` for the next store given
            the same folder (a session's one-shot commands; see :func:`warm_folder`):
            devices listen on Unix sockets there and exit after ``KVCLI_DEVICE_IDLE``
            seconds without a store. The folder must be this user's and closed to others
            (it is created 0700), and its socket paths must fit in 107 bytes.
    """

    remote = False
    rank = 0
    num_workers = 1

    def __init__(self, num_devices: int | None = None, timeout: float = DEFAULT_TIMEOUT,
                 warm_dir: str | Path | None = None) -> None:
        self.warm_dir = Path(warm_dir) if warm_dir is not None else None
        if num_devices is None:
            num_devices = default_num_devices()
        spec = SESSION_OPTION_SPECS["num_devices"]
        if isinstance(num_devices, bool) or not isinstance(num_devices, int) or not spec.low <= num_devices <= spec.high:
            raise StoreError(f"num_devices must be a whole number from {spec.low} to {spec.high}, not {num_devices!r}")
        self.num_devices = num_devices
        if self.warm_dir is not None:
            longest = self.warm_dir / socket_name(num_devices - 1)
            if len(os.fsencode(str(longest))) > MAX_SOCKET_PATH:
                raise StoreError(
                    f"warm_dir {self.warm_dir} is too long for a Unix socket path ({longest} is "
                    f"{len(os.fsencode(str(longest)))} bytes, at most {MAX_SOCKET_PATH}): use a shorter folder, "
                    "e.g. kvcli.store.device.store.warm_folder(...)"
                )
        self.timeout = float(timeout)
        self._resources = _Resources()
        #: Row-sparse values (a dense key's value lives in shared memory instead).
        self._sparse: dict[Key, RowSparse] = {}
        self._unmapped: list[str] = []  # segments freed here that devices still map
        self._mapped_device_arrays: set[str] = set()  # device arrays the devices have mapped
        self._finalizer = weakref.finalize(self, self._resources.release)
        sweep_orphans()  # segments of stores whose whole process group was killed

    # ------------------------------------------------------------------ introspection
    @property
    def device_pids(self) -> list[int]:
        """Process ids of the running devices (empty until the first multi-device push)."""
        return [device.pid for device in self._resources.devices]

    def segment_names(self) -> list[str]:
        """Names of the shared-memory segments this store holds."""
        return [s.name for m in self._resources.memory.values() for s in m.all()]

    # ------------------------------------------------------------------ the Backend protocol
    def write(self, values: Sequence[tuple[Key, Value]], reset: bool) -> None:
        """Store the values; the shared memory of every new or reshaped key is allocated
        first, so a refused allocation (a full ``/dev/shm``) changes nothing."""
        memory = self._resources.memory
        fresh: dict[Key, SharedArray] = {}
        try:
            for key, value in values:
                held = memory.get(key)
                if isinstance(value, np.ndarray) and (
                    held is None or (held.stored.array.shape, held.stored.array.dtype) != (value.shape, value.dtype)
                ):
                    fresh[key] = SharedArray(value.shape, value.dtype)
        except BaseException:
            for shared in fresh.values():
                shared.free()
            raise
        for key, value in values:
            if isinstance(value, RowSparse):
                self._forget_memory(key)
                self._sparse[key] = value
                continue
            self._sparse.pop(key, None)
            if key in fresh:
                self._forget_memory(key)
                memory[key] = _KeyMemory(fresh[key])
            np.copyto(memory[key].stored.array, value)

    def read(self, keys: Sequence[Key]) -> list[Value]:
        return list(map(self.stored, keys))

    def read_rows(self, key: Key, rows: Sequence[np.ndarray]) -> list[RowSparse]:
        return rows_of(self._sparse[key], rows)

    def stored(self, key: Key) -> Value:
        sparse = self._sparse.get(key)
        return self._resources.memory[key].stored.array if sparse is None else sparse

    def reduce(self, key: Key, arrays: Sequence[np.ndarray]) -> np.ndarray:
        # An interrupted push may have left devices summing into this key's buffers: wait
        # for them before anything here writes those buffers again.
        self._settle_devices()
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

    def apply(self, pushes: Sequence[tuple[Key, Value]], compression: Any) -> None:
        for key, _ in pushes:  # the sum is in the key's merged buffer: it becomes the stored one
            memory = self._resources.memory[key]
            memory.stored, memory.merged = memory.merged, memory.stored  # type: ignore[assignment]

    def set_updater(self, updater: UpdaterFn | None) -> None:
        """Nothing to do: the store runs the updater in this process (devices only sum)."""

    def gather_state(self, updater: Any) -> None:
        """Nothing to do: the updater holds its state in this process."""

    def forget(self, key: Key) -> None:
        self._forget_memory(key)
        self._sparse.pop(key, None)

    def barrier(self) -> None:
        """Nothing to wait for: one worker."""

    def close(self) -> None:
        self._finalizer()
        self._sparse.clear()

    def _forget_memory(self, key: Key) -> None:
        memory = self._resources.memory.pop(key, None)
        if memory is not None:
            for shared in memory.all():
                self._unmapped.append(shared.name)
                shared.free()

    # ------------------------------------------------------------------ the device work
    def _sources(self, memory: _KeyMemory, arrays: Sequence[np.ndarray]) -> list[Descriptor]:
        """Where the devices read each value: device arrays in place, others from a slot."""
        sources: list[Descriptor | None] = [device_descriptor(a) for a in arrays]
        self._mapped_device_arrays.update(source[0] for source in sources if source is not None)
        to_copy = [i for i, source in enumerate(sources) if source is None]
        missing = len(to_copy) - len(memory.slots)
        if missing > 0:
            check_space(missing * memory.stored.nbytes,
                        f"{missing} more device slot{'s' * (missing > 1)} of {memory.stored.nbytes:,} bytes")
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
        """The running devices: started on first use, restarted where one has died."""
        devices = self._resources.devices
        if not devices:
            devices.extend(self._start(range(self.num_devices)))
        for position, device in enumerate(devices):
            if not device.alive:
                device.kill()
                devices[position] = self._start([device.index])[0]
        return devices

    def _start(self, indices: Sequence[int] | range) -> list[_Device]:
        """Start devices and wait until each is ready; on any failure, none is left running."""
        started: list[_Device] = []
        try:
            for index in indices:
                started.append(_Device(index, self.warm_dir, self.timeout))
            for device in started:
                device.settle(self.timeout)
        except BaseException:  # Ctrl-C included: a half-started set of devices is not kept
            for device in started:
                device.kill()
            raise
        return started

    def _settle_devices(self) -> None:
        """Drain replies to requests an interrupted operation left unanswered.

        Their results belong to an abandoned push and are dropped. A device that does not
        finish in time is killed (it must not write memory later) and restarted when needed.
        """
        for device in self._resources.devices:
            if device.idle or not device.alive:
                continue
            try:
                device.settle(self.timeout, report=False)
            except DeviceError:
                device.kill()

    def _sum_on_devices(self, merged: SharedArray, slot_descs: Sequence[Descriptor]) -> None:
        devices = self._devices()
        size = merged.array.size
        count = max(1, min(len(devices), size // MIN_SLICE))
        bounds = [size * i // count for i in range(count + 1)]
        gone = self._mapped_device_arrays - live_device_arrays()
        self._mapped_device_arrays -= gone
        unmapped, self._unmapped = [*self._unmapped, *gone], []
        # The requests go out together (an interrupt waits until all are sent); the wait for
        # the replies may be interrupted: the stored value is untouched until they are in.
        shared, released = encode(["reduce", merged.describe(), slot_descs]), encode([unmapped])
        with deferred_interrupts():
            for device, start, stop in zip(devices, bounds, bounds[1:]):
                device.request_encoded(f"{shared},{int(start)},{int(stop)},{released}")
            if unmapped:
                for device in devices[count:]:
                    device.request("release", unmapped)
        try:
            for device in devices:
                device.settle(self.timeout)
        except DeviceError:
            # A device died or hung: drop it (it must not write later) and let the others
            # finish; the store stays usable and the next push restarts the device.
            self._settle_devices()
            for device in devices:
                if not device.idle or not device.alive:
                    device.kill()
            raise

    def __repr__(self) -> str:
        return f"<DeviceBackend devices={self.num_devices} running={len(self._resources.devices)}>"
