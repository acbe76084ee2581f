"""Acting as another local user in a test: an unused uid (no account is created), files
chowned to it, and functions run in a forked child that has dropped to it with setuid.

Only root can do this; :func:`other_uid` skips the test with one line otherwise.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest


def other_uid() -> int:
    """A uid (and gid, the same number) no account of this machine has; skips unless root."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to act as another local user (chown, setuid)")
    for uid in range(47000, 48000):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    pytest.skip("no unused uid in 47000-47999")  # pragma: no cover


def give_to(uid: int, *roots: Path, mode_dirs: int | None = None, mode_files: int | None = None) -> None:
    """chown every file and folder under ``roots`` to ``uid`` (and chmod them, if asked)."""
    for root in roots:
        for path in [root, *root.rglob("*")]:
            os.chown(path, uid, uid, follow_symlinks=False)
            if path.is_symlink():
                continue
            mode = mode_dirs if path.is_dir() else mode_files
            if mode is not None:
                os.chmod(path, mode)


def as_user(uid: int, function: Callable[..., Any], *args: Any, before: Callable[[], None] | None = None) -> Any:
    """Run ``function(*args)`` in a forked child as ``uid`` (``before`` runs first, still as
    root); returns its JSON-able result, or raises AssertionError with the child's error."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            os.close(read_end)
            if before is not None:
                before()
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            result: dict[str, Any] = {"ok": function(*args)}
        except BaseException as error:  # noqa: BLE001 - reported to the parent
            result = {"error": f"{type(error).__name__}: {error}"}
            code = 1
        try:
            os.write(write_end, json.dumps(result).encode())
        finally:
            os._exit(code)
    os.close(write_end)
    chunks = []
    while True:
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    result = json.loads(b"".join(chunks) or b'{"error": "the child wrote nothing"}')
    if "error" in result:
        raise AssertionError(f"as uid {uid}: {result['error']}")
    return result["ok"]


@contextmanager
def reachable_folder(prefix: str = "kvcli-users-", mode: int = 0o755) -> Iterator[Path]:
    """A short new folder in /tmp that every user can reach (pytest's own temporary folders
    are root's, 0700), ``mode`` (0o1777: anyone may make something in it, as in /tmp);
    removed afterwards, whatever the tests made read-only or gave to another user in it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chmod(folder, mode)
    try:
        yield folder
    finally:
        for path in [folder, *folder.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                os.chmod(path, 0o700)
        shutil.rmtree(folder, ignore_errors=True)
