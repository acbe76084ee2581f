"""The program each device runs: ``python -m kvcli.store.device_worker READ_FD WRITE_FD ID``.

A device attaches to the store's shared-memory arrays by name and sums its slice of a
multi-device push. Messages over the pipe are small tuples; arrays never cross it. Every
request carries a sequence number that its reply repeats, so a store interrupted while
waiting can tell a late reply from the one it waits for. When the store's process goes away
the pipe closes and the device exits, so none is ever orphaned.

A device runs in a session of its own (the store starts it so): a Ctrl-C in the terminal
interrupts the store's process, which decides what to do, and never kills the devices.
"""

from __future__ import annotations

import signal
import sys
from multiprocessing.connection import Connection

import numpy as np

from kvcli.store.local import sum_into
from kvcli.store.shm import attach

#: The sequence number of the greeting a device sends once it is ready.
READY = 0


def serve(inbox: Connection, outbox: Connection) -> None:
    """Answer requests until told to stop or until the store's end of the pipe closes."""
    mapped: dict[str, np.ndarray] = {}

    def array(desc: tuple[str, tuple[int, ...], str]) -> np.ndarray:
        name = desc[0]
        if name not in mapped:
            mapped[name] = attach(*desc)
        return mapped[name]

    outbox.send((READY, "ok", None))
    while True:
        try:
            message = inbox.recv()
        except (EOFError, OSError):
            return
        seq, kind = message[0], message[1]
        if kind == "stop":
            outbox.send((seq, "ok", None))
            return
        try:
            if kind == "reduce":
                out_desc, slot_descs, start, stop, released = message[2:]
                _release(mapped, released)
                out = array(out_desc).reshape(-1)[start:stop]
                sum_into(out, [array(d).reshape(-1)[start:stop] for d in slot_descs])
                del out  # hold no view past the request: a released segment must unmap
            elif kind == "release":
                _release(mapped, message[2])
            else:
                raise ValueError(f"unknown request {kind!r}")
            outbox.send((seq, "ok", None))
        except Exception as error:  # report to the store; the device keeps serving
            outbox.send((seq, "error", f"{type(error).__name__}: {error}"))


def _release(mapped: dict[str, np.ndarray], names: list[str]) -> None:
    """Forget segments the store freed; each unmaps with its last view."""
    for name in names:
        mapped.pop(name, None)


def main(argv: list[str]) -> None:
    # Belt and braces beside the new session: an interrupt is the store's business.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    read_fd, write_fd = int(argv[1]), int(argv[2])
    serve(Connection(read_fd, writable=False), Connection(write_fd, readable=False))


if __name__ == "__main__":
    main(sys.argv)
