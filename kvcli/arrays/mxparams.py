"""MXNet's NDArray file format (``nd.save``, ``save_checkpoint``, the ``.params`` files): the
one reader and writer, on numpy values, without pickle.

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

Reading is in two steps. :func:`open_file` (or :func:`from_bytes`) *scans* the file: every
record's header is read and every count and size checked against the bytes left before
anything is made, so a damaged header is an error, not a huge allocation; the values are
not read. The :class:`ParamsFile` then reads a record's values on demand
(:meth:`~ParamsFile.value`), or copies their bytes straight into another file
(:meth:`~ParamsFile.body`, what a session writes its ``.npy`` files from: no array is held
in memory). A file is read through one descriptor that is never a device, FIFO or folder.

Values are numpy arrays (dense), :class:`~kvcli.arrays.sparse.RowSparse` and
:class:`~kvcli.arrays.csr.CSRParts`; the MXNet layer (``kvcli.mx.ndarray.io``) wraps them
as NDArrays and keeps each record's device.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Iterator, NamedTuple, Sequence, Union

from kvcli.arrays.kinds import BY_NAME, DType
from kvcli.arrays.npyio import copy_range, impossible_shape
from kvcli.errors import CSRError, NpyError, ParamsFileError, RowSparseError, ShapeMismatchError
from kvcli.osutil import PLAIN_FILE, atomic_write

if TYPE_CHECKING:  # numpy and the sparse values are imported where values are made: a scan or a
    import numpy as np  # copy of bytes (a checkpoint into a session and back) needs none of them

    from kvcli.arrays.csr import CSRParts
    from kvcli.arrays.sparse import RowSparse

LIST_MAGIC = 0x112
MAX_NDIM = 64  # numpy's limit
V1_MAGIC, V2_MAGIC, V3_MAGIC = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
STORAGE_DEFAULT, STORAGE_ROW_SPARSE, STORAGE_CSR = 0, 1, 2
STORAGE_NAMES = {0: "default", 1: "row_sparse", 2: "csr"}
INT64_FLAG = 6

#: MXNet's type flags (``mshadow::TypeFlag``) for the dtypes MXNet 1.9.1's Python saves.
TYPE_FLAGS: dict[int, DType] = {
    0: BY_NAME["float32"], 1: BY_NAME["float64"], 2: BY_NAME["float16"], 3: BY_NAME["uint8"],
    4: BY_NAME["int32"], 5: BY_NAME["int8"], 6: BY_NAME["int64"], 7: BY_NAME["bool"],
}
#: dtype name -> MXNet's type flag.
FLAG_OF_DTYPE: dict[str, int] = {dtype.name: flag for flag, dtype in TYPE_FLAGS.items()}
_INDEX = TYPE_FLAGS[INT64_FLAG]  # a sparse array's indices
#: MXNet's device type ids (``Context.devtype2str``); every record stores one.
DEVICE_TYPES: dict[int, str] = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
DEVICE_TYPE_IDS: dict[str, int] = {name: number for number, name in DEVICE_TYPES.items()}
CPU = ("cpu", 0)

#: A value the format holds.
Value = Union["np.ndarray", "RowSparse", "CSRParts"]
#: The bytes of a header window read at a time from a file (a record's header is < 600 bytes).
WINDOW = 1 << 16
#: The smallest array record (magic, storage type, ndim), to bound a claimed array count.
MIN_ARRAY_BYTES = 12


def dtype_names() -> str:
    """``float32, float64, ...``: the dtypes the format holds, for messages."""
    return ", ".join(str(d) for d in FLAG_OF_DTYPE)


class Entry(NamedTuple):
    """One record of a file, as scanned: where its values are, not the values.

    ``shape`` is the array's (dense) shape, ``stored`` the shape of the values stored (the
    same for a dense array; a sparse one's present rows or values), ``offset`` where they
    start in the file, ``aux`` the (shape, offset) of each int64 index array of a sparse one,
    ``device`` the (type, id) it was saved from."""

    number: int
    stype: str
    shape: tuple[int, ...]
    dtype: DType
    device: tuple[str, int]
    stored: tuple[int, ...]
    offset: int
    aux: tuple[tuple[tuple[int, ...], int], ...] = ()

    @property
    def size(self) -> int:
        """Values stored."""
        return _count(self.stored)

    @property
    def nbytes(self) -> int:
        """Bytes of the values stored."""
        return self.size * self.dtype.itemsize


def _count(shape: tuple[int, ...]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count


class Reader:
    """Little-endian fields of a ``.params`` source (bytes, or a regular file read through
    a window), each read checked against what is left."""

    def __init__(self, source: str, data: bytes | bytearray | memoryview | None = None,
                 handle: Any = None, size: int = 0) -> None:
        self.source = source
        self.pos = 0
        self._data = memoryview(data) if data is not None else None
        self._handle = handle
        self.size = len(self._data) if self._data is not None else size
        self._window = memoryview(b"")
        self._window_at = 0

    @property
    def left(self) -> int:
        return self.size - self.pos

    def error(self, message: str) -> ParamsFileError:
        return ParamsFileError(f"{self.source}: {message} (at byte {self.pos}); the file is damaged or not an MXNet "
                               ".params file")

    def take(self, size: int, what: str) -> memoryview:
        if size < 0 or size > self.left:
            raise self.error(f"truncated: {what} needs {size} bytes, {self.left} left")
        if self._data is not None:
            chunk = self._data[self.pos:self.pos + size]
        else:
            start = self.pos - self._window_at
            if start < 0 or start + size > len(self._window):
                self._window = memoryview(self.read_at(self.pos, max(size, min(WINDOW, self.left)), what))
                self._window_at, start = self.pos, 0
            chunk = self._window[start:start + size]
        self.pos += size
        return chunk

    def skip(self, size: int, what: str) -> None:
        if size < 0 or size > self.left:
            raise self.error(f"truncated: {what} needs {size} bytes, {self.left} left")
        self.pos += size

    def unpack(self, fmt: str, what: str) -> Any:
        (value,) = struct.unpack_from("<" + fmt, self.take(struct.calcsize(fmt), what))
        return value

    def dims(self, ndim: int, item: str, what: str) -> tuple[int, ...]:
        size = struct.calcsize(item)
        if ndim * size > self.left:
            raise self.error(f"truncated: {what} claims {ndim} dimensions, {self.left} bytes left")
        return tuple(struct.unpack_from(f"<{ndim}{item}", self.take(ndim * size, what)))

    def read_at(self, offset: int, size: int, what: str, into: memoryview | None = None) -> bytearray | memoryview:
        """``size`` bytes at ``offset`` (into ``into`` when given), or an error if the file
        has fewer now (it changed while it was read)."""
        if self._data is not None:
            chunk = self._data[offset:offset + size]
            if into is None:
                return chunk
            into[:size] = chunk
            return into
        assert self._handle is not None
        out = into if into is not None else memoryview(bytearray(size))
        self._handle.seek(offset)
        got = 0
        while got < size:
            n = self._handle.readinto(out[got:size])
            if not n:
                raise ParamsFileError(f"{self.source}: it ended inside {what} ({got} of {size} bytes): it was "
                                      "changed while it was read")
            got += n
        return out.obj if into is None else out  # type: ignore[return-value]  # the bytearray made above


# ------------------------------------------------------------------------------- scanning
def _device(reader: Reader, index: int) -> tuple[str, int]:
    dev_type = reader.unpack("i", f"array {index}'s device type")
    dev_id = reader.unpack("i", f"array {index}'s device id")
    if dev_type not in DEVICE_TYPES or dev_id < 0:
        raise reader.error(f"array {index} has an unknown device ({dev_type}, {dev_id})")
    return DEVICE_TYPES[dev_type], dev_id


def _dtype(reader: Reader, index: int) -> DType:
    flag = reader.unpack("i", f"array {index}'s type flag")
    if flag not in TYPE_FLAGS:
        raise reader.error(f"array {index} has type flag {flag}, which kvcli cannot read (bfloat16 is 12)")
    return TYPE_FLAGS[flag]


def _values_at(reader: Reader, shape: tuple[int, ...], dtype: DType, what: str) -> int:
    """Skip the values of ``shape`` (checked: no negative dimension, no impossible size, all
    there); returns where they start."""
    if any(d < 0 for d in shape):
        raise reader.error(f"{what} has a negative dimension in shape {shape}")
    if impossible_shape(shape, dtype.itemsize):
        raise reader.error(f"{what} has an impossible shape {shape}: over 2**62 bytes")
    count = _count(shape)  # Python ints: no overflow
    at = reader.pos
    reader.skip(count * dtype.itemsize, f"{what}'s {count} {dtype} values")
    return at


def _shape(reader: Reader, index: int) -> tuple[int, ...] | None:
    """A TShape (i32 ndim, i64 dims); ``None`` for MXNet's unknown shape (ndim -1)."""
    ndim = reader.unpack("i", f"array {index}'s ndim")
    if ndim == -1:
        return None
    if ndim < 0:
        raise reader.error(f"array {index} has ndim {ndim}")
    if ndim > MAX_NDIM:
        raise reader.error(f"array {index} claims {ndim} dimensions (numpy holds at most {MAX_NDIM})")
    return reader.dims(ndim, "q", f"array {index}'s shape")


def _dense(reader: Reader, index: int, shape: tuple[int, ...]) -> Entry:
    device = _device(reader, index)
    dtype = _dtype(reader, index)
    offset = _values_at(reader, shape, dtype, f"array {index}")
    return Entry(index, "default", shape, dtype, device, shape, offset)


def _sparse(reader: Reader, index: int, stype: int) -> Entry:
    name = STORAGE_NAMES[stype]
    stored = _shape(reader, index)
    shape = _shape(reader, index)
    if stored is None or not shape:
        raise reader.error(f"{name} array {index} has no shape, which kvcli cannot represent")
    if stype == STORAGE_CSR and len(shape) != 2:
        raise reader.error(f"csr array {index} is malformed: a csr array is 2-D, not of shape {shape}")
    device = _device(reader, index)
    dtype = _dtype(reader, index)
    aux_shapes = []
    for i in range(1 if stype == STORAGE_ROW_SPARSE else 2):
        flag = reader.unpack("i", f"array {index}'s aux type {i}")
        aux_shape = _shape(reader, index)
        if flag != INT64_FLAG or aux_shape is None or len(aux_shape) != 1:
            raise reader.error(f"{name} array {index} has aux array {i} of type flag {flag} and shape {aux_shape}; "
                               "MXNet writes 1-d int64 ones")
        aux_shapes.append(aux_shape)
    offset = _values_at(reader, stored, dtype, f"array {index}'s stored values")
    aux = tuple((a, _values_at(reader, a, _INDEX, f"array {index}'s aux array")) for a in aux_shapes)
    return Entry(index, name, shape, dtype, device, stored, offset, aux)


def _legacy(reader: Reader, index: int, magic: int) -> Entry:
    """The formats before v2: v1 (i32 ndim + i64 dims) and the first (magic = ndim, u32 dims)."""
    shape = _shape(reader, index) if magic == V1_MAGIC else reader.dims(magic, "I", f"array {index}'s shape")
    if not shape:
        raise reader.error(f"array {index} has no shape (an empty NDArray()), which kvcli cannot represent")
    if len(shape) > MAX_NDIM:
        raise reader.error(f"array {index} claims {len(shape)} dimensions (numpy holds at most {MAX_NDIM})")
    return _dense(reader, index, shape)


def _record(reader: Reader, index: int) -> Entry:
    magic = reader.unpack("I", f"array {index}'s magic number")
    if magic not in (V2_MAGIC, V3_MAGIC):
        return _legacy(reader, index, magic)
    stype = reader.unpack("i", f"array {index}'s storage type")
    if stype == STORAGE_DEFAULT:
        shape = _shape(reader, index)
        # v2 (MXNet's legacy shapes): ndim 0 is "no shape"; v3 (numpy shapes): -1 dims are unknown
        if shape is None or (magic == V2_MAGIC and not shape) or any(d == -1 for d in shape):
            raise reader.error(f"array {index} has no shape (an empty NDArray()), which kvcli cannot represent")
        return _dense(reader, index, shape)
    if stype in (STORAGE_ROW_SPARSE, STORAGE_CSR):
        if magic == V3_MAGIC:
            raise reader.error(f"array {index} is sparse in a numpy-shape (v3) record, which MXNet never writes")
        return _sparse(reader, index, stype)
    raise reader.error(f"array {index} has unknown storage type {stype}")


class ParamsFile:
    """A scanned ``.params`` source: its records (:attr:`entries`) and names (:attr:`names`,
    ``None`` for a list), whose values are read on demand. Close it (or use ``with``) when
    it reads a file."""

    def __init__(self, reader: Reader) -> None:
        self._reader = reader
        self.source = reader.source
        header = reader.unpack("Q", "the file header")
        if header != LIST_MAGIC:
            raise reader.error(f"header is {header:#x}, not MXNet's {LIST_MAGIC:#x}")
        reader.unpack("Q", "the reserved field")
        count = reader.unpack("Q", "the array count")
        if count * MIN_ARRAY_BYTES > reader.left:
            raise reader.error(f"truncated: {count} arrays claimed, {reader.left} bytes left")
        self.entries: list[Entry] = [_record(reader, i) for i in range(count)]
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
        self.names: list[str] | None = names if name_count else None
        self.end = reader.pos  # bytes after it are ignored, as MXNet ignores them

    def __enter__(self) -> "ParamsFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        handle = self._reader._handle
        if handle is not None:
            handle.close()

    def items(self) -> Iterator[tuple[str | None, Entry]]:
        """``(name, entry)`` per record, in file order (name ``None`` in an unnamed file)."""
        names: Sequence[str | None] = self.names if self.names is not None else [None] * len(self.entries)
        return zip(names, self.entries)

    def array(self, entry: Entry, copy: bool = True) -> np.ndarray:
        """The stored values of ``entry`` (of shape ``entry.stored``, the file's dtype, native
        order). ``copy=False`` may return a read-only view of bytes already in memory."""
        return _read(self._reader, entry.offset, entry.stored, entry.dtype, f"array {entry.number}'s values", copy)

    def value(self, entry: Entry, copy: bool = True) -> Value:
        """The value of ``entry``: a numpy array, a :class:`RowSparse` or a :class:`CSRParts`;
        a sparse record that breaks MXNet's rules (indices out of range, unsorted) is refused."""
        return _value(self._reader, entry, copy)

    def body(self, entry: Entry) -> "Body":
        """The values of dense ``entry`` as a :class:`Body`: written into another file by
        copying bytes, never held in memory whole."""
        return Body(self, entry)

    def copy_to(self, entry: Entry, handle: BinaryIO) -> None:
        """Write the stored values' little-endian bytes of ``entry`` at ``handle``'s position."""
        size = entry.nbytes
        if self._reader._data is not None:
            handle.write(self._reader.read_at(entry.offset, size, f"array {entry.number}'s values"))
            return
        try:
            copy_range(self._reader._handle, handle, entry.offset, size)
        except NpyError:
            raise ParamsFileError(f"{self.source}: array {entry.number}'s values could not be read whole: it was "
                                  "changed while it was read") from None


def _read(reader: Reader, offset: int, shape: tuple[int, ...], kind: DType, what: str,
          copy: bool) -> np.ndarray:
    import numpy as np

    count = _count(shape)
    dtype, little = np.dtype(kind.name), np.dtype(kind.little)
    if reader._data is not None:
        values = np.frombuffer(reader.read_at(offset, count * dtype.itemsize, what), dtype=little, count=count)
        if copy or not little.isnative:
            values = values.astype(dtype)
    else:
        values = np.empty(count, little)
        reader.read_at(offset, values.nbytes, what, memoryview(values).cast("B"))  # type: ignore[arg-type]
        if not little.isnative:
            values = values.astype(dtype)
    return values.reshape(shape)


def _value(reader: Reader, entry: Entry, copy: bool) -> Value:
    import numpy as np

    from kvcli.arrays.csr import CSRParts, check_csr
    from kvcli.arrays.sparse import RowSparse

    values = _read(reader, entry.offset, entry.stored, entry.dtype, f"array {entry.number}'s values", copy)
    if entry.stype == "default":
        return values
    aux = [_read(reader, offset, shape, _INDEX, f"array {entry.number}'s aux array", True)
           for shape, offset in entry.aux]
    try:
        if entry.stype == "row_sparse":
            return RowSparse(values, aux[0], entry.shape, copy=copy)
        indptr, columns = aux
        count = int(indptr[-1]) if indptr.size else 0
        values, columns = values[:count], columns[:count]  # MXNet's arithmetic may leave unused slots
        rows = np.repeat(np.arange(entry.shape[0]), np.diff(indptr)) if indptr.size == entry.shape[0] + 1 else None
        if rows is not None and rows.size == columns.size:
            order = np.lexsort((columns, rows))  # MXNet's arithmetic may leave a row's columns unsorted
            values, columns = values[order], columns[order]
        shape = (entry.shape[0], entry.shape[1])
        check_csr(values, columns, indptr, shape)
        return CSRParts(np.ascontiguousarray(values), columns, indptr, shape)
    except (CSRError, RowSparseError, ShapeMismatchError, ValueError) as error:
        raise reader.error(f"{entry.stype} array {entry.number} is malformed: {error}") from None


class Body:
    """The values of a dense record of a ``.params`` file as a body (little-endian, as
    stored; the protocol of :class:`kvcli.arrays.npyio.FileBody`): copied into another file,
    never held in memory whole."""

    def __init__(self, params: ParamsFile, entry: Entry) -> None:
        self.params, self.entry = params, entry
        self.dtype = entry.dtype
        self.shape = entry.shape
        self.nbytes = entry.nbytes

    def write_to(self, handle: BinaryIO) -> None:
        """Write the bytes at ``handle``'s position."""
        self.params.copy_to(self.entry, handle)

    def little_bytes(self) -> bytes:
        """The bytes, in memory."""
        return bytes(self.params._reader.read_at(self.entry.offset, self.nbytes,
                                                 f"array {self.entry.number}'s values"))

    def read(self) -> np.ndarray:
        return self.params.array(self.entry)


def to_dense(value: Value) -> np.ndarray:
    """A value as a dense numpy array (a sparse one with its zeros filled in)."""
    import numpy as np

    return value if isinstance(value, np.ndarray) else value.to_dense()


def open_file(path: str | os.PathLike[str]) -> ParamsFile:
    """Scan the ``.params`` file at ``path`` (a regular file: a device such as /dev/zero, a
    FIFO or a folder is refused, never read forever)."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the open
    except OSError as error:
        raise ParamsFileError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise ParamsFileError(f"cannot read {path}: it is not a regular file (a device, FIFO or folder)")
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb", buffering=0)
    except OSError as error:
        os.close(fd)
        raise ParamsFileError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        return ParamsFile(Reader(str(path), handle=handle, size=info.st_size))
    except OSError as error:
        handle.close()
        raise ParamsFileError(f"cannot read {path}: {error.strerror or error}") from None
    except BaseException:
        handle.close()
        raise


def from_bytes(buf: bytes | bytearray | memoryview, source: str = "<bytes>") -> ParamsFile:
    """Scan the bytes of a ``.params`` file."""
    return ParamsFile(Reader(source, data=buf))


def record_from_bytes(buf: bytes | bytearray | memoryview, source: str) -> tuple[Value, tuple[str, int]]:
    """The value and device of one record alone (MXNet's pickled NDArray)."""
    reader = Reader(source, data=buf)
    entry = _record(reader, 0)
    if reader.left:
        raise reader.error(f"{reader.left} bytes follow the array")
    return _value(reader, entry, True), entry.device


# ------------------------------------------------------------------------------- writing
def _tshape(shape: tuple[int, ...]) -> bytes:
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _flag(dtype: Any, label: str) -> int:
    """The type flag of ``dtype`` (numpy's, or a body's :class:`DType`)."""
    flag = FLAG_OF_DTYPE.get(dtype.name)
    if flag is None:
        raise ParamsFileError(f"{label} has dtype {dtype}, which MXNet cannot store: use one of {dtype_names()} "
                              "(.astype())")
    return flag


def _device_ids(device: tuple[str, int], label: str) -> tuple[int, int]:
    kind, number = device
    if kind not in DEVICE_TYPE_IDS or number < 0:
        raise ParamsFileError(f"{label} is on device {device}, which MXNet does not name")
    return DEVICE_TYPE_IDS[kind], number


def _little(array: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))


def _parts(value: Any, device: tuple[str, int], label: str) -> list[Any]:
    """The pieces of one record, byte for byte as MXNet writes it (checked: raises before
    anything is written)."""
    dev = _device_ids(device, label)
    if hasattr(value, "write_to"):  # a body copied from a file (no numpy array has write_to)
        if not value.shape:
            raise ParamsFileError(f"{label} is 0-d: MXNet 1.x reads a 0-d array back as a shapeless one: reshape it "
                                  "to (1,)")
        head = struct.pack(f"<Iii{len(value.shape)}q", V2_MAGIC, STORAGE_DEFAULT, len(value.shape), *value.shape)
        return [head + struct.pack("<iii", *dev, _flag(value.dtype, label)), value]
    import numpy as np

    from kvcli.arrays.csr import CSRParts
    from kvcli.arrays.sparse import RowSparse

    if isinstance(value, (RowSparse, CSRParts)):
        if isinstance(value, CSRParts):
            stored, aux, stype = value.data, [value.indptr, value.indices], STORAGE_CSR
        else:
            stored, aux, stype = value.data, [value.indices], STORAGE_ROW_SPARSE
        pieces = [struct.pack("<Ii", V2_MAGIC, stype), _tshape(stored.shape), _tshape(tuple(value.shape)),
                  struct.pack("<iii", *dev, _flag(stored.dtype, label))]
        pieces += [struct.pack("<i", INT64_FLAG) + _tshape(a.shape) for a in aux]
        return [b"".join(pieces), _little(stored), *(np.ascontiguousarray(a, dtype="<i8") for a in aux)]
    if not isinstance(value, np.ndarray):
        raise ParamsFileError(f"{label} is a {type(value).__name__}, not an array")
    if value.ndim == 0:
        raise ParamsFileError(f"{label} is 0-d: MXNet 1.x reads a 0-d array back as a shapeless one: reshape it to "
                              "(1,)")
    flag = _flag(value.dtype, label)
    head = struct.pack(f"<Iii{value.ndim}q", V2_MAGIC, STORAGE_DEFAULT, value.ndim, *value.shape)
    return [head + struct.pack("<iii", *dev, flag), _little(value)]


def _write(handle: BinaryIO, part: Any) -> None:
    if hasattr(part, "write_to"):  # a body
        part.write_to(handle)
    elif isinstance(part, (bytes, bytearray)):
        handle.write(part)
    elif part.size:  # a numpy array
        handle.write(memoryview(part.reshape(-1)).cast("B"))


def dump(handle: BinaryIO, values: Sequence[Any], names: Sequence[str] | None = None,
         devices: Sequence[tuple[str, int]] | None = None, labels: Sequence[str] | None = None) -> None:
    """Write ``values`` (numpy arrays, :class:`RowSparse`, :class:`CSRParts`, or bodies
    copied from files: ``dtype``, ``shape`` and ``write_to(handle)``) in MXNet's format to
    ``handle``, named by ``names`` (``None``: an unnamed list), each saved from its
    ``devices`` entry (default cpu(0)). Every value is checked before the first byte is
    written; a value's buffer is written as it is (no copy of a C-ordered array)."""
    if names is not None:
        if len(names) != len(values):
            raise ParamsFileError(f"{len(names)} names for {len(values)} arrays")
        bad = [n for n in names if not isinstance(n, str)]
        if bad:
            raise ParamsFileError(f"array names must be str, not {type(bad[0]).__name__} ({bad[0]!r})")
    if labels is None:
        labels = [f"array {n!r}" for n in names] if names is not None else [f"array {i}" for i in range(len(values))]
    records = [_parts(value, devices[i] if devices is not None else CPU, labels[i]) for i, value in enumerate(values)]
    handle.write(struct.pack("<QQQ", LIST_MAGIC, 0, len(values)))
    for parts in records:
        for part in parts:
            _write(handle, part)
    tail = [struct.pack("<Q", len(names or ()))]
    for name in names or ():
        raw = name.encode("utf-8")
        tail.append(struct.pack("<Q", len(raw)) + raw)
    handle.write(b"".join(tail))


def dumps(values: Sequence[Any], names: Sequence[str] | None = None,
          devices: Sequence[tuple[str, int]] | None = None) -> bytes:
    """The bytes :func:`dump` writes."""
    import io

    out = io.BytesIO()
    dump(out, values, names, devices)
    return out.getvalue()


def record_bytes(value: Any, device: tuple[str, int] = CPU, label: str = "the array") -> bytes:
    """One record alone, as MXNet's ``NDArray.__getstate__`` gives it (a pickled NDArray)."""
    import io

    out = io.BytesIO()
    for part in _parts(value, device, label):
        _write(out, part)
    return out.getvalue()


def save(path: str | os.PathLike[str], values: Sequence[Any], names: Sequence[str] | None = None,
         devices: Sequence[tuple[str, int]] | None = None, *, mode: int = PLAIN_FILE, sync: bool = False) -> None:
    """Write a ``.params`` file at ``path``, whole or not at all (a temporary file renamed
    over it, :func:`kvcli.osutil.atomic_write`), created with ``mode`` and fsynced when
    ``sync``. Every value is checked first: an error leaves ``path`` as it was."""
    path = Path(path)
    try:  # dump checks every value before it writes: an error removes the temporary file
        atomic_write(path, lambda handle: dump(handle, values, names, devices), mode=mode, sync=sync)
    except OSError as error:
        raise ParamsFileError(f"cannot write {path}: {error.strerror or error}") from None


__all__ = [
    "Body", "CPU", "DEVICE_TYPES", "DEVICE_TYPE_IDS", "Entry", "FLAG_OF_DTYPE", "LIST_MAGIC", "ParamsFile", "Reader",
    "STORAGE_NAMES", "TYPE_FLAGS", "V2_MAGIC", "V3_MAGIC", "Value", "dtype_names", "dump", "dumps", "from_bytes",
    "open_file", "record_bytes", "record_from_bytes", "save", "to_dense",
]
