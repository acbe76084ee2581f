"""The one ``.npy`` reader and writer of kvcli: never pickled, bounded, symlink-safe.

Everything that reads an array from a file or a stream goes through :func:`read_array`
(the value language's ``@FILE.npy`` and ``-``, session files, imports), and session
files are written by :func:`write_file`:

* the header is parsed here (a bounded size, ``ast.literal_eval`` of a dict), so a header
  claiming 2**40 elements is refused before one byte of the body is read or allocated;
* only the numeric dtypes of :data:`DTYPES` load (no objects, no pickles, no structures);
* the body of a regular file is checked against the file's size first; a pipe, FIFO or
  terminal is read in chunks that grow only as data arrives, each wait bounded by
  ``KVCLI_STREAM_TIMEOUT`` seconds (a FIFO nobody writes to is an error, not a hang);
* session files are opened with ``O_NOFOLLOW`` and must be regular files.

Problems are raised as :class:`NpyError` (a message and a kind); callers turn them into
their own error class with the wording their users expect.
"""

from __future__ import annotations

import ast
import errno
import io
import math
import os
import select
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from kvcli.arrays.kinds import BY_NAME, DTYPES, WIDEST_ITEM, DType, from_descr
from kvcli.errors import NpyError
from kvcli import config
from kvcli.osutil import PRIVATE_FILE

if TYPE_CHECKING:  # numpy is imported where values are made: copying bytes needs none of it
    import numpy as np
MAGIC = b"\x93NUMPY"
MAX_HEADER = 1 << 16  # bytes of a header dict (numpy itself writes under 200)
MAX_BYTES = 1 << 62  # bytes an array may claim (numpy's own limit is 2**63 - 1)
READ_CHUNK = 1 << 24  # bytes read at a time from a stream
KNOWN_CHUNK = 1 << 18  # ... from one of known length (small pieces stay in the CPU's cache)
DEFAULT_STREAM_TIMEOUT = config.STREAM_TIMEOUT.default
MMAP_BYTES = 1 << 20  # session files at least this big are mapped, not read (one copy, not two)
#: O_NOFOLLOW where the platform has it: a symlink in place of a session file is refused.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class Header(NamedTuple):
    """A parsed ``.npy`` header: the values' shape, dtype (``kind``), byte order (``big``),
    order (``fortran``) and where they start (``offset``)."""

    shape: tuple[int, ...]
    kind: DType
    big: bool
    fortran: bool
    offset: int

    @property
    def size(self) -> int:
        """Elements of the array."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.kind.itemsize

    @property
    def dtype(self) -> np.dtype:
        """numpy's dtype of the values as stored (byte order included)."""
        import numpy as np

        return np.dtype((">" if self.big else "<") + self.kind.code)


def stream_timeout() -> float:
    """Seconds a stream may stay silent: ``KVCLI_STREAM_TIMEOUT`` or 30."""
    return float(config.get(config.STREAM_TIMEOUT))


# ---------------------------------------------------------------------- reading
def read_header(handle: Any) -> Header:
    """Parse the header at the start of ``handle`` (anything with ``read(n)``)."""
    magic = _read_exactly(handle, 8, "the header")
    if magic[:6] != MAGIC:
        if magic[:1] == b"\x80":
            raise NpyError("holds a Python pickle, which kvcli refuses to load (save arrays with numpy.save)", "pickle")
        raise NpyError("is not a .npy file (save arrays with numpy.save)")
    version = (magic[6], magic[7])
    if version == (1, 0):
        size_bytes = _read_exactly(handle, 2, "the header")
    elif version in ((2, 0), (3, 0)):
        size_bytes = _read_exactly(handle, 4, "the header")
    else:
        raise NpyError(f"has an unknown .npy version {version[0]}.{version[1]}")
    length = int.from_bytes(size_bytes, "little")
    if length > MAX_HEADER:
        raise NpyError(f"has a {length}-byte header (at most {MAX_HEADER}): not a plain array")
    text = _read_exactly(handle, length, "the header")
    try:
        header = ast.literal_eval(text.decode("utf-8" if version == (3, 0) else "latin1"))
    except (SyntaxError, ValueError, UnicodeDecodeError, MemoryError, RecursionError, TypeError):
        raise NpyError("has a malformed header") from None
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise NpyError("has a malformed header (it needs descr, fortran_order and shape)")
    shape, fortran, descr = header["shape"], header["fortran_order"], header["descr"]
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise NpyError(f"has a malformed shape {_short(shape)}")
    if len(shape) > 32 or not isinstance(fortran, bool):
        raise NpyError("has a malformed header (more than 32 dimensions or a bad fortran_order)")
    kind, big = from_descr(descr) or _numpy_descr(descr)
    if impossible_shape(shape, kind.itemsize):
        raise NpyError(f"has an impossible shape {_short(shape)}: over 2**62 bytes, even with an empty dimension")
    offset = 8 + len(size_bytes) + length
    return Header(tuple(shape), kind, big, fortran, offset)


def _numpy_descr(descr: Any) -> tuple[DType, bool]:
    """A descr numpy writes otherwise (``"float32"``, a record, an object): numpy reads it,
    and only a plain array of a dtype of :data:`DTYPES` is accepted."""
    try:
        from numpy.lib.format import descr_to_dtype

        dtype = descr_to_dtype(descr)
    except (TypeError, ValueError, KeyError):
        raise NpyError(f"has an unknown dtype {_short(descr)}") from None
    if dtype.hasobject:
        raise NpyError("holds Python objects, which kvcli refuses to load (they would be unpickled)", "pickle")
    if dtype.name not in DTYPES or dtype.fields is not None or dtype.subdtype is not None:
        raise NpyError(f"holds dtype {dtype}, which kvcli does not load (use one of {', '.join(DTYPES)})")
    return BY_NAME[dtype.name], dtype.byteorder == ">" or (dtype.byteorder == "=" and sys.byteorder == "big")


def impossible_shape(shape: tuple[int, ...], itemsize: int) -> bool:
    """Whether no array can have ``shape``: its non-zero dimensions make more than 2**62
    bytes (numpy refuses such a shape even when another dimension is 0, so a header
    claiming ``(0, 2**62, 2**62)`` is refused here rather than by numpy's reshape)."""
    return math.prod(n for n in shape if n) * itemsize > MAX_BYTES


def read_array(
    source: Any,
    *,
    limit: int | None = None,
    dtype: str | None = None,
    shape: tuple[int, ...] | None = None,
    session_file: bool = False,
    timeout: float | None = None,
) -> np.ndarray:
    """Read one array from a path or an open binary stream.

    Args:
        source: a path (opened here) or a binary stream (stdin, a BytesIO, an open file).
        limit: refuse more elements than this (before the body is read).
        dtype, shape: what the array must be (a session file against its manifest).
        session_file: the path is a session file: refuse a symlink or anything but a regular
            file, and map big files instead of reading them.
        timeout: seconds a pipe or FIFO may stay silent (default :func:`stream_timeout`).
    """
    try:
        if isinstance(source, (str, Path)):
            fd = _open_for_reading(Path(source), session_file)
            with os.fdopen(fd, "rb") as handle:
                return _read_from(handle, limit, dtype, shape, session_file, timeout)
        return _read_from(source, limit, dtype, shape, False, timeout)
    except OSError as error:  # e.g. EIO from /proc/self/mem or a failing disk
        raise NpyError(f"cannot be read ({error.strerror or error})", "io") from None


def check_file(path: Path, dtype: str, shape: tuple[int, ...]) -> Header:
    """Check a session file without reading its data: a regular file whose header, dtype,
    shape and size are what the manifest says; returns its header."""
    fd = _open_for_reading(path, True)
    with os.fdopen(fd, "rb") as handle:
        try:
            header = read_header(handle)
        except OSError as error:
            raise NpyError(f"cannot be read ({error.strerror or error})", "io") from None
        _check_expected(header, dtype, shape)
        _check_size(handle, header)
    return header


def file_body(path: Path, dtype: str, shape: tuple[int, ...]) -> Any:
    """The data of a session file as a body another file is written from by copying bytes
    (:class:`FileBody`), after the checks of :func:`check_file`; a file whose data are not
    little-endian C-ordered bytes (numpy's big-endian or Fortran order) is read instead."""
    header = check_file(path, dtype, shape)
    if header.fortran or header.big:
        return read_array(path, dtype=dtype, shape=shape, session_file=True)
    return FileBody(path, header.offset, header.kind, header.shape)


class FileBody:
    """``nbytes`` bytes of ``path`` from ``offset``: an array's little-endian data (``dtype``,
    ``shape``) that :meth:`write_to` copies into another file (:func:`copy_range`). A body
    (this, :class:`BytesBody`, :class:`kvcli.arrays.mxparams.Body`) is a value moved as bytes,
    with no numpy: ``dtype`` (a :class:`~kvcli.arrays.kinds.DType`), ``shape``, ``nbytes``,
    :meth:`write_to`, :meth:`little_bytes` and :meth:`read` (the numpy array)."""

    def __init__(self, path: Path, offset: int, dtype: DType, shape: tuple[int, ...]) -> None:
        self.path, self.offset, self.dtype, self.shape = path, offset, dtype, tuple(shape)
        self.nbytes = math.prod(self.shape) * self.dtype.itemsize

    def _source(self) -> Any:
        fd = _open_for_reading(self.path, True)
        source = os.fdopen(fd, "rb", buffering=0)
        if os.fstat(fd).st_size < self.offset + self.nbytes:
            source.close()
            raise NpyError(f"is truncated: fewer than {self.nbytes} data bytes", "bad")
        return source

    def write_to(self, handle: Any) -> None:
        """Write the bytes at the position of ``handle``, an open file (it has a descriptor)."""
        with self._source() as source:
            copy_range(source, handle, self.offset, self.nbytes)

    def little_bytes(self) -> bytes:
        """The bytes, in memory."""
        with self._source() as source:
            source.seek(self.offset)
            return _read_exactly(source, self.nbytes, "the data")

    def read(self) -> np.ndarray:
        return read_array(self.path, dtype=self.dtype.name, shape=self.shape, session_file=True)


class BytesBody:
    """Little-endian bytes in memory as a body (see :class:`FileBody`)."""

    def __init__(self, data: bytes, dtype: DType, shape: tuple[int, ...]) -> None:
        self.data, self.dtype, self.shape = data, dtype, tuple(shape)
        self.nbytes = len(data)

    def write_to(self, handle: Any) -> None:
        """Write the bytes at ``handle``'s position."""
        handle.write(self.data)

    def little_bytes(self) -> bytes:
        return self.data

    def read(self) -> np.ndarray:
        import numpy as np

        values = np.frombuffer(self.data, dtype=self.dtype.little, count=math.prod(self.shape))
        return values.astype(self.dtype.name).reshape(self.shape)


#: Bytes copied at a time from one file to another.
COPY_CHUNK = 1 << 24


def copy_range(source: Any, target: Any, offset: int, size: int) -> None:
    """Write ``size`` bytes of the file ``source`` from ``offset`` at ``target``'s position,
    :data:`COPY_CHUNK` bytes at a time (``copy_file_range`` measured no faster for a
    checkpoint's 73 files); an :class:`OSError`, or :class:`NpyError` when ``source`` has
    fewer bytes."""
    target.flush()
    fd, out = source.fileno(), target.fileno()
    done = 0
    while done < size:
        chunk = os.pread(fd, min(COPY_CHUNK, size - done), offset + done)
        if not chunk:
            raise NpyError(f"ended after {done} of {size} bytes: it changed while it was read", "bad")
        view = memoryview(chunk)
        while view:
            view = view[os.write(out, view):]
        done += len(chunk)


def _open_for_reading(path: Path, session_file: bool) -> int:
    flags = os.O_RDONLY | os.O_NONBLOCK | (NOFOLLOW if session_file else 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise NpyError("does not exist", "missing") from None
    except IsADirectoryError:
        raise NpyError("is a folder, not a .npy file", "not-regular") from None
    except PermissionError:
        raise NpyError("cannot be read (permission denied)", "bad") from None
    except OSError as error:
        if session_file and error.errno == errno.ELOOP:
            raise NpyError("is a symbolic link, not a regular file inside the session (refused)", "not-regular") from None
        raise NpyError(f"cannot be opened ({error.strerror})") from None
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        os.close(fd)
        raise NpyError("is a folder, not a .npy file", "not-regular")
    if session_file and not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NpyError("is not a regular file (refused)", "not-regular")
    if stat.S_ISREG(info.st_mode):
        os.set_blocking(fd, True)
    return fd


def _read_from(
    handle: Any, limit: int | None, dtype: str | None, shape: tuple[int, ...] | None, mappable: bool,
    timeout: float | None,
) -> np.ndarray:
    import numpy as np

    fd = _regular_fd(handle)
    stream: Any = handle if fd is not None else _Stream(handle, stream_timeout() if timeout is None else timeout)
    header = read_header(stream)
    if dtype is not None or shape is not None:
        _check_expected(header, dtype, shape)
    left = None
    if fd is not None:
        _check_size(handle, header, exact=mappable)
    if limit is not None and header.size > limit:
        raise NpyError(
            f"holds {header.size:,} elements {header.shape}, more than the limit of {limit:,} "
            "(set KVCLI_MAX_ELEMENTS to raise it)", "limit",
        )
    if fd is None:
        left = _bytes_left(handle)
        if left is not None and left < header.nbytes:
            raise NpyError(f"is truncated: {left} of {header.nbytes} data bytes")
    if fd is not None:
        if mappable and header.nbytes >= MMAP_BYTES:
            mapped = np.memmap(handle, dtype=header.dtype, mode="r", offset=header.offset,
                               shape=header.shape, order="F" if header.fortran else "C")
            return np.asarray(mapped)
        data = _read_regular(handle, header.nbytes)
    else:
        # a stream whose length is known (a BytesIO, a .npz member of declared size) holds
        # the body already: read it into place; otherwise grow with what arrives
        data = _read_stream(stream, header.nbytes, known=left is not None)
    array: np.ndarray = np.frombuffer(data, dtype=header.dtype, count=header.size)
    array = array.reshape(header.shape[::-1]).transpose() if header.fortran else array.reshape(header.shape)
    if not array.dtype.isnative:
        array = array.astype(header.kind.name)
    return array


def _check_expected(header: Header, dtype: str | None, shape: tuple[int, ...] | None) -> None:
    if (dtype is not None and header.kind.name != dtype) or (shape is not None and header.shape != tuple(shape)):
        raise NpyError(
            f"holds {header.kind.name} {header.shape}, the manifest says {dtype} {tuple(shape or ())}", "mismatch"
        )


def _check_size(handle: Any, header: Header, exact: bool = True) -> None:
    size = os.fstat(handle.fileno()).st_size
    expected = header.offset + header.nbytes
    if size < expected or (exact and size != expected):
        if size < expected:
            raise NpyError(f"is truncated: {size - header.offset} of {header.nbytes} data bytes", "bad")
        raise NpyError(f"has {size} bytes, {expected} expected", "bad")


def _bytes_left(handle: Any) -> int | None:
    """Bytes after the position of a seekable in-memory stream, or of a stream that says
    (``bytes_left()``: a ``.npz`` member); None for pipes and FIFOs."""
    known = getattr(handle, "bytes_left", None)
    if callable(known):
        return int(known())
    try:
        if not handle.seekable():
            return None
        position = handle.tell()
        end = handle.seek(0, io.SEEK_END)
        handle.seek(position)
        return end - position
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None


def _regular_fd(handle: Any) -> int | None:
    """The descriptor of a regular file, or None for pipes, FIFOs, terminals and BytesIO."""
    try:
        fd = handle.fileno()
        return fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None


def _read_regular(handle: Any, size: int) -> bytearray:
    data = bytearray(size)
    view = memoryview(data)
    got = 0
    while got < size:
        n = handle.readinto(view[got:])
        if not n:
            raise NpyError(f"is truncated: {got} of {size} data bytes")
        got += n
    return data


def _read_stream(stream: "_Stream", size: int, known: bool = False) -> bytearray:
    """Grow with the data that actually arrives (a header may lie about the size), or, when
    the stream's length is ``known`` to cover ``size``, fill a buffer made once."""
    if known:
        data = bytearray(size)
        view = memoryview(data)
        got = 0
        while got < size:
            chunk = stream.read(min(size - got, KNOWN_CHUNK))
            if not chunk:
                raise NpyError(f"is truncated: {got} of {size} data bytes")
            view[got:got + len(chunk)] = chunk
            got += len(chunk)
        return data
    data = bytearray()
    while len(data) < size:
        chunk = stream.read(min(size - len(data), READ_CHUNK))
        if not chunk:
            raise NpyError(f"is truncated: {len(data)} of {size} data bytes")
        data += chunk
    return data


def _read_exactly(handle: Any, size: int, what: str) -> bytes:
    data = b""
    while len(data) < size:
        chunk = handle.read(size - len(data))
        if not chunk:
            if not data and what == "the header" and size == 8:
                raise NpyError("is empty, not a .npy file (save arrays with numpy.save)")
            raise NpyError(f"ends inside {what}: not a .npy file")
        data += chunk
    return data


class _Stream:
    """Reads a pipe, FIFO or terminal, waiting at most ``timeout`` s for each piece of data."""

    def __init__(self, handle: Any, timeout: float) -> None:
        self.handle = handle
        self.timeout = timeout
        try:
            self.fd: int | None = handle.fileno()
        except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
            self.fd = None  # an in-memory stream: never blocks
        if self.fd is not None and os.isatty(self.fd):
            raise NpyError("is a terminal, not a .npy stream: redirect a file into it (< w.npy) or pipe one in")

    def read(self, size: int) -> bytes:
        if self.fd is None:
            return self.handle.read(size)
        while True:
            ready, _, _ = select.select([self.fd], [], [], self.timeout)
            if not ready:
                raise NpyError(
                    f"sent no data for {self.timeout:g} s (a FIFO with no writer, or a stalled pipe); "
                    "start the writer first, or raise KVCLI_STREAM_TIMEOUT", "timeout",
                )
            try:
                return os.read(self.fd, size)
            except BlockingIOError:  # woken without data (another reader took it)
                continue


# ---------------------------------------------------------------------- .npz archives
#: Bytes a ``.npz`` member may hold beyond its data: the ``.npy`` header.
NPZ_MEMBER_SLACK = MAX_HEADER + 16


class NpzArchive:
    """A ``.npz`` file (a zip of ``.npy`` members, as ``numpy.savez`` writes) read with
    bounds, for files that may come from elsewhere (optimizer state, compression residuals).

    Only a regular file (or bytes) is opened; members must be stored or deflated, not
    encrypted, named ``*.npy`` and unique. :meth:`read` checks the size a member declares
    before anything is decompressed (zip output stops at that size), then its ``.npy``
    header before its body, so a zip bomb unpacks nothing. Problems are :class:`NpyError`.
    """

    def __init__(self, source: bytes | bytearray | Path) -> None:
        import zipfile

        if isinstance(source, (bytes, bytearray)):
            handle: Any = io.BytesIO(source)
        else:
            fd = _open_for_reading(Path(source), False)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise NpyError("is not a regular file (a device, FIFO or socket)", "not-regular")
            handle = os.fdopen(fd, "rb")
        self._handle = handle
        try:
            self._zip = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, UnicodeDecodeError, NotImplementedError) as error:
            handle.close()  # NotImplementedError: a damaged "needs zip version 6.4" field
            raise NpyError(f"is not a .npz archive ({_short(str(error))})") from None
        try:
            self.members = self._list()
        except BaseException:
            self.close()
            raise

    def _list(self) -> dict[str, Any]:
        import zipfile

        members: dict[str, Any] = {}
        for info in self._zip.infolist():
            shown = _short(info.filename)
            if info.flag_bits & 0x1:
                raise NpyError(f"has an encrypted member {shown}")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise NpyError(f"has a member {shown} packed with method {info.compress_type} (numpy uses 0 or 8)")
            if not info.filename.endswith(".npy"):
                raise NpyError(f"has a member {shown} that is not a .npy array")
            name = info.filename[: -len(".npy")]
            if name in members:
                raise NpyError(f"has the member {shown} twice")
            members[name] = info
        return members

    def read(self, name: str, limit: int) -> np.ndarray:
        """Member ``name`` (without ``.npy``), of at most ``limit`` elements: a member that
        declares more bytes than that allows is refused before it is unpacked (kind
        ``size``), one whose header claims more elements before its body is read (``limit``)."""
        import zipfile
        import zlib

        info = self.members[name]
        most = limit * WIDEST_ITEM + NPZ_MEMBER_SLACK
        if info.file_size > most:
            raise NpyError(
                f"unpacks to {info.file_size:,} bytes, more than the {most:,} that {limit:,} elements allow; "
                "refused before unpacking", "size",
            )
        try:
            with self._zip.open(info) as member:
                return read_array(_ReadOnly(member, info.file_size), limit=limit)
        except NpyError as error:
            if error.kind == "limit":
                raise NpyError(f"holds more than the {limit:,} elements allowed", "limit") from None
            raise
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError) as error:
            raise NpyError(f"cannot be unpacked ({_short(str(error))})") from None

    def close(self) -> None:
        self._zip.close()
        self._handle.close()  # ZipFile leaves a file object it was given open

    def __enter__(self) -> "NpzArchive":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ReadOnly:
    """A zip member as a plain stream that knows its declared size: the reader never seeks
    it to its end (which would unpack all of it to find the size)."""

    def __init__(self, handle: Any, size: int) -> None:
        self._handle = handle
        self._left = size

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._handle.read(size)
        self._left -= len(data)
        return data

    def bytes_left(self) -> int:
        return max(self._left, 0)


# ---------------------------------------------------------------------- writing
def write_file(path: Path, array: Any, overwrite: bool = False, sync: bool = True) -> None:
    """Write ``array`` as a ``.npy`` session file and fsync it (never pickled).

    ``array`` is a numpy array, or a body written by copying (anything with ``dtype``,
    ``shape`` and ``write_to(handle)``, e.g. a record of a ``.params`` file:
    :class:`kvcli.arrays.mxparams.Body`). ``overwrite`` rewrites an existing regular file of
    the same size in place (its blocks are reused); otherwise the file must not exist yet.
    Neither follows a symlink. ``sync=False`` leaves the fsync to the caller (who fsyncs a
    batch of files at once, see :func:`fsync_file`). If the write fails (a full disk, an I/O
    error) a new file is removed before the ``OSError`` propagates, so nothing half-written
    is left behind.
    """
    if overwrite:
        fd = os.open(path, os.O_WRONLY | NOFOLLOW)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise NpyError("is not a regular file (refused)", "not-regular")
    else:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, PRIVATE_FILE)
    try:
        with os.fdopen(fd, "wb") as handle:
            _write_array(handle, array)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
    except BaseException:
        if not overwrite:
            remove_quietly(path)
        raise


def fsync_file(path: Path) -> None:
    """fsync a file written with ``sync=False`` (never through a symlink)."""
    fd = os.open(path, os.O_RDONLY | NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_array(handle: Any, array: Any) -> None:
    """The header, then the buffer in one write (no copy for a C-ordered array). Not numpy's
    ``tofile``: its error on a full disk has no errno ("N requested and M written")."""
    if hasattr(array, "write_to"):  # a body copied from elsewhere (no numpy array has write_to)
        if array.dtype.name not in BY_NAME:
            raise NpyError(f"cannot hold dtype {array.dtype} (use one of {', '.join(DTYPES)})")
        handle.write(header_bytes(array.dtype.little, tuple(array.shape)))
        array.write_to(handle)
        return
    import numpy as np

    values: np.ndarray = np.asarray(array)
    if not values.flags.c_contiguous:  # not ascontiguousarray: it makes a 0-d value 1-d
        values = values.copy(order="C")
    if values.dtype.name not in BY_NAME:
        raise NpyError(f"cannot hold dtype {values.dtype} (use one of {', '.join(DTYPES)})")
    handle.write(header_bytes(values.dtype.str, values.shape))
    if values.size:
        handle.write(memoryview(values.reshape(-1)).cast("B"))  # type: ignore[arg-type]  # ndarray is a buffer


#: Bytes a ``.npy`` header (magic to the newline) is padded to a multiple of, as numpy pads it.
HEADER_ALIGN = 64


def header_bytes(descr: str, shape: tuple[int, ...]) -> bytes:
    """A version 1.0 ``.npy`` header of C-ordered values (``descr`` as ``"<f4"``), padded with
    spaces so the values start on a :data:`HEADER_ALIGN` boundary, as numpy's ``save`` does."""
    text = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {tuple(shape)!r}, }}".encode("latin1")
    length = len(text) + 1  # the newline
    length += -(len(MAGIC) + 4 + length) % HEADER_ALIGN
    return MAGIC + b"\x01\x00" + length.to_bytes(2, "little") + text.ljust(length - 1) + b"\n"


def remove_quietly(path: Path) -> None:
    """Remove ``path`` (a file or a symlink, never what it points to) if it is there."""
    try:
        os.unlink(path)
    except OSError:
        pass


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = [
    "BytesBody", "COPY_CHUNK", "FileBody", "Header", "NpyError", "NpzArchive", "check_file", "copy_range", "file_body",
    "fsync_file", "header_bytes", "impossible_shape", "read_array", "read_header", "write_file",
]
