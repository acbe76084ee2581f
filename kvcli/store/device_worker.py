"""The program each device runs: ``python -m kvcli.store.device_worker READ_FD WRITE_FD ID``,
or ``python -m kvcli.store.device_worker --listen SOCKET ID IDLE`` for a warm device.

A device attaches to the store's shared-memory arrays by name and sums its slice of a
multi-device push. Messages over the pipe are small tuples; arrays never cross it. Every
request carries a sequence number that its reply repeats, so a store interrupted while
waiting can tell a late reply from the one it waits for. When the store's process goes away
the pipe closes and the device exits, so none is ever orphaned.

A device runs in a session of its own (the store starts it so): a Ctrl-C in the terminal
interrupts the store's process, which decides what to do, and never kills the devices.

A *warm* device (the ``device`` store of a session, see :class:`kvcli.store.device.DeviceStore`'s
``warm_dir``) outlives the command that started it: it listens on a Unix socket in the
session's folder (mode 0600, in a 0700 folder: only its user can connect), serves one store
at a time with the same messages, forgets every segment when that store goes, and exits
after ``IDLE`` seconds without one, removing its socket.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from multiprocessing.connection import Connection

import numpy as np

from kvcli.store.local import sum_into
from kvcli.store.shm import attach

#: The sequence number of the greeting a device sends once it is ready.
READY = 0


def serve(inbox: Connection, outbox: Connection) -> bool:
    """Answer requests until told to stop (returns True) or until the store's end of the
    pipe closes (returns False). The greeting carries this process's id."""
    mapped: dict[str, np.ndarray] = {}

    def array(desc: tuple[str, tuple[int, ...], str]) -> np.ndarray:
        name = desc[0]
        if name not in mapped:
            mapped[name] = attach(*desc)
        return mapped[name]

    outbox.send((READY, "ok", os.getpid()))
    while True:
        try:
            message = inbox.recv()
        except (EOFError, OSError):
            return False
        seq, kind = message[0], message[1]
        if kind == "stop":
            outbox.send((seq, "ok", None))
            return True
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


def listen(path: str, idle: float) -> None:
    """A warm device: serve the stores that connect to ``path``, one at a time, until
    ``idle`` seconds pass with none (or one says stop)."""
    if os.fork() > 0:  # the starter reaps this parent at once; the device is adopted by init
        os._exit(0)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(path)  # a stale socket of a device that died
    except FileNotFoundError:
        pass
    old_mask = os.umask(0o177)
    try:
        server.bind(path)
    finally:
        os.umask(old_mask)
    mine = os.stat(path).st_ino
    server.listen(4)
    server.settimeout(idle if idle > 0 else None)
    try:
        while True:
            try:
                client, _ = server.accept()
            except socket.timeout:
                return
            client.settimeout(None)
            connection = Connection(client.detach())
            try:
                stopped = serve(connection, connection)
            except (EOFError, OSError):
                stopped = False
            finally:
                connection.close()
            if stopped or idle <= 0:
                return
    finally:
        server.close()
        try:
            if os.stat(path).st_ino == mine:  # a newer device may have taken the name
                os.unlink(path)
        except FileNotFoundError:
            pass


def main(argv: list[str]) -> None:
    # Belt and braces beside the new session: an interrupt is the store's business.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if argv[1] == "--listen":
        listen(argv[2], float(argv[4]))
        return
    read_fd, write_fd = int(argv[1]), int(argv[2])
    serve(Connection(read_fd, writable=False), Connection(write_fd, readable=False))


if __name__ == "__main__":
    main(sys.argv)
