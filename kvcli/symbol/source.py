"""Read the bytes of a symbol JSON file or of standard input, bounded in size and in waiting.

A regular file is read whole (up to :data:`MAX_BYTES`). A pipe, FIFO or standard input is
read in chunks, each wait bounded by ``KVCLI_STREAM_TIMEOUT`` seconds, so a FIFO with no
writer or a stalled ``kvcli viz -`` ends in one line instead of hanging. Devices
(``/dev/zero``), terminals and streams whose first byte cannot start JSON are refused at
once, before anything is buffered.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from pathlib import Path
from typing import Union

from kvcli import config
from kvcli.errors import SymbolError

#: Largest symbol file read (bytes): far above any real model (ResNet-152: 300 KB).
MAX_BYTES = 1 << 30
_CHUNK = 1 << 20
_HINT = "give the path of an MXNet '*-symbol.json' file"


def read_source(path: Union[str, "os.PathLike[str]"]) -> bytes:
    """The bytes of ``path`` (``"-"``: standard input); any problem is one :class:`SymbolError`."""
    if str(path) == "-":
        return _read_fd(sys.stdin.fileno(), "<stdin>", close=False)
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO's open must not wait for a writer
    except FileNotFoundError:
        raise SymbolError(f"{p}: no such file; {_HINT}") from None
    except IsADirectoryError:
        raise SymbolError(f"{p}: is a folder; {_HINT}") from None
    except OSError as error:
        raise SymbolError(f"{p}: cannot read ({error.strerror})") from None
    return _read_fd(fd, str(p), close=True)


def _read_fd(fd: int, name: str, close: bool) -> bytes:
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise SymbolError(f"{name}: is a folder; {_HINT}")
        if os.isatty(fd):
            raise SymbolError(f"{name}: is a terminal; pipe a file in (kvcli viz - < model-symbol.json) or {_HINT}")
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            raise SymbolError(f"{name}: is a device, not a file; {_HINT}")
        if stat.S_ISREG(mode):
            size = os.fstat(fd).st_size
            if size > MAX_BYTES:
                raise SymbolError(f"{name}: {size:,} bytes is more than a symbol file can be ({MAX_BYTES:,}); {_HINT}")
            os.set_blocking(fd, True)
            return _read_all(fd, name)
        return _read_stream(fd, name, float(config.get(config.STREAM_TIMEOUT)))
    except OSError as error:
        raise SymbolError(f"{name}: cannot read ({error.strerror})") from None
    finally:
        if close:
            os.close(fd)


def _read_all(fd: int, name: str) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b"".join(parts)
        total += len(chunk)
        if total > MAX_BYTES:
            raise SymbolError(f"{name}: more than {MAX_BYTES:,} bytes; {_HINT}")
        parts.append(chunk)


def _read_stream(fd: int, name: str, timeout: float) -> bytes:
    """Chunks as they arrive, at most ``timeout`` s of silence each; refused early when the
    first non-blank byte cannot begin a JSON object."""
    parts: list[bytes] = []
    total = 0
    started = False
    while True:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            raise SymbolError(f"{name}: sent no data for {timeout:g} s (a FIFO with no writer, or a stalled pipe); "
                              "start the writer first, or raise KVCLI_STREAM_TIMEOUT")
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:  # woken without data
            continue
        if not chunk:
            return b"".join(parts)
        if not started:
            text = chunk.lstrip(b" \t\r\n\xef\xbb\xbf")
            if text:
                started = True
                if not text.startswith(b"{"):
                    raise SymbolError(f"{name}: does not start with '{{', so it is not MXNet symbol JSON; {_HINT}")
        total += len(chunk)
        if total > MAX_BYTES:
            raise SymbolError(f"{name}: more than {MAX_BYTES:,} bytes; {_HINT}")
        parts.append(chunk)
