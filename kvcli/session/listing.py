"""The listing of a home's sessions (``kvcli sessions``): each one's store, updater, keys
and size, read without its lock; a damaged session is listed with its problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvcli.errors import SessionError, UnsafePathError
from kvcli.osutil import private_dir
from kvcli.session.commit import load_folder
from kvcli.session.names import SESSION_RE, session_folder


def list_sessions(home: str | Path | None = None) -> list[dict[str, Any]]:
    """Every session under ``home``: name, store type, updater, key count, or its problem."""
    root = session_folder(home)
    if not root.is_dir():
        return []
    private_dir(root.parent, "home folder")  # another user's home is refused, not listed
    private_dir(root, "sessions folder")
    found = []
    for folder in sorted(root.iterdir()):
        if not folder.is_dir() or not SESSION_RE.fullmatch(folder.name):
            continue
        row: dict[str, Any] = {"session": folder.name, "path": str(folder)}
        try:
            private_dir(folder, "session folder")
            manifest = load_folder(folder)
        except (SessionError, UnsafePathError, OSError) as error:  # one bad session must not hide the others
            row["error"] = str(error)
        else:
            if manifest is None:  # only a lock file: a first command failed or is running
                continue
            else:
                row.update(
                    warm_devices=_warm_devices(folder) if manifest.store_type == "device" else 0,
                    type=manifest.store_type,
                    options=manifest.store_options,
                    updater=manifest.updater,
                    keys=len(manifest.keys),
                    bytes=sum(e.nbytes for e in manifest.keys.values()),
                    updated=manifest.updated,
                )
        found.append(row)
    return found


def _warm_devices(folder: Path) -> int | None:
    """How many warm devices of the session in ``folder`` listen (None: unknown, the runtime
    folder cannot be used; the listing never depends on it)."""
    from kvcli.store.device.store import warm_folder

    try:
        sockets = warm_folder(folder)
        return len(list(sockets.glob("d*.sock"))) if sockets.is_dir() else 0
    except (UnsafePathError, OSError):
        return None
