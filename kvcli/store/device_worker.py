"""The program each device runs: ``python -m kvcli.store.device_worker READ_FD WRITE_FD ID``.

A device attaches to the store's shared-memory arrays by name and sums its slice of a
multi-device push. Messages over the pipe are small tuples; arrays never cross it. When the
store's process goes away the pipe closes and the device exits, so none is ever orphaned.
"""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from kvcli.store.local import sum_into
from kvcli.store.shm import attach


def serve(inbox: Connection, outbox: Connection) -> None:
    """Answer requests until told to stop or until the store's end of the pipe closes."""
    mapped: dict[str, Any] = {}

    def array(desc: tuple[str, tuple[int, ...], str]) -> np.ndarray:
        name = desc[0]
        if name not in mapped:
            mapped[name] = attach(*desc)
        return mapped[name][1]

    outbox.send(("ready",))
    while True:
        try:
            message = inbox.recv()
        except (EOFError, OSError):
            return
        kind = message[0]
        if kind == "stop":
            outbox.send(("stopped",))
            return
        try:
            if kind == "reduce":
                _, out_desc, slot_descs, start, stop, released = message
                _release(mapped, released)
                out = array(out_desc).reshape(-1)[start:stop]
                sum_into(out, [array(d).reshape(-1)[start:stop] for d in slot_descs])
                outbox.send(("ok",))
            elif kind == "release":
                _release(mapped, message[1])
                outbox.send(("ok",))
            else:
                outbox.send(("error", f"unknown request {kind!r}"))
        except Exception as error:  # report to the store; the device keeps serving
            outbox.send(("error", f"{type(error).__name__}: {error}"))


def _release(mapped: dict[str, Any], names: list[str]) -> None:
    for name in names:
        entry = mapped.pop(name, None)
        if entry is not None:
            segment, view = entry
            del view
            try:
                segment.close()
            except BufferError:
                pass


def main(argv: list[str]) -> None:
    read_fd, write_fd = int(argv[1]), int(argv[2])
    serve(Connection(read_fd, writable=False), Connection(write_fd, readable=False))


if __name__ == "__main__":
    main(sys.argv)
