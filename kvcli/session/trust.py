"""Which ``python:`` updater files a session may run: the ones its user named in this home.

``set-updater python:FILE.py:FUNC`` records in the manifest the file's absolute path, the
sha256 of its content and a MAC: HMAC-SHA256 over (home, path, sha256) with a per-user
secret key kept outside every session home (``KVCLI_TRUST_KEY``, else
``$XDG_CONFIG_HOME/kvcli/trust.key``, else ``~/.config/kvcli/trust.key``, created 0600).
Before a push runs the code, :func:`verified_source` reads the file once and checks all
three, and the updater is built from exactly those bytes (no second read to race with).

So a manifest written by someone else (another user's home, a folder copied or imported
from elsewhere) cannot name code for this user to run: without the key its MAC is wrong.
A file edited since ``set-updater`` is refused until ``set-updater`` is run again.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from kvcli import config
from kvcli.errors import SessionError

MAX_SOURCE = 16 << 20  # bytes of an updater file (a module, not a data file)
KEY_BYTES = 32


@dataclass(frozen=True)
class Trust:
    """The manifest's record of the updater file the user named."""

    path: str
    sha256: str
    mac: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "sha256": self.sha256, "mac": self.mac}


def key_path() -> Path:
    """Where this user's trust key lives (never inside a session home)."""
    env = config.get(config.TRUST_KEY)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    if not os.path.isabs(base):  # the XDG rule: a relative path is ignored
        from kvcli.osutil import user_home

        base = str(user_home() / ".config")  # never '/' for an empty HOME
    return Path(base) / "kvcli" / "trust.key"


def _user_key(create: bool) -> bytes | None:
    path = key_path()
    try:  # never through a symlink, never waiting (a FIFO there is refused, not read)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        if not create:
            return None
        return _create_key(path)
    except OSError as error:
        raise SessionError(f"cannot read the updater trust key {path}: {error.strerror}") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077 or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
                raise SessionError(
                    f"the updater trust key {path} is not a private file of this user (mode "
                    f"{stat.filemode(info.st_mode)}): remove it (python updaters must then be set again)"
                )
            os.set_blocking(fd, True)
            key = handle.read(KEY_BYTES + 1)
    except OSError as error:  # e.g. EIO from /proc/self/mem
        raise SessionError(f"cannot read the updater trust key {path}: {error.strerror or error}") from None
    if len(key) != KEY_BYTES:
        raise SessionError(f"the updater trust key {path} is damaged: remove it (python updaters must then be set again)")
    return key


def _create_key(path: Path) -> bytes:
    key = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:  # another process made it first: use theirs
        found = _user_key(create=False)
        assert found is not None
        return found
    except OSError as error:
        raise SessionError(
            f"cannot create the updater trust key {path}: {error.strerror} (set KVCLI_TRUST_KEY to a writable path)"
        ) from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
        handle.flush()
        os.fsync(handle.fileno())
    return key


def _mac(key: bytes, home: Path, path: str, digest: str) -> str:
    message = "\0".join(("kvcli-updater-v1", str(home.resolve()), path, digest)).encode("utf-8", "surrogateescape")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def read_source(path: str) -> bytes:
    """The bytes of an updater file: a regular file of at most :data:`MAX_SOURCE` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise SessionError(f"updater file {path} does not exist: give the path of a .py file") from None
    except OSError as error:
        raise SessionError(f"cannot read the updater file {path}: {error.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise SessionError(f"updater file {path} is not a regular file: give the path of a .py file")
        data = handle.read(MAX_SOURCE + 1)
    if len(data) > MAX_SOURCE:
        raise SessionError(f"updater file {path} is over {MAX_SOURCE >> 20} MiB: it is not an updater module")
    return data


def trust_file(home: Path, path: str) -> tuple[Trust, bytes]:
    """Record that the user named ``path`` (absolute) in ``home``: its hash and MAC, and its bytes."""
    source = read_source(path)
    digest = hashlib.sha256(source).hexdigest()
    key = _user_key(create=True)
    assert key is not None
    return Trust(path, digest, _mac(key, home, path, digest)), source


def verified_source(home: Path, path: str, trust: Trust | None) -> tuple[bytes, str]:
    """The bytes and sha256 of ``path`` if the manifest's ``trust`` says this user named
    exactly this file, with this content, in ``home``; a :class:`SessionError` otherwise."""
    if trust is None or trust.path != path:
        raise SessionError(
            f"the session's updater runs {path}, which was not set with set-updater in this home "
            "(a foreign or old manifest): kvcli refuses to run it; check the file, then set the updater again"
        )
    key = _user_key(create=False)
    if key is None or not hmac.compare_digest(_mac(key, home, path, trust.sha256), trust.mac):
        raise SessionError(
            f"the session's updater {path} was not set by this user in this home (its trust record does not "
            "match this user's key): kvcli refuses to run it; check the file, then set the updater again"
        )
    source = read_source(path)
    digest = hashlib.sha256(source).hexdigest()
    if not hmac.compare_digest(digest, trust.sha256):
        raise SessionError(
            f"the updater file {path} changed since the updater was set (sha256 {digest[:12]}..., was "
            f"{trust.sha256[:12]}...): kvcli refuses to run changed code; check it, then set the updater again"
        )
    return source, digest
