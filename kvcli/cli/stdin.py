"""A value given as ``-`` on the command line: a ``.npy`` on standard input, or the JSON that
``kvcli pull KEY --json`` prints (so ``kvcli pull w --json | kvcli init w2 -`` works).

The JSON is read back through the value language (its nested list is one of its forms) in
the dtype it names, so it obeys the same limits; everything else goes to
:func:`kvcli.values.parse_value` unchanged.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any, Optional

from kvcli.errors import ValueLanguageError

#: The first byte of JSON (an object or a list); a .npy starts with b"\x93NUMPY".
JSON_STARTS = (b"{", b"[")


def parse_cli_value(text: str, dtype: Optional[str] = None, default_dtype: Any = None,
                    stdin: Optional[IO[bytes]] = None) -> Any:
    """The array of one command-line value (see the module docs)."""
    from kvcli.values import DEFAULT_DTYPE, parse_value

    default = DEFAULT_DTYPE if default_dtype is None else default_dtype
    stream: Any = stdin if stdin is not None else sys.stdin.buffer
    if text == "-":
        pipe = Pipe.of(stream)
        if pipe is not None:
            if pipe.first() in JSON_STARTS:
                value, named = _read_json(pipe)
                return parse_value(json.dumps(value), dtype=dtype, default_dtype=named or default)
            stream = pipe  # the .npy reader gets the byte looked at, then the rest
    return parse_value(text, dtype=dtype, default_dtype=default, stdin=stream)


class Pipe:
    """Standard input read in pieces, each within ``KVCLI_STREAM_TIMEOUT`` seconds (as the
    .npy reader reads it), after looking at its first byte."""

    def __init__(self, fd: int) -> None:
        from kvcli import config

        self.fd = fd
        self.timeout = float(config.get(config.STREAM_TIMEOUT))
        self.head = b""

    @classmethod
    def of(cls, stream: Any) -> Optional["Pipe"]:
        """A :class:`Pipe` over ``stream``'s descriptor; None for a terminal (the .npy reader
        says what to do) or a stream without one."""
        import os

        try:
            fd = stream.fileno()
        except (OSError, AttributeError, ValueError):
            return None
        return None if os.isatty(fd) else cls(fd)

    def first(self) -> bytes:
        if not self.head:
            self.head = self._read(1)
        return self.head[:1]

    def read(self, size: int = -1) -> bytes:
        if self.head:
            cut = len(self.head) if size < 0 else size
            data, self.head = self.head[:cut], self.head[cut:]
            return data
        return self._read(size if size >= 0 else 1 << 16)

    def _read(self, size: int) -> bytes:
        import os
        import select

        ready, _, _ = select.select([self.fd], [], [], self.timeout)
        if not ready:
            raise ValueLanguageError(f"standard input sent no data for {self.timeout:g} s (a stalled pipe or a "
                                     "FIFO with no writer); start the writer first, or raise KVCLI_STREAM_TIMEOUT")
        return os.read(self.fd, size)


def _read_json(pipe: Pipe) -> tuple[Any, Optional[str]]:
    """The nested list and dtype of ``pull --json``'s object (or a bare nested list)."""
    from kvcli.values import MAX_TEXT

    chunks, size = [], 0
    while size <= MAX_TEXT:
        chunk = pipe.read(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    advice = "pipe .npy instead: kvcli pull KEY -o - | kvcli init KEY -"
    if len(data) > MAX_TEXT:
        raise ValueLanguageError(f"the JSON on standard input is over {MAX_TEXT:,} bytes: {advice}")
    try:
        payload = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueLanguageError(f"standard input is not JSON ({error}) nor .npy: {advice}") from None
    if isinstance(payload, list) and payload and all(isinstance(p, dict) for p in payload):
        raise ValueLanguageError(f"standard input holds {len(payload)} keys' values (kvcli pull K1,K2 --json): "
                                 "pull one key")
    if isinstance(payload, dict):
        if "value" not in payload:
            raise ValueLanguageError("the JSON on standard input has no \"value\": give what kvcli pull KEY --json "
                                     "prints, or a nested list")
        named = payload.get("dtype")
        return payload["value"], named if isinstance(named, str) else None
    return payload, None
