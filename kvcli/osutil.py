"""The few operating-system steps kvcli takes one way, wherever they are needed.

* :func:`atomic_write` — a file replaced whole or not at all (a temporary file beside it,
  fsynced, renamed over it), private (0600) unless the caller asks for a plain file's mode.
* :func:`private_dir` / :func:`folder_problem` — a folder kvcli keeps data or sockets in must
  belong to this user and be writable by no one else; another user's folder is refused, never
  adopted (they could swap its files, or listen on its sockets).
* :func:`runtime_dir` — a short private folder for Unix sockets (a socket path holds at most
  107 bytes, whatever the session's name and home).
* :func:`write_secret` / :func:`process_secret` — a new random secret in a private file (the
  Ray auth tokens of the instances kvcli starts).
* :func:`user_home` — the user's home folder, never ``/`` because ``HOME`` is empty.
* :func:`pid_alive` — whether a process id is a running process of this user.
* :func:`resource_problem` — one line for running out of memory or file descriptors.

This module imports nothing heavy: the one-shot fast path may read it before numpy loads.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO, Callable, Union

from kvcli.errors import ConfigError, UnsafePathError

try:  # imported now: under ``ulimit -n`` there may be no descriptor left to load it later
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: Longest path a Unix socket can be bound to (``sun_path`` is 108 bytes with its NUL).
MAX_SOCKET_PATH = 107
#: The mode of every file kvcli writes for itself (values, manifests, records, locks).
PRIVATE_FILE = 0o600
#: The mode of every folder kvcli creates for itself (the home, sessions, sockets).
PRIVATE_DIR = 0o700
#: The mode a plain ``open()`` gives (the umask applies): for files the user asked for by name.
PLAIN_FILE = 0o666

Content = Union[bytes, Callable[[BinaryIO], None]]


# ---------------------------------------------------------------------- writing files
def unique_token(nbytes: int = 16) -> str:
    """A random hex string for names no other writer picks (a uuid4's 122 random bits at the
    default 16 bytes; ``os.urandom`` keeps ``uuid`` and ``secrets`` off the start-up path)."""
    return os.urandom(nbytes).hex()


def atomic_write(path: Path, content: Content, mode: int = PRIVATE_FILE, sync: bool = True,
                 before_replace: Callable[[], None] | None = None) -> None:
    """Replace ``path`` by ``content`` (bytes, or a function writing to a binary handle) so a
    reader sees the old file or the whole new one, never half.

    The data goes to a new temporary file beside ``path`` (``O_EXCL``, never through a
    symlink, created with ``mode`` — 0600 unless the caller asks for :data:`PLAIN_FILE`),
    is fsynced when ``sync``, then renamed over ``path`` and the folder fsynced. On any
    failure the temporary file is removed and the error (an ``OSError`` for a full or
    failing disk) propagates with ``path`` unchanged. ``before_replace`` runs between the
    write and the rename (a test's crash point).
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{unique_token(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(content, bytes):
                handle.write(content)
            else:
                content(handle)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if sync:
        fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in ``path`` durable (where folders can be fsynced)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------- private folders
def _owner_name(uid: int) -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name!r} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def folder_problem(path: Path, info: os.stat_result, closed: bool = False) -> str | None:
    """Why the folder ``path`` (its ``stat``) is not safe to keep this user's data in, or None.

    It must belong to this user and be writable by no one else (``closed``: not even
    readable or searchable by others, for the runtime folder). Without user ids (Windows)
    the operating system's own rules apply and nothing is checked here.
    """
    if not hasattr(os, "geteuid"):  # pragma: no cover - Windows
        return None
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if info.st_uid != os.geteuid():
        return (f"it belongs to {_owner_name(info.st_uid)}, not to you (another user may have made it first): "
                "use a folder of your own")
    others = 0o077 if closed else 0o022
    if info.st_mode & others:
        what = "others may open it" if closed else "others may write it"
        return (f"{what} (mode {stat.filemode(info.st_mode)}): run chmod {'go-rwx' if closed else 'go-w'} {path}, "
                "or use a folder of your own")
    return None


def private_dir(path: Path, what: str, create: bool = False, closed: bool = False) -> Path:
    """Check (after creating it, mode 0700, when ``create``; its parents get the usual mode)
    that ``path`` is a folder of this user that no one else may write (see
    :func:`folder_problem`); returns ``path``.

    Raises:
        UnsafePathError: it belongs to another user or others may write it, saying so.
        OSError: it cannot be created or read (a caller turns it into its own error).
    """
    path = Path(path)
    if create:
        try:
            os.mkdir(path, PRIVATE_DIR)
        except FileExistsError:
            pass
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.mkdir(path, PRIVATE_DIR)
            except FileExistsError:
                pass
    link = os.lstat(path)
    if stat.S_ISLNK(link.st_mode) and hasattr(os, "geteuid") and link.st_uid not in (os.geteuid(), 0):
        raise UnsafePathError(  # its owner could point it elsewhere between two commands
            f"kvcli refuses the {what} {path}: it is a symbolic link of {_owner_name(link.st_uid)}, who could "
            "point it elsewhere at any time: use a folder of your own", path=str(path))
    info = os.stat(path)  # a symlinked home is the user's choice: its target is checked
    problem = folder_problem(path, info, closed)
    if problem is not None:
        raise UnsafePathError(f"kvcli refuses the {what} {path}: {problem}", path=str(path))
    return path


# ---------------------------------------------------------------------- runtime folder
def runtime_dir(room: int = 0, bulky: bool = False) -> Path:
    """A private folder (0700, this user's, created if needed) for Unix sockets, short
    enough that a name of ``room`` bytes fits after it in a socket path.

    ``$XDG_RUNTIME_DIR/kvcli`` when that is set and short enough (it is per user and goes
    at logout) and the files are not ``bulky`` (that folder is a small in-memory file
    system: Ray's logs and spilled objects go to the temporary folder, as Ray's own
    ``/tmp/ray`` does), else ``kvcli-UID`` in the temporary folder, else in ``/tmp``. The temporary
    folder is everyone's: when another user made ``kvcli-UID`` there first (or it is open to
    others) it is never adopted, and a private folder of an unpredictable name beside it,
    ``kvcli-UID-XXXXXXXX``, is used instead (as ssh-agent and systemd make theirs); later
    commands find it again (it is a folder of this user, 0700, which no one else can make).

    Raises:
        UnsafePathError: ``$XDG_RUNTIME_DIR/kvcli`` belongs to someone else or is open to
            others (that folder is the user's own: something is wrong there).
        OSError: it cannot be created.
    """
    uid = os.geteuid() if hasattr(os, "geteuid") else 0

    def fits(folder: Path, extra: int = 0) -> bool:
        return len(os.fsencode(str(folder))) + extra + 1 + room <= MAX_SOCKET_PATH

    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(xdg) and fits(Path(xdg) / "kvcli") and not bulky:
        return private_dir(Path(xdg) / "kvcli", "runtime folder", create=True, closed=True)
    import tempfile

    parents = list(dict.fromkeys([Path(tempfile.gettempdir()), Path("/tmp")]))
    for parent in parents:
        folder = parent / f"kvcli-{uid}"
        if not fits(folder, 1 + _FALLBACK_RANDOM):  # room for the fallback's longer name too
            continue
        try:
            return private_dir(folder, "runtime folder", create=True, closed=True)
        except UnsafePathError:
            return _fallback_runtime_dir(parent, f"kvcli-{uid}-")
    raise UnsafePathError(  # pragma: no cover - /tmp/kvcli-UID always fits
        f"no runtime folder short enough for a Unix socket in {', '.join(map(str, parents))}: "
        "set XDG_RUNTIME_DIR to a short folder of yours"
    )


#: Random characters of a fallback runtime folder's name (``tempfile.mkdtemp``'s).
_FALLBACK_RANDOM = 8


def _fallback_runtime_dir(parent: Path, prefix: str) -> Path:
    """The first (by name) of this user's private folders ``PREFIX*`` in ``parent``, made
    with an unpredictable name if there is none."""

    def own() -> list[Path]:
        found = []
        for path in parent.glob(f"{prefix}*"):
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o077:
                found.append(path)
        return sorted(found)

    found = own()
    if found:
        return found[0]
    import tempfile

    made = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))  # 0700, O_EXCL: a name no one could take first
    return (own() or [made])[0]  # a command running beside this one may have made one too: all take the first


# ---------------------------------------------------------------------- secrets
def write_secret(path: Path) -> Path:
    """Write a new random secret (64 hex digits) into the new file ``path``: created 0600,
    never through a symlink, never over an existing file (``O_EXCL``); returns ``path``.

    Raises:
        OSError: the file exists or cannot be created.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, PRIVATE_FILE)
    with os.fdopen(fd, "w") as handle:
        handle.write(unique_token(32))
    return Path(path)


def process_secret(prefix: str) -> Path:
    """A new secret file for this process in the runtime folder (0700, this user's):
    ``PREFIX-PID-RANDOM``, removed when this process exits; files of the same prefix whose
    process is gone (killed) are removed first.

    Raises:
        UnsafePathError: the runtime folder is unsafe (see :func:`runtime_dir`).
        OSError: the file cannot be created.
    """
    import atexit

    folder = runtime_dir()
    for stale in folder.glob(f"{prefix}-*-*"):
        pid = stale.name[len(prefix) + 1:].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            try:
                stale.unlink()
            except OSError:  # gone meanwhile
                pass
    path = write_secret(folder / f"{prefix}-{os.getpid()}-{unique_token(8)}")
    atexit.register(_remove_secret, path, os.getpid())
    return path


def _remove_secret(path: Path, pid: int) -> None:
    if os.getpid() == pid:  # not in a forked child, whose parent still uses it
        try:
            os.unlink(path)
        except OSError:
            pass


# ---------------------------------------------------------------------- the home
def _password_home() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):
        return ""


def user_home() -> Path:
    """The user's home folder: ``HOME`` when it is an absolute path, else the user database's
    (the platform's rule when ``HOME`` is unset) — never ``/`` for an empty ``HOME``.

    Raises:
        ConfigError: neither names a home (empty, relative, or ``/``), in one line.
    """
    if not sys.platform.startswith(("linux", "darwin", "freebsd", "openbsd", "netbsd", "sunos", "aix")):
        return Path.home()  # pragma: no cover - Windows has its own rules
    text = os.environ.get("HOME", "")
    source = "HOME"
    if not os.path.isabs(text):
        text, source = _password_home(), "the user database"
    if not os.path.isabs(text) or Path(text) == Path(text).parent:
        shown = os.environ.get("HOME")
        raise ConfigError(
            f"cannot tell your home folder (HOME is {'unset' if shown is None else repr(shown)}, {source} gives "
            f"{text!r}), and kvcli will not keep sessions under '/': set HOME, or KVCLI_HOME to the folder for "
            "the sessions",
            variable="HOME", value=shown or "",
        )
    return Path(text)


def expand_user(text: str) -> str:
    """``~`` and ``~/...`` against :func:`user_home` (``~user`` as the platform expands it)."""
    if text == "~" or text.startswith("~/"):
        return str(user_home()) + text[1:]
    return os.path.expanduser(text)


# ---------------------------------------------------------------------- processes
def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process of this user: not gone, not a zombie, and not
    another user's process that took a reused pid (kvcli only ever asks about its own
    processes: device workers, the cluster's holder)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: not one of ours
        return False
    if not os.path.isdir("/proc/self"):
        return True  # no /proc: the signal check is all there is
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
        owner = os.stat(f"/proc/{pid}").st_uid
    except FileNotFoundError:
        return False  # gone since the signal check
    except (OSError, IndexError):
        return True
    if state in ("Z", "X"):  # a zombie (a child not yet reaped) is not running
        return False
    return owner == os.geteuid() or os.geteuid() != 0  # root may signal anyone: compare owners


# ---------------------------------------------------------------------- limits
def resource_problem(error: BaseException) -> str | None:
    """One line for a process that ran out of memory, address space or file descriptors
    (``ulimit -v``, ``ulimit -n``), naming the limit and how to raise it; None for any other
    error. It never blames shared memory: that is :mod:`kvcli.store.device.shm`'s own error."""
    import errno

    code = error.errno if isinstance(error, OSError) else None
    if isinstance(error, MemoryError) or code == errno.ENOMEM:
        what = str(error) if isinstance(error, MemoryError) and str(error) else "cannot allocate memory"
        limit = _limit("RLIMIT_AS")
        if limit is not None:
            return (f"out of memory ({what}): this process may use {limit / (1 << 20):,.0f} MiB of address space "
                    f"(ulimit -v {limit // 1024}): raise the limit, or use smaller values")
        return f"out of memory ({what}): free some memory, or use smaller values"
    if code == errno.EMFILE:
        limit = _limit("RLIMIT_NOFILE")
        shown = f" (this process may open {limit}: ulimit -n)" if limit is not None else " (ulimit -n)"
        return (f"too many open files{shown}: raise the limit (e.g. ulimit -n 1024); each array of a 'device' "
                "store and each device holds one or two")
    if code == errno.ENFILE:
        return "the system's table of open files is full: close some programs and try again"
    return None


def _limit(name: str) -> int | None:
    """The soft limit ``resource.<name>`` of this process (None: unlimited or unknown)."""
    if resource is None:  # pragma: no cover - not POSIX
        return None
    try:
        soft = resource.getrlimit(getattr(resource, name))[0]
    except (AttributeError, OSError, ValueError):  # pragma: no cover
        return None
    return None if soft == resource.RLIM_INFINITY else int(soft)


__all__ = [
    "MAX_SOCKET_PATH", "PLAIN_FILE", "PRIVATE_DIR", "PRIVATE_FILE", "atomic_write", "expand_user", "folder_problem",
    "fsync_dir", "pid_alive", "private_dir", "process_secret", "resource_problem", "runtime_dir", "user_home",
    "write_secret",
]
