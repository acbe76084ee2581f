"""Helpers that take an optimizer state file apart and put hostile versions together (a
spec naming code, a zip bomb, huge counts), as someone sending an export folder could."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    """A version 1.0 ``.npy`` header claiming ``shape`` (no body)."""
    text = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode()
    text += b" " * (63 - (len(text) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


def read_members(path: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The ``__meta__`` JSON and every other member's bytes (by name, without ``.npy``)."""
    with zipfile.ZipFile(path) as archive:
        members = {info.filename[:-4]: archive.read(info) for info in archive.infolist()}
    meta = json.loads(np.load(io.BytesIO(members.pop("__meta__"))).tobytes().decode())
    return meta, members


def write_members(path: Path, meta: dict[str, Any], members: dict[str, bytes],
                  compress: int = zipfile.ZIP_STORED) -> None:
    """Write a state file from ``meta`` and raw member bytes."""
    meta_array = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    with zipfile.ZipFile(path, "w", compression=compress) as archive:
        archive.writestr("__meta__.npy", npy_bytes(meta_array))
        for name, data in members.items():
            archive.writestr(f"{name}.npy", data)


def rewrite(path: Path, change: Callable[[dict[str, Any], dict[str, bytes]], None],
            compress: int = zipfile.ZIP_STORED) -> None:
    """Apply ``change(meta, members)`` to the state file at ``path`` in place."""
    meta, members = read_members(path)
    change(meta, members)
    write_members(path, meta, members, compress)


def bomb_member(elements: int) -> bytes:
    """A ``.npy`` of ``elements`` float64 zeros: compressed in a zip it shrinks ~1000-fold."""
    return npy_header((elements,)) + bytes(8 * elements)


EVIL = """
with open({mark!r}, "a") as handle:  # proof that this file was executed
    handle.write("ran\\n")

import kvcli.mx as mx


class Opt(mx.optimizer.SGD):
    pass


def f(key, merged, stored):
    stored[:] = 1000
"""


def write_evil(folder: Path) -> tuple[Path, Path]:
    """A Python file that leaves a mark when it is executed: (its path, the mark's path)."""
    mark = folder / "evil-ran"
    source = folder / "evil.py"
    source.write_text(EVIL.format(mark=str(mark)))
    return source, mark
