"""A value or an output against the shape and dtype its key holds: the checks the store
(:mod:`kvcli.store.api`) and its row-sparse rules (:mod:`kvcli.store.rowsparse`) share."""

from __future__ import annotations

from typing import Any

import numpy as np

from kvcli.arrays.core import ArrayInfo, Key, writable_buffer
from kvcli.errors import ArityError, DTypeMismatchError, ShapeMismatchError


def check_array(key: Key, array: Any, info: ArrayInfo, verb: str) -> None:
    """Refuse ``array`` (numpy or row-sparse) unless it has ``info``'s shape and dtype."""
    if array.shape != info.shape:
        raise ShapeMismatchError(
            f"{verb} of key {key!r}: shape {array.shape} does not match the stored "
            f"{info.shape}; use an array of shape {info.shape} or init the key again"
        )
    if array.dtype != info.dtype:
        raise DTypeMismatchError(
            f"{verb} of key {key!r}: dtype {array.dtype} does not match the stored "
            f"{info.dtype}; convert with .astype('{info.dtype}') or init the key again"
        )


def out_buffers(key: Key, info: ArrayInfo, outs: list[Any]) -> list[np.ndarray]:
    """The writable numpy buffers behind a pull's dense outputs, each checked."""
    if not outs:
        raise ArityError(f"pull of key {key!r} got an empty list of outputs: pass at least one")
    buffers = [writable_buffer(o, key) for o in outs]
    for index, buffer in enumerate(buffers):
        where = f" (output {index} of {len(buffers)})" if len(buffers) > 1 else ""
        check_array(key, buffer, info, f"pull{where}")
    return buffers
