"""Files of a session: the lock, fsync, the pickle-free ``.npy`` reader and writer (through
:mod:`kvcli.arrays.npyio`), full-disk errors, new file names, and the test crash points.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from kvcli import config
from kvcli.errors import SessionError, DiskError, NpyError
from kvcli.osutil import PRIVATE_FILE, private_dir, unique_token
from kvcli.arrays.npyio import (
    NOFOLLOW,
    check_file,
    file_body as npy_file_body,
    fsync_file,
    read_array,
    remove_quietly,
    write_file,
)

if TYPE_CHECKING:  # numpy is imported where values are made: copying a checkpoint needs none of it
    import numpy as np


def corrupted(path: Path, problem: str) -> SessionError:
    """The error for a damaged session file: names it and says how to recover."""
    found = f"session file {path} is corrupted ({problem}); nothing was changed"
    return SessionError(
        f"{found}: restore the file, or call Session.reset() to start the session over (this deletes its keys)",
        problem=found, remedy="reset", detail=problem,
    )


# ---------------------------------------------------------------------- locking
class _FileLock:
    """An exclusive or shared lock on a file: fcntl.flock on POSIX, filelock elsewhere."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None
        self._fallback: Any = None

    def acquire(self, shared: bool) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            import filelock

            self._fallback = filelock.FileLock(str(self.path), timeout=self.timeout)
            try:
                self._fallback.acquire()
            except filelock.Timeout:
                raise self._busy() from None
            return
        fd = self._open(shared)
        if fd is None:
            return
        mode = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
        deadline = time.monotonic() + self.timeout
        delay = 0.0005
        while True:
            try:
                fcntl.flock(fd, mode)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise self._busy() from None
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
        self._fd = fd

    def _open(self, shared: bool) -> int | None:
        """The lock file, opened for writing (created 0600 if needed); for a shared lock on a
        read-only home, opened for reading, or None when a read-only folder has no lock file
        (no writer can take it there either, so a reader needs none)."""
        import errno

        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT | NOFOLLOW, PRIVATE_FILE)
        except OSError as error:
            if not shared or error.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise SessionError(f"cannot open the session lock {self.path}: {error.strerror}") from None
        try:
            return os.open(self.path, os.O_RDONLY | NOFOLLOW)  # flock needs no write access
        except FileNotFoundError:
            return None
        except OSError as error:
            raise SessionError(f"cannot open the session lock {self.path}: {error.strerror}") from None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None
        if self._fallback is not None:  # pragma: no cover - Windows
            self._fallback.release()
            self._fallback = None

    def _busy(self) -> SessionError:
        return SessionError(
            f"session lock {self.path} is held by another kvcli command (waited {self.timeout:g} s): "
            "try again when it finishes, or raise KVCLI_LOCK_TIMEOUT"
        )


def lock_timeout() -> float:
    return float(config.get(config.LOCK_TIMEOUT))


def session_lock(folder: Path, timeout: float | None = None) -> _FileLock:
    """The lock of the session in ``folder``, not taken yet: every command takes it, shared
    or exclusive (``acquire(shared=...)``), before it reads or changes the session.
    ``timeout`` defaults to ``KVCLI_LOCK_TIMEOUT``; 0 fails at once when another holds it."""
    from kvcli.session.names import LOCK

    return _FileLock(folder / LOCK, lock_timeout() if timeout is None else timeout)


def private_session(home: Path, name: str, create: bool) -> Path:
    """Check the folders of session ``name``: the home, its ``sessions`` folder, the session's
    folder and its data folder must belong to this user and be writable by no one else
    (created 0700 when ``create``). A home another local user made first (a shared
    ``KVCLI_HOME``) is refused, never adopted: its owner could swap the session's files.

    Raises:
        UnsafePathError: a folder belongs to another user or others may write it.
        SessionError: a folder cannot be created.
    """
    from kvcli.session.names import DATA, session_folder

    folder = session_folder(home, name)
    levels = [(folder.parent.parent, "home folder"), (folder.parent, "sessions folder"), (folder, "session folder")]
    try:
        for path, what in levels:
            private_dir(path, what, create=create)
        data = folder / DATA
        if not data.is_symlink() and (create or data.is_dir()):  # a symlink: the caller refuses it as corrupted
            private_dir(data, "data folder", create=create)
    except OSError as error:
        raise SessionError(f"cannot create the session folder {folder}: {error.strerror}") from None
    return folder


def private_folder(path: Path, what: str) -> Path:
    """``path`` as a folder of this user that no one else may write, created 0700 (its
    parents the usual way) when missing: an export, whose files another user must not swap.

    Raises:
        UnsafePathError: it belongs to another user or others may write it.
        SessionError: it cannot be created.
    """
    try:
        return private_dir(path, what, create=True)
    except OSError as error:
        raise SessionError(f"cannot create the {what} {path}: {error.strerror or error}") from None


# ---------------------------------------------------------------------- file helpers
def remove_empty_dir(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:  # not empty, or not there: keep it
        pass


def crash_point(name: str) -> None:
    """Test hook: ``KVCLI_TEST_CRASH_POINT=name`` kills this process here (as SIGKILL would)."""
    if config.raw(config.CRASH_POINT) == name:
        import signal

        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


#: errno values that mean the disk cannot take the write, with how to say so.
_DISK_PROBLEMS = {
    "ENOSPC": "no space left on the device",
    "EDQUOT": "the disk quota is exceeded",
    "EROFS": "the file system is read-only",
    "EIO": "an input/output error (a failing disk?)",
}


def disk_error(path: Path, error: OSError, needed: int | None = None) -> DiskError:
    """The one-line error for a failed write: the path, the cause, the space needed and free."""
    import errno

    names = {getattr(errno, name, None): text for name, text in _DISK_PROBLEMS.items()}
    cause = names.get(error.errno) or error.strerror or str(error)
    detail = ""
    if needed is not None and error.errno in (getattr(errno, "ENOSPC", None), getattr(errno, "EDQUOT", None)):
        detail = f"; it needs {_human(needed)}"
        try:
            usage = os.statvfs(path.parent)
            detail += f", {_human(usage.f_bavail * usage.f_frsize)} are free"
        except OSError:
            pass
    return DiskError(
        f"cannot write {path}: {cause}{detail}; nothing was changed: free some space (or fix the disk) and try again",
        error.errno,
    )


def _human(size: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} bytes"  # pragma: no cover


def write_npy(path: Path, array: Any, overwrite: bool = False, sync: bool = True) -> None:
    """Write ``array`` (a numpy array or a copied body, see
    :func:`kvcli.arrays.npyio.write_file`) as a ``.npy`` session file and fsync it (never
    pickled, never through a symlink); on a full or failing disk the new file is removed and
    the error is a :class:`SessionError` naming the path and the space needed.

    ``overwrite`` rewrites an existing file of the same size in place (no truncation, so
    its blocks are reused); otherwise the file must not exist yet. ``sync=False``: the
    caller fsyncs it (:class:`Syncer`), with the other files of its commit.
    """
    try:
        write_file(path, array, overwrite=overwrite, sync=sync)
    except NpyError as error:
        raise SessionError(f"session file {path} {error}; nothing was written to it") from None
    except OSError as error:
        raise disk_error(path, error, int(array.nbytes) + 128) from None


class Syncer:
    """fsyncs the files of a commit in the background while the next ones are written, so
    the disk flushes one file while the next is copied (a checkpoint's 73 value files: 70 ms
    instead of 155 ms on this 2-core machine's disk, what ``cp`` and ``sync`` take for the one
    file). :meth:`wait` returns when every file is on disk, or raises the first failure as a
    one-line :class:`DiskError`. Threads start with the first file (none for a commit of
    rows only)."""

    THREADS = 2

    def __init__(self) -> None:
        self._queue: Any = None
        self._threads: list[Any] = []
        self._failed: list[tuple[Path, OSError]] = []

    def add(self, path: Path) -> None:
        if self._queue is None:
            import queue
            import threading

            self._queue = queue.SimpleQueue()
            self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(self.THREADS)]
            for thread in self._threads:
                thread.start()
        self._queue.put(path)

    def _run(self) -> None:
        while True:
            path = self._queue.get()
            if path is None:
                return
            try:
                fsync_file(path)
            except OSError as error:
                self._failed.append((path, error))

    def wait(self) -> None:
        """Every file added is fsynced (a failure: :class:`DiskError` naming the file)."""
        if self._queue is None:
            return
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join()
        self._queue, self._threads = None, []
        if self._failed:
            path, error = self._failed[0]
            self._failed = []
            raise disk_error(path, error) from None


def _npy_error(path: Path, error: NpyError) -> SessionError:
    if error.kind == "pickle":
        return _pickled(path)
    if error.kind == "missing":
        return corrupted(path, "the file is missing")
    if error.kind == "io":
        return SessionError(f"session file {path} {error}; nothing was changed: check the disk and try again")
    return corrupted(path, str(error))


def read_npy(path: Path, dtype: str | None = None, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Read a session ``.npy`` file (a regular file, not a symlink; big ones mapped) with the
    one reader of :mod:`kvcli.arrays.npyio`; a damaged file is a :class:`SessionError` naming it."""
    try:
        return read_array(path, dtype=dtype, shape=shape, session_file=True)
    except NpyError as error:
        raise _npy_error(path, error) from None


def file_body(path: Path, dtype: str, shape: tuple[int, ...]) -> Any:
    """A value file's data to copy into another file (:func:`kvcli.arrays.npyio.file_body`,
    checked as :func:`check_npy` checks it); a damaged file is a :class:`SessionError`."""
    try:
        return npy_file_body(path, dtype, shape)
    except NpyError as error:
        raise _npy_error(path, error) from None


def check_npy(path: Path, dtype: str, shape: tuple[int, ...]) -> None:
    """Check a value file without reading its data: header, dtype, shape and size."""
    try:
        check_file(path, dtype, shape)
    except NpyError as error:
        raise _npy_error(path, error) from None


def _pickled(path: Path) -> SessionError:
    found = f"session file {path} holds pickled Python objects, which kvcli refuses to load; nothing was changed"
    return SessionError(f"{found}: call Session.reset() to start the session over", problem=found, remedy="reset")


def same_size(path: Path, other: Path) -> bool:
    """Both are regular files (not symlinks) of the same size: the spare can be reused."""
    import stat as stat_

    try:
        first, second = os.lstat(path), os.lstat(other)
    except OSError:
        return False
    return stat_.S_ISREG(first.st_mode) and stat_.S_ISREG(second.st_mode) and first.st_size == second.st_size


def new_file_name(suffix: str) -> str:
    return unique_token() + suffix


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading: never through a symbolic link, never waiting (a FIFO or a
    device is refused before one byte is read), a regular file only.

    Raises:
        SessionError: it cannot be opened or is not a regular file, naming it.
    """
    import stat as stat_

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW)
    except OSError as error:
        import errno

        if error.errno == errno.ELOOP:
            raise SessionError(f"cannot read {path}: it is a symbolic link, not a regular file") from None
        raise SessionError(f"cannot read {path}: {error.strerror}") from None
    if not stat_.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SessionError(f"cannot read {path}: it is not a regular file (a FIFO, device or folder)")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def copy_file(source: Path, target: Path, limit: int | None = None) -> int:
    """Copy the regular file ``source`` (see :func:`open_regular`) into the new private file
    ``target``, fsynced; returns the bytes copied. ``limit``: refuse a source of more bytes
    (nothing is left at ``target``), without reading further than the limit.

    Raises:
        SessionError: the source is not a regular file or holds more than ``limit`` bytes.
        DiskError: the copy cannot be written.
    """
    with open_regular(source) as src:
        size = os.fstat(src.fileno()).st_size
        if limit is not None and size > limit:
            raise SessionError(f"cannot copy {source}: it holds {size:,} bytes, more than the {limit:,} it may")
        try:
            dst_fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, PRIVATE_FILE)
        except OSError as error:
            raise disk_error(target, error, size) from None
        copied = 0
        try:
            with os.fdopen(dst_fd, "wb") as dst:
                while chunk := src.read(1 << 20 if limit is None else min(1 << 20, limit + 1 - copied)):
                    copied += len(chunk)
                    if limit is not None and copied > limit:  # it grew since the look at its size
                        raise SessionError(f"cannot copy {source}: it holds more than the {limit:,} bytes it may")
                    dst.write(chunk)
                dst.flush()
                os.fsync(dst.fileno())
        except OSError as error:
            remove_quietly(target)
            raise disk_error(target, error, size) from None
        except BaseException:
            remove_quietly(target)
            raise
    return copied


def check_regular(path: Path, what: str) -> None:
    """``path`` is a regular file, not a symlink (files read by name, such as the optimizer
    state's zip archive, get this check instead of O_NOFOLLOW)."""
    import stat as stat_

    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise corrupted(path, f"{what} is missing") from None
    except OSError as error:
        raise SessionError(f"cannot read {path}: {error.strerror}") from None
    if stat_.S_ISLNK(info.st_mode):
        raise corrupted(path, f"{what} is a symbolic link, not a file inside the session")
    if not stat_.S_ISREG(info.st_mode):
        raise corrupted(path, f"{what} is not a regular file")


def check_export_folder(folder: Path) -> bool:
    """Refuse an export folder that is a file, lies under a file, or holds something;
    returns whether it is new (made by the export)."""
    try:
        if folder.is_dir():
            if any(folder.iterdir()):
                raise SessionError(f"export folder {folder} exists and is not empty: choose a new folder")
            return False
        if folder.exists() or folder.is_symlink():
            raise SessionError(f"export folder {folder} is a file, not a folder: choose a new folder")
        above = next((p for p in folder.parents if p.exists()), None)
        if above is not None and not above.is_dir():
            raise SessionError(f"cannot create the export folder {folder}: {above} is a file, not a folder")
    except OSError as error:
        raise SessionError(f"cannot create the export folder {folder}: {error.strerror or error}") from None
    return True
