"""Named shared-memory arrays, created by the store and attached by device workers.

The store's process creates and unlinks every segment, so exactly one process owns each
one; workers only attach. Python's resource tracker unlinks a creator's segments if the
creator dies alone; when the tracker dies with it (a kill of the whole process group),
:func:`sweep_orphans` reclaims them at the next start. It never goes by pid: another PID
namespace sharing ``/dev/shm`` (a container) has pids this one cannot see. A creating
process holds a liveness token instead — an exclusive ``flock`` on its own file
``/dev/shm/kvcli_PID_TAG.live``, which the kernel drops the moment the process dies, in
whatever namespace — and names its segments ``kvcli_PID_TAG_XXXXXXXX``; a sweep removes only
segments of this user whose token file it can lock itself.
Before Python 3.13 a process that merely *attaches* also registers the segment with a
tracker of its own, which would unlink the store's memory when the worker exits;
:func:`attach` prevents that.

Memory safety: every array is a view of an ``mmap`` of its own, and nothing here ever
closes that mapping. Freeing a segment only unlinks its name; the pages go when the last
numpy view of them is garbage-collected. (Closing a mapping that a view still uses would
make the next read of the view a segmentation fault; numpy 2 does not stop it.)

Space is checked before use: ``/dev/shm`` is a tmpfs that allocates pages lazily, so a
segment larger than the free space would be created fine and then kill the process with
SIGBUS on first touch. Each segment is reserved with ``posix_fallocate`` instead, and a
shortfall is a :class:`~kvcli.errors.SharedMemoryError` that says how much is needed.
"""

from __future__ import annotations

import atexit
import errno
import mmap
import os
import re
import stat
import sys
import weakref
from multiprocessing import resource_tracker, shared_memory
from typing import Any, Optional

import numpy as np

from kvcli.errors import SharedMemoryError
from kvcli.osutil import unique_token

#: Every segment kvcli creates starts with this, so tests can look for leftovers.
PREFIX = "kvcli_"
#: Where POSIX shared memory lives on Linux.
SHM_DIR = "/dev/shm"

#: The liveness token file of a creating process ends with this (see the module docs).
LIVE = ".live"
#: A segment of this version: creator pid (for people and tests only), the creator's tag, its own id.
_SEGMENT_RE = re.compile(PREFIX + r"(\d+_[0-9a-f]{8})_[0-9a-f]{8}")
_LIVE_RE = re.compile(PREFIX + r"(\d+_[0-9a-f]{8})" + re.escape(LIVE))

#: What a device needs to map an array: segment name, shape, dtype string.
Descriptor = tuple[str, tuple[int, ...], str]

_MiB = 1 << 20


def nbytes_of(shape: tuple[int, ...], dtype: Any) -> int:
    """Bytes an array of ``shape`` and ``dtype`` occupies."""
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


def free_bytes() -> int | None:
    """Bytes free in ``/dev/shm`` (None where it cannot be measured)."""
    try:
        stats = os.statvfs(SHM_DIR)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def shortfall_error(needed: int, what: str) -> SharedMemoryError:
    """The error for ``needed`` bytes of shared memory that do not fit."""
    free = free_bytes()
    free_text = "unknown" if free is None else f"{free / _MiB:.1f} MiB"
    return SharedMemoryError(
        f"not enough shared memory for {what}: {needed / _MiB:.1f} MiB needed, {free_text} free "
        f"in {SHM_DIR}; free some, give the container more (docker run --shm-size=...), push "
        "from fewer devices, or use the 'local' store",
        needed=needed,
        free=free,
    )


def check_space(needed: int, what: str) -> None:
    """Refuse early, before anything is allocated, when ``needed`` bytes cannot fit."""
    free = free_bytes()
    if free is not None and needed > free:
        raise shortfall_error(needed, what)


#: This process's liveness token: (pid, "PID_TAG", the locked file's descriptor or None).
_token: tuple[int, str, int | None] | None = None


def _owner_tag() -> str:
    """``PID_TAG`` of this process's segments, taking its liveness token on first use: the
    token file is created under a hidden name, locked, then renamed into place, so a sweep
    never sees it unlocked while this process lives."""
    global _token
    pid = os.getpid()
    if _token is not None and _token[0] == pid:
        return _token[1]
    key = f"{pid}_{unique_token(4)}"
    fd = None
    if os.path.isdir(SHM_DIR):  # elsewhere no segment can be listed, so none is ever swept
        import fcntl

        final = os.path.join(SHM_DIR, f"{PREFIX}{key}{LIVE}")
        hidden = os.path.join(SHM_DIR, f".{PREFIX}{key}{LIVE}")
        try:
            fd = os.open(hidden, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.rename(hidden, final)
        except OSError as error:
            if fd is not None:
                os.close(fd)
                _remove(hidden)
            from kvcli.osutil import resource_problem

            raise SharedMemoryError(
                f"cannot create kvcli's liveness file in {SHM_DIR}: " + (resource_problem(error) or (
                    f"{error.strerror}; check that {SHM_DIR} is writable, or use the 'local' store")), needed=0,
            ) from None
        atexit.register(_drop_token, pid, key, fd)
    _token = (pid, key, fd)
    return key


def _drop_token(pid: int, key: str, fd: int) -> None:
    """At exit: remove the token file when no segment of this process is left (otherwise the
    resource tracker unlinks them after the exit, and the next sweep removes the file)."""
    if os.getpid() != pid:
        return
    if not any(name.startswith(f"{PREFIX}{key}_") for name in _listdir()):
        _remove(os.path.join(SHM_DIR, f"{PREFIX}{key}{LIVE}"))
    try:
        os.close(fd)
    except OSError:
        pass


def _map_new(shape: tuple[int, ...], dtype: Any) -> tuple[str, np.ndarray]:
    """Create a segment, reserve its pages, and map it; the array owns the only mapping."""
    nbytes = nbytes_of(shape, dtype)
    size = max(nbytes, 1)
    check_space(size, f"an array of shape {shape} and dtype {np.dtype(dtype)}")
    name = f"{PREFIX}{_owner_tag()}_{unique_token(4)}"
    # Made here rather than by SharedMemory(create=True), which maps the segment a second time
    # (twice the address space under ``ulimit -v``) and, when that fails, tells the resource
    # tracker to forget a name it never registered (a traceback from the tracker).
    path = "/" + name
    try:
        fd = shared_memory._posixshmem.shm_open(  # type: ignore[attr-defined]
            path, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)  # private: values are the user's
    except OSError as error:
        raise _creation_error(error, size, shape) from None
    try:
        try:
            os.ftruncate(fd, size)
            os.posix_fallocate(fd, 0, size)
        except OSError as error:
            if error.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # no fallocate: pages stay lazy
                raise _creation_error(error, size, shape) from None
        try:
            mapping = mmap.mmap(fd, size)
        except OSError as error:
            raise _creation_error(error, size, shape) from None
    except BaseException:
        shared_memory._posixshmem.shm_unlink(path)  # type: ignore[attr-defined]
        raise
    finally:
        os.close(fd)  # the mapping keeps a descriptor of its own
    resource_tracker.register(path, "shared_memory")  # unlinked by the tracker if this process dies alone
    return name, np.ndarray(shape, dtype=dtype, buffer=mapping)


def _creation_error(error: OSError, size: int, shape: tuple[int, ...]) -> SharedMemoryError:
    """The one-line error for a segment that could not be made: a full ``/dev/shm``
    (ENOSPC) is a shortfall of shared memory; running out of address space or memory
    (ENOMEM: ``ulimit -v``, the machine) or of file descriptors (``ulimit -n``) says that."""
    from kvcli.osutil import resource_problem

    if error.errno == errno.ENOSPC:
        return shortfall_error(size, f"an array of shape {shape}")
    problem = resource_problem(error)
    if problem is not None:
        return SharedMemoryError(f"cannot map an array of shape {shape} ({size / _MiB:.1f} MiB): {problem}", needed=size)
    return SharedMemoryError(f"cannot create shared memory ({error.strerror})", needed=size)


def _unlink(name: str) -> None:
    """Remove a segment's name (its pages stay while a mapping of them lives)."""
    path = "/" + name  # POSIX names carry a leading slash, as SharedMemory registers them
    try:
        shared_memory._posixshmem.shm_unlink(path)  # type: ignore[attr-defined]
    except FileNotFoundError:
        pass
    try:
        resource_tracker.unregister(path, "shared_memory")
    except Exception:  # the tracker is gone (interpreter shutdown): nothing left to tell it
        pass


class SharedArray:
    """A numpy array in a named shared-memory segment that this process created."""

    __slots__ = ("array", "name")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.name, self.array = _map_new(shape, dtype)

    @property
    def nbytes(self) -> int:
        return self.array.nbytes

    def describe(self) -> Descriptor:
        """What a worker needs to attach: name, shape, dtype."""
        return self.name, self.array.shape, self.array.dtype.str

    def free(self) -> None:
        """Unlink the segment; its memory goes when the last view of it is collected."""
        self.array = np.empty(0)
        _unlink(self.name)


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
    name, array = _map_new(shape, dtype)
    address = array.ctypes.data
    _device_arrays[address] = (name, shape, dtype.str)
    weakref.finalize(array, _free_device_array, address, name)
    return array


def _free_device_array(address: int, name: str) -> None:
    _device_arrays.pop(address, None)
    _unlink(name)


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


def attach(name: str, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Map another process's segment without taking ownership of it.

    The returned array owns its mapping: dropping the last reference unmaps it.
    """
    if sys.version_info >= (3, 13):
        segment = shared_memory.SharedMemory(name=name, track=False)  # type: ignore[call-arg]
    else:
        register = resource_tracker.register
        resource_tracker.register = _ignore_registration  # type: ignore[assignment]
        try:
            segment = shared_memory.SharedMemory(name=name)
        finally:
            resource_tracker.register = register
    try:
        mapping = mmap.mmap(segment._fd, segment.size)  # type: ignore[attr-defined]
    finally:
        segment.close()
    return np.ndarray(shape, dtype=np.dtype(dtype), buffer=mapping)


def _ignore_registration(name: str, rtype: Any) -> None:
    """Stand-in for resource_tracker.register while attaching (see the module docstring)."""


def _listdir() -> list[str]:
    try:
        return os.listdir(SHM_DIR)
    except OSError:  # not Linux: no way to list segments
        return []


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def sweep_orphans() -> list[str]:
    """Unlink the kvcli segments whose creating process is provably gone; returns their names.

    Python's resource tracker normally does this when a creator dies, but it dies too when
    the whole process group is killed (a closed terminal, ``kill -9 -- -PGID``). A segment is
    removed only when it and its creator's token file belong to this user and this sweep can
    lock that file (the creator's lock died with it). Never by pid: a store in another PID
    namespace sharing ``/dev/shm`` keeps its lock, so its segments stay. Segments without a
    token file (older kvcli versions) are left alone.
    """
    import fcntl

    names = _listdir()
    segments: dict[str, list[str]] = {}
    keys = set()
    for name in names:
        match = _SEGMENT_RE.fullmatch(name) or _LIVE_RE.fullmatch(name)
        if match:
            keys.add(match.group(1))
            if not name.endswith(LIVE):
                segments.setdefault(match.group(1), []).append(name)
    mine = _token[1] if _token is not None and _token[0] == os.getpid() else None
    uid = os.geteuid()
    removed = []
    for key in sorted(keys - {mine}):
        live = os.path.join(SHM_DIR, f"{PREFIX}{key}{LIVE}")
        try:
            fd = os.open(live, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:  # no token: nothing proves the creator is gone
            continue
        try:
            info = os.fstat(fd)
            if info.st_uid != uid or not stat.S_ISREG(info.st_mode):
                continue  # another user's store: not ours to judge
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # its creator holds it: alive, in this namespace or another
                continue
            left = False
            for name in sorted(segments.get(key, [])):
                path = os.path.join(SHM_DIR, name)
                try:
                    owner = os.lstat(path).st_uid
                except OSError:
                    continue
                if owner == uid and _remove(path):
                    removed.append(name)
                elif owner != uid:
                    left = True
            if not left:
                _remove(live)
        finally:
            os.close(fd)
    return removed


def leftover_segments(pid: int | None = None) -> list[str]:
    """Names of kvcli segments still in ``/dev/shm`` (for one creator pid, or all)."""
    prefix = PREFIX if pid is None else f"{PREFIX}{pid}_"
    return sorted(n for n in _listdir() if n.startswith(prefix) and not n.endswith(LIVE))
