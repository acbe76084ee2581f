"""``nd.save`` / ``nd.load``: MXNet's NDArray files (``.params``) as NDArrays, without pickle.

The format is read and written by :mod:`kvcli.arrays.mxparams` (its layout is described
there: dense, row_sparse and csr records, bounded, pickle-free); this module is the MXNet
layer's one reader and writer on top of it: records become NDArrays on the device they were
saved from (MXNet built without CUDA loads every cpu record onto cpu(0); a gpu record goes
back to its gpu, as on a machine with GPUs -- kvcli has them all), and NDArrays are written
with their context.
"""

from __future__ import annotations

import os
from typing import Any, Union

import numpy as np

from kvcli.arrays import mxparams
from kvcli.arrays.csr import CSRParts
from kvcli.arrays.mxparams import (
    FLAG_OF_DTYPE,
    LIST_MAGIC,
    STORAGE_NAMES,
    TYPE_FLAGS,
    V2_MAGIC,
    V3_MAGIC,
    Reader,
)
from kvcli.arrays.sparse import RowSparse
from kvcli.errors import ParamsFileError
from kvcli.mx.ndarray.context import Context, cpu
from kvcli.mx.ndarray.ndarray import NDArray
from kvcli.mx.ndarray.sparse.base import is_sparse
from kvcli.mx.ndarray.sparse.csr import CSRNDArray
from kvcli.mx.ndarray.sparse.rowsparse import RowSparseNDArray

Loaded = Union[list[Any], dict[str, Any]]


def _context(device: tuple[str, int]) -> Context:
    return Context("gpu", device[1]) if device[0] == "gpu" else cpu(0)


def _ndarray(value: mxparams.Value, device: tuple[str, int]) -> Any:
    ctx = _context(device)
    if isinstance(value, RowSparse):
        return RowSparseNDArray(value, ctx)
    if isinstance(value, CSRParts):
        return CSRNDArray(value.data, value.indices, value.indptr, value.shape, ctx)
    return NDArray(value, ctx)


def _arrays(params: mxparams.ParamsFile) -> Loaded:
    arrays = [_ndarray(params.value(entry), entry.device) for entry in params.entries]
    return dict(zip(params.names, arrays)) if params.names is not None else arrays


def loads(buf: bytes | bytearray | memoryview, source: str = "<bytes>") -> Loaded:
    """Arrays from the bytes of a ``.params`` file: a dict when the file names them, else a list."""
    return _arrays(mxparams.from_bytes(buf, source))


def load(fname: str | os.PathLike[str]) -> Loaded:
    """Read a ``.params`` file written by MXNet's ``nd.save`` (or :func:`save`): a regular
    file (a device such as /dev/zero, a FIFO or a folder is refused, never read forever)."""
    with mxparams.open_file(fname) as params:
        return _arrays(params)


# ------------------------------------------------------------------------------- writing
def _record(value: Any, label: str) -> tuple[Any, tuple[str, int]]:
    """The numpy-level value of an NDArray and the device it is saved from."""
    if is_sparse(value):
        ctx = value.context
        if value.stype == "csr":
            inner: Any = CSRParts(value._values, value._columns, value._indptr, value.shape)
        else:
            inner = value._kvcli_row_sparse()
        return inner, (ctx.device_type, ctx.device_id)
    if isinstance(value, NDArray):
        ctx = value.context
        return value._kvcli_buffer(), (ctx.device_type, ctx.device_id)
    if isinstance(value, np.ndarray):
        return value, mxparams.CPU
    raise ParamsFileError(f"{label} is a {type(value).__name__}, not an NDArray: wrap it with nd.array()")


def _records(data: Any) -> tuple[list[Any], list[tuple[str, int]], list[str] | None]:
    if isinstance(data, (NDArray, np.ndarray)):
        data = [data]
    if isinstance(data, dict):
        bad = [k for k in data if not isinstance(k, str)]
        if bad:
            raise ParamsFileError(f"array names must be str, not {type(bad[0]).__name__} ({bad[0]!r})")
        names: list[str] | None = list(data)
        items = [(value, f"array {name!r}") for name, value in data.items()]
    elif isinstance(data, (list, tuple)):
        names = None
        items = [(value, f"array {i}") for i, value in enumerate(data)]
    else:
        raise ParamsFileError(
            f"nd.save takes an NDArray, a list of them or a dict of str to NDArray, not a {type(data).__name__}")
    records = [_record(value, label) for value, label in items]
    return [r[0] for r in records], [r[1] for r in records], names


def array_to_bytes(value: Any) -> bytes:
    """One array's record, as MXNet's ``NDArray.__getstate__`` gives it (a pickled NDArray)."""
    inner, device = _record(value, "the array")
    return mxparams.record_bytes(inner, device)


def array_from_bytes(buf: bytes | bytearray | memoryview, source: str = "<pickled NDArray>") -> Any:
    """The array of one record written by :func:`array_to_bytes` or by MXNet's pickling."""
    value, device = mxparams.record_from_bytes(buf, source)
    return _ndarray(value, device)


def dumps(data: Any) -> bytes:
    """The bytes MXNet's ``nd.save`` writes for one NDArray, a list of them or a ``{str: NDArray}`` dict."""
    values, devices, names = _records(data)
    return mxparams.dumps(values, names, devices)


def save(fname: str | os.PathLike[str], data: Any) -> None:
    """Write ``data`` to ``fname`` in MXNet's format; the file appears whole or not at all
    (a plain open()'s permissions, and no fsync, as MXNet's nd.save)."""
    values, devices, names = _records(data)  # every error is raised before the file is touched
    mxparams.save(fname, values, names, devices)


__all__ = [
    "FLAG_OF_DTYPE", "LIST_MAGIC", "ParamsFileError", "Reader", "STORAGE_NAMES",
    "TYPE_FLAGS", "V2_MAGIC", "V3_MAGIC", "array_from_bytes", "array_to_bytes", "dumps", "load", "loads", "save",
]
