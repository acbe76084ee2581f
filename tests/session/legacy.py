"""Helpers for tests that read or damage a session's manifest directly.

Sessions keep their manifest in ``session.db`` (:mod:`kvcli.session.db`); a folder holding
``manifest.json`` instead is an old session that the next writing command migrates. Tests
that plant a hand-made or damaged manifest write it in that old format, which every command
still reads and checks field by field.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kvcli.session import MANIFEST
from kvcli.session.db import DB, load_raw


def read_manifest(folder: Path) -> dict[str, Any]:
    """The committed manifest of the session in ``folder`` (database or old JSON)."""
    if not os.path.lexists(folder / DB):
        return json.loads((folder / MANIFEST).read_text())
    data = load_raw(folder)
    assert data is not None
    return data


def write_legacy(folder: Path, manifest: dict[str, Any] | str | bytes) -> Path:
    """Turn the session in ``folder`` into an old one whose ``manifest.json`` is ``manifest``
    (a dict, or the file's exact text or bytes); returns the manifest's path."""
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(folder / (DB + suffix))
        except FileNotFoundError:
            pass
    path = folder / MANIFEST
    if isinstance(manifest, dict):
        manifest = json.dumps(legacy_form(folder, manifest))
    if isinstance(manifest, str):
        manifest = manifest.encode("utf-8", "surrogatepass")
    path.write_bytes(manifest)
    return path


def legacy_form(folder: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` as an old session held it: a value held in its database row (``data``,
    bytes JSON cannot carry) becomes the ``.npy`` file its entry names, as before SQLite."""
    import numpy as np

    keys = []
    for entry in manifest.get("keys", []):
        if isinstance(entry, dict) and isinstance(entry.get("data"), bytes):
            entry = dict(entry)
            array = np.frombuffer(entry.pop("data"), dtype=np.dtype(entry["dtype"]).newbyteorder("<"))
            np.save(folder / "data" / entry["file"], array.reshape(entry["shape"]), allow_pickle=False)
        keys.append(entry)
    return {**manifest, "keys": keys} if "keys" in manifest else manifest

