"""MXNet's NDArray file format (``nd.save`` / ``nd.load``, the ``.params`` files), without pickle.

The layout, as MXNet 1.9.1 writes it (``src/ndarray/ndarray.cc``; all little-endian)::

    u64 0x112, u64 0                         list header, reserved
    u64 n, then n arrays:
        u32 magic 0xF993FAC9 (v2; v3 = 0xF993FACA with numpy shape semantics)
        i32 storage type (0 = dense)
        i32 ndim, i64 dims[ndim]
        i32 device type (1 cpu, 2 gpu), i32 device id
        i32 type flag (0 float32, 1 float64, 2 float16, 3 uint8, 4 int32, 5 int8, 6 int64, 7 bool)
        the values, C order
    u64 m (0, or n), then m names: u64 length, UTF-8 bytes

Older files are read too: v1 (magic 0xF993FAC8) and the first format, whose magic is the
ndim, followed by u32 dims. We always write v2, byte for byte what MXNet writes.

Sparse arrays (storage type 1 = row_sparse, 2 = csr) are written as MXNet writes them::

    u32 magic (v2), i32 storage type, TShape storage shape (the stored values' shape),
    TShape shape, i32 device type, i32 device id, i32 type flag,
    per aux array (csr: indptr, then indices; row_sparse: indices): i32 type flag (6, int64)
    and its TShape; then the stored values, then each aux array

(a TShape is i32 ndim + i64 dims). A file MXNet wrote whose csr columns are unsorted within
a row (MXNet's arithmetic leaves them so) loads with them sorted; stored values past
``indptr[-1]`` (left by MXNet's arithmetic) are dropped; anything else malformed is refused.

Reading never allocates more than the file holds: every count and size is checked against
the bytes left before anything is made, so a damaged header is an error, not a huge
allocation.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path
from typing import Any, Union

import numpy as np

from kvcli.errors import ParamsFileError
from kvcli.arrays.sparse import RowSparse
from kvcli.errors import CSRError, RowSparseError, ShapeMismatchError
from kvcli.mx.ndarray.ndarray import NDArray
from kvcli.mx.ndarray.sparse.base import is_sparse
from kvcli.mx.ndarray.sparse.csr import INDEX_DTYPE, CSRNDArray
from kvcli.mx.ndarray.sparse.rowsparse import RowSparseNDArray
from kvcli.mx.ndarray.context import DEVICE_TYPE_IDS, DEVICE_TYPES, Context, cpu
from kvcli.arrays.npyio import impossible_shape
from kvcli.osutil import PLAIN_FILE, atomic_write

LIST_MAGIC = 0x112
MAX_NDIM = 64  # numpy's limit
V1_MAGIC, V2_MAGIC, V3_MAGIC = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
STORAGE_DEFAULT, STORAGE_ROW_SPARSE, STORAGE_CSR = 0, 1, 2
STORAGE_NAMES = {0: "default", 1: "row_sparse", 2: "csr"}
INT64_FLAG = 6

#: MXNet's type flags (``mshadow::TypeFlag``) for the dtypes MXNet 1.9.1's Python saves.
TYPE_FLAGS: dict[int, np.dtype] = {
    0: np.dtype(np.float32), 1: np.dtype(np.float64), 2: np.dtype(np.float16), 3: np.dtype(np.uint8),
    4: np.dtype(np.int32), 5: np.dtype(np.int8), 6: np.dtype(np.int64), 7: np.dtype(np.bool_),
}
FLAG_OF_DTYPE: dict[np.dtype, int] = {dtype: flag for flag, dtype in TYPE_FLAGS.items()}

Loaded = Union[list[Any], dict[str, Any]]


class Reader:
    """Little-endian fields from a byte buffer, each read checked against what is left."""

    def __init__(self, buf: bytes | bytearray | memoryview, source: str) -> None:
        self.buf = memoryview(buf)
        self.pos = 0
        self.source = source

    @property
    def left(self) -> int:
        return len(self.buf) - self.pos

    def error(self, message: str) -> ParamsFileError:
        return ParamsFileError(f"{self.source}: {message} (at byte {self.pos}); the file is damaged or not an MXNet .params file")

    def take(self, size: int, what: str) -> memoryview:
        if size < 0 or size > self.left:
            raise self.error(f"truncated: {what} needs {size} bytes, {self.left} left")
        chunk = self.buf[self.pos:self.pos + size]
        self.pos += size
        return chunk

    def unpack(self, fmt: str, what: str) -> Any:
        (value,) = struct.unpack_from("<" + fmt, self.take(struct.calcsize(fmt), what))
        return value

    def dims(self, ndim: int, item: str, what: str) -> tuple[int, ...]:
        size = struct.calcsize(item)
        if ndim * size > self.left:
            raise self.error(f"truncated: {what} claims {ndim} dimensions, {self.left} bytes left")
        return tuple(struct.unpack_from(f"<{ndim}{item}", self.take(ndim * size, what)))


def _read_context(reader: Reader, index: int) -> Context:
    """The device an array was saved from: MXNet (built without CUDA, and for every cpu id)
    loads onto cpu(0); a gpu array goes back to its gpu, as on a machine with GPUs -- kvcli
    has them all."""
    dev_type = reader.unpack("i", f"array {index}'s device type")
    dev_id = reader.unpack("i", f"array {index}'s device id")
    if dev_type not in DEVICE_TYPES or dev_id < 0:
        raise reader.error(f"array {index} has an unknown device ({dev_type}, {dev_id})")
    return Context("gpu", dev_id) if DEVICE_TYPES[dev_type] == "gpu" else cpu(0)


def _read_dtype(reader: Reader, index: int) -> np.dtype:
    flag = reader.unpack("i", f"array {index}'s type flag")
    if flag not in TYPE_FLAGS:
        raise reader.error(f"array {index} has type flag {flag}, which kvcli cannot read (bfloat16 is 12)")
    return TYPE_FLAGS[flag]


def _read_values(reader: Reader, shape: tuple[int, ...], dtype: np.dtype, what: str) -> np.ndarray:
    if any(d < 0 for d in shape):
        raise reader.error(f"{what} has a negative dimension in shape {shape}")
    if impossible_shape(shape, dtype.itemsize):
        raise reader.error(f"{what} has an impossible shape {shape}: over 2**62 bytes")
    count = int(np.prod(shape, dtype=object)) if shape else 1  # Python ints: no overflow
    raw = reader.take(count * dtype.itemsize, f"{what}'s {count} {dtype} values")
    return np.frombuffer(raw, dtype=dtype.newbyteorder("<"), count=count).astype(dtype).reshape(shape)


def _read_dense_body(reader: Reader, shape: tuple[int, ...], index: int) -> NDArray:
    """Context, type flag and values of one dense array whose shape is read already."""
    ctx = _read_context(reader, index)
    values = _read_values(reader, shape, _read_dtype(reader, index), f"array {index}")
    return NDArray(values, ctx)


def _read_shape(reader: Reader, index: int) -> tuple[int, ...] | None:
    """A TShape (i32 ndim, i64 dims); ``None`` for MXNet's unknown shape (ndim -1)."""
    ndim = reader.unpack("i", f"array {index}'s ndim")
    if ndim == -1:
        return None
    if ndim < 0:
        raise reader.error(f"array {index} has ndim {ndim}")
    if ndim > MAX_NDIM:
        raise reader.error(f"array {index} claims {ndim} dimensions (numpy holds at most {MAX_NDIM})")
    return reader.dims(ndim, "q", f"array {index}'s shape")


def _read_dense(reader: Reader, index: int, magic: int) -> NDArray:
    shape = _read_shape(reader, index)
    # v2 (MXNet's legacy shapes): ndim 0 is "no shape"; v3 (numpy shapes): -1 dims are unknown
    if shape is None or (magic == V2_MAGIC and not shape) or any(d == -1 for d in shape):
        raise reader.error(f"array {index} has no shape (an empty NDArray()), which kvcli cannot represent")
    return _read_dense_body(reader, shape, index)


def _read_sparse(reader: Reader, index: int, stype: int) -> Any:
    """A row_sparse or csr record (see the module docstring)."""
    name = STORAGE_NAMES[stype]
    storage = _read_shape(reader, index)
    shape = _read_shape(reader, index)
    if storage is None or not shape:
        raise reader.error(f"{name} array {index} has no shape, which kvcli cannot represent")
    ctx = _read_context(reader, index)
    dtype = _read_dtype(reader, index)
    aux = []
    for i in range(1 if stype == STORAGE_ROW_SPARSE else 2):
        flag = reader.unpack("i", f"array {index}'s aux type {i}")
        aux_shape = _read_shape(reader, index)
        if flag != INT64_FLAG or aux_shape is None or len(aux_shape) != 1:
            raise reader.error(f"{name} array {index} has aux array {i} of type flag {flag} and shape {aux_shape}; "
                               "MXNet writes 1-d int64 ones")
        aux.append(aux_shape)
    values = _read_values(reader, storage, dtype, f"array {index}'s stored values")
    aux_values = [_read_values(reader, a, INDEX_DTYPE, f"array {index}'s aux array") for a in aux]
    try:
        if stype == STORAGE_ROW_SPARSE:
            return RowSparseNDArray(RowSparse(values, aux_values[0], shape), ctx)
        if len(shape) != 2:
            raise CSRError(f"a csr array is 2-D, not of shape {shape}")
        indptr, columns = aux_values
        count = int(indptr[-1]) if indptr.size else 0
        values, columns = values[:count], columns[:count]  # MXNet's arithmetic may leave unused slots
        rows = np.repeat(np.arange(shape[0]), np.diff(indptr)) if indptr.size == shape[0] + 1 else None
        if rows is not None and rows.size == columns.size:
            order = np.lexsort((columns, rows))  # MXNet's arithmetic may leave a row's columns unsorted
            values, columns = values[order], columns[order]
        return CSRNDArray.checked(values, columns, indptr, (shape[0], shape[1]), ctx)
    except (CSRError, RowSparseError, ShapeMismatchError, ValueError) as error:
        raise reader.error(f"{name} array {index} is malformed: {error}") from None


def _tshape(shape: tuple[int, ...]) -> bytes:
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _sparse_bytes(value: Any, label: str) -> bytes:
    """The record of a row_sparse or csr array after the magic, byte for byte as MXNet writes it."""
    ctx = value.context
    if value.stype == "csr":
        stored, aux = value._values, [value._indptr, value._columns]
        stype = STORAGE_CSR
    else:
        inner = value._kvcli_row_sparse()
        stored, aux = inner.data, [inner.indices]
        stype = STORAGE_ROW_SPARSE
    flag = FLAG_OF_DTYPE.get(stored.dtype)
    if flag is None:
        raise ParamsFileError(f"{label} has dtype {stored.dtype}, which MXNet cannot store")
    parts = [struct.pack("<i", stype), _tshape(stored.shape), _tshape(tuple(value.shape)),
             struct.pack("<iii", DEVICE_TYPE_IDS[ctx.device_type], ctx.device_id, flag)]
    parts += [struct.pack("<i", INT64_FLAG) + _tshape(a.shape) for a in aux]
    parts.append(np.ascontiguousarray(stored, dtype=stored.dtype.newbyteorder("<")).tobytes())
    parts += [np.ascontiguousarray(a, dtype="<i8").tobytes() for a in aux]
    return b"".join(parts)


def _read_legacy(reader: Reader, index: int, magic: int) -> NDArray:
    """The formats before v2: v1 (i32 ndim + i64 dims) and the first (magic = ndim, u32 dims)."""
    if magic == V1_MAGIC:
        shape = _read_shape(reader, index)
    else:
        shape = reader.dims(magic, "I", f"array {index}'s shape")
    if not shape:
        raise reader.error(f"array {index} has no shape (an empty NDArray()), which kvcli cannot represent")
    if len(shape) > MAX_NDIM:
        raise reader.error(f"array {index} claims {len(shape)} dimensions (numpy holds at most {MAX_NDIM})")
    return _read_dense_body(reader, shape, index)


def _read_array(reader: Reader, index: int) -> Any:
    magic = reader.unpack("I", f"array {index}'s magic number")
    if magic not in (V2_MAGIC, V3_MAGIC):
        return _read_legacy(reader, index, magic)
    stype = reader.unpack("i", f"array {index}'s storage type")
    if stype == STORAGE_DEFAULT:
        return _read_dense(reader, index, magic)
    if stype in (STORAGE_ROW_SPARSE, STORAGE_CSR):
        if magic == V3_MAGIC:
            raise reader.error(f"array {index} is sparse in a numpy-shape (v3) record, which MXNet never writes")
        return _read_sparse(reader, index, stype)
    raise reader.error(f"array {index} has unknown storage type {stype}")


#: The smallest array record (magic, storage type, ndim), to bound a claimed array count.
_MIN_ARRAY_BYTES = 12


def loads(buf: bytes | bytearray | memoryview, source: str = "<bytes>") -> Loaded:
    """Arrays from the bytes of a ``.params`` file: a dict when the file names them, else a list."""
    reader = Reader(buf, source)
    header = reader.unpack("Q", "the file header")
    if header != LIST_MAGIC:
        raise reader.error(f"header is {header:#x}, not MXNet's {LIST_MAGIC:#x}")
    reader.unpack("Q", "the reserved field")
    count = reader.unpack("Q", "the array count")
    if count * _MIN_ARRAY_BYTES > reader.left:
        raise reader.error(f"truncated: {count} arrays claimed, {reader.left} bytes left")
    arrays = [_read_array(reader, i) for i in range(count)]
    name_count = reader.unpack("Q", "the name count")
    if name_count not in (0, count):
        raise reader.error(f"{name_count} names for {count} arrays")
    names = []
    for i in range(name_count):
        length = reader.unpack("Q", f"name {i}'s length")
        raw = reader.take(length, f"name {i}")
        try:
            names.append(bytes(raw).decode("utf-8"))
        except UnicodeDecodeError:
            raise reader.error(f"name {i} is not UTF-8") from None
    return dict(zip(names, arrays)) if name_count else arrays


def load(fname: str | os.PathLike[str]) -> Loaded:
    """Read a ``.params`` file written by MXNet's ``nd.save`` (or :func:`save`): a regular
    file (a device such as /dev/zero, a FIFO or a folder is refused, never read forever)."""
    path = Path(fname)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the open
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ParamsFileError(f"cannot read {path}: it is not a regular file (a device, FIFO or folder)")
            os.set_blocking(fd, True)
            buf = handle.read()
    except OSError as error:
        raise ParamsFileError(f"cannot read {path}: {error.strerror or error}") from None
    return loads(buf, str(path))


# ------------------------------------------------------------------------------- writing
def _array_bytes(value: Any, label: str) -> bytes:
    if is_sparse(value):
        return struct.pack("<I", V2_MAGIC) + _sparse_bytes(value, label)
    if isinstance(value, NDArray):
        data, ctx = value._kvcli_buffer(), value.context
    elif isinstance(value, np.ndarray):
        data, ctx = value, cpu(0)
    else:
        raise ParamsFileError(f"{label} is a {type(value).__name__}, not an NDArray: wrap it with nd.array()")
    if data.ndim == 0:
        raise ParamsFileError(f"{label} is 0-d: MXNet 1.x reads a 0-d array back as a shapeless one: reshape it to (1,)")
    flag = FLAG_OF_DTYPE.get(data.dtype)
    if flag is None:
        known = ", ".join(str(d) for d in FLAG_OF_DTYPE)
        raise ParamsFileError(f"{label} has dtype {data.dtype}, which MXNet cannot store: use one of {known} (.astype())")
    head = struct.pack(f"<Iii{data.ndim}q", V2_MAGIC, STORAGE_DEFAULT, data.ndim, *data.shape)
    head += struct.pack("<iii", DEVICE_TYPE_IDS[ctx.device_type], ctx.device_id, flag)
    return head + np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<")).tobytes()


def array_to_bytes(value: Any) -> bytes:
    """One array's record, as MXNet's ``NDArray.__getstate__`` gives it (a pickled NDArray)."""
    return _array_bytes(value, "the array")


def array_from_bytes(buf: bytes | bytearray | memoryview, source: str = "<pickled NDArray>") -> Any:
    """The array of one record written by :func:`array_to_bytes` or by MXNet's pickling."""
    reader = Reader(buf, source)
    array = _read_array(reader, 0)
    if reader.left:
        raise reader.error(f"{reader.left} bytes follow the array")
    return array


def dumps(data: Any) -> bytes:
    """The bytes MXNet's ``nd.save`` writes for one NDArray, a list of them or a ``{str: NDArray}`` dict."""
    if isinstance(data, (NDArray, np.ndarray)):
        data = [data]
    if isinstance(data, dict):
        bad = [k for k in data if not isinstance(k, str)]
        if bad:
            raise ParamsFileError(f"array names must be str, not {type(bad[0]).__name__} ({bad[0]!r})")
        names, values = list(data), list(data.values())
        labels = [f"array {name!r}" for name in names]
    elif isinstance(data, (list, tuple)):
        names, values = [], list(data)
        labels = [f"array {i}" for i in range(len(values))]
    else:
        raise ParamsFileError(
            f"nd.save takes an NDArray, a list of them or a dict of str to NDArray, not a {type(data).__name__}")
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(values))]
    parts += [_array_bytes(value, label) for value, label in zip(values, labels)]
    parts.append(struct.pack("<Q", len(names)))
    for name in names:
        raw = name.encode("utf-8")
        parts.append(struct.pack("<Q", len(raw)) + raw)
    return b"".join(parts)


def save(fname: str | os.PathLike[str], data: Any) -> None:
    """Write ``data`` to ``fname`` in MXNet's format; the file appears whole or not at all."""
    blob = dumps(data)  # every error is raised before the file is touched
    path = Path(fname)
    try:  # a plain open()'s permissions, and no fsync, as MXNet's nd.save
        atomic_write(path, blob, mode=PLAIN_FILE, sync=False)
    except OSError as error:
        raise ParamsFileError(f"cannot write {path}: {error.strerror or error}") from None


__all__ = [
    "FLAG_OF_DTYPE", "LIST_MAGIC", "ParamsFileError", "Reader", "STORAGE_NAMES",
    "TYPE_FLAGS", "V2_MAGIC", "V3_MAGIC", "array_from_bytes", "array_to_bytes", "dumps", "load", "loads", "save",
]
