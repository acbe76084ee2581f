"""The program each device runs: ``python -m kvcli.store.device.worker READ_FD WRITE_FD ID``,
or ``python -m kvcli.store.device.worker --listen SOCKET ID IDLE`` for a warm device.

A device attaches to the store's shared-memory arrays by name and sums its slice of a
multi-device push. Messages over the pipe are small tuples; arrays never cross it. Every
request carries a sequence number that its reply repeats, so a store interrupted while
waiting can tell a late reply from the one it waits for. When the store's process goes away
the pipe closes and the device exits, so none is ever orphaned.

A device runs in a session of its own (the store starts it so): a Ctrl-C in the terminal
interrupts the store's process, which decides what to do, and never kills the devices.

A *warm* device (the ``device`` store of a session, see :class:`kvcli.store.device.store.DeviceBackend`'s
``warm_dir``) outlives the command that started it: it listens on a Unix socket in a private
folder of the user's runtime folder (mode 0600, in a 0700 folder of this user: see
:func:`kvcli.store.device.store.warm_folder`), serves one store at a time with the same messages,
forgets every segment when that store goes, and exits after ``IDLE`` seconds without one,
removing its socket. It serves only a peer of its own user (``SO_PEERCRED``), and the store
checks the device's user the same way.

Messages are JSON arrays (:func:`send`, :func:`receive`): numbers, strings and lists only,
so no message can carry code, whoever wrote it — nothing on these channels is unpickled.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import sys
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from kvcli.errors import ProtocolError
from kvcli.arrays.summation import sum_into
from kvcli.store.device.shm import attach

#: The sequence number of the greeting a device sends once it is ready.
READY = 0
#: Longest message either side reads (a push from 1024 devices with a long release list
#: is well under a MiB); a longer one is a broken peer.
MAX_MESSAGE = 1 << 24
#: What a segment name in a request may be (kvcli's own segments, see :mod:`kvcli.store.device.shm`).
_SEGMENT_RE = re.compile(r"kvcli_[A-Za-z0-9_]{1,200}")


_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
_decode = json.JSONDecoder().decode


def encode(items: Any) -> str:
    """The JSON text of a sequence's items without the brackets, to splice into a message
    (a store encodes what its devices share once per push, not once per device)."""
    return _encode(list(items))[1:-1]


def send(connection: Connection, message: Any) -> None:
    """Send one message (a list or tuple of numbers, strings, None and such lists) as JSON."""
    connection.send_bytes(_encode(message).encode())


def send_encoded(connection: Connection, seq: int, items: str) -> None:
    """Send message ``[seq, <items>]``, ``items`` from :func:`encode`."""
    connection.send_bytes(f"[{int(seq)},{items}]".encode())


def receive(connection: Connection) -> list[Any]:
    """Read one message; never unpickles (a JSON array or :class:`ProtocolError`).

    Raises:
        EOFError / OSError: the peer closed the channel or sent more than MAX_MESSAGE bytes.
    """
    data = connection.recv_bytes(MAX_MESSAGE)
    try:
        message = _decode(data.decode())
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise ProtocolError("a message is not valid JSON") from None
    if not isinstance(message, list) or len(message) < 2 or not isinstance(message[0], int):
        raise ProtocolError("a message is not a numbered JSON array")
    return message


def peer_user(sock: socket.socket) -> tuple[int, int] | None:
    """The process id and user id at the other end of a connected Unix socket (the kernel's
    ``SO_PEERCRED``), or None where the system does not tell (the 0700 folder of this user
    that holds the sockets is then what keeps other users out)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:  # pragma: no cover - not Linux
        return None
    pid, uid, _gid = struct.unpack("iII", sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("iII")))
    return pid, uid


def _descriptor(desc: Any) -> tuple[str, tuple[int, ...], str]:
    """A checked segment descriptor ``[name, shape, dtype]`` of a request."""
    if not (isinstance(desc, list) and len(desc) == 3 and isinstance(desc[0], str) and _SEGMENT_RE.fullmatch(desc[0])
            and isinstance(desc[1], list) and all(isinstance(d, int) and d >= 0 for d in desc[1])
            and isinstance(desc[2], str)):
        raise ProtocolError(f"bad segment descriptor {str(desc)[:80]}")
    dtype = np.dtype(desc[2])
    if dtype.hasobject:
        raise ProtocolError(f"segment dtype {desc[2]!r} holds objects")
    return desc[0], tuple(desc[1]), dtype.str


def serve(inbox: Connection, outbox: Connection) -> bool:
    """Answer requests until told to stop (returns True) or until the store's end of the
    channel closes or breaks the protocol (returns False). The greeting carries this
    process's id."""
    mapped: dict[str, np.ndarray] = {}

    def array(raw: Any) -> np.ndarray:
        found = mapped.get(raw[0]) if isinstance(raw, list) and raw and isinstance(raw[0], str) else None
        if found is not None:  # a segment's name is never reused: checked when it was attached
            return found
        desc = _descriptor(raw)
        mapped[desc[0]] = attach(*desc)
        return mapped[desc[0]]

    send(outbox, [READY, "ok", os.getpid()])
    while True:
        try:
            message = receive(inbox)
        except (EOFError, OSError, ProtocolError):
            return False
        seq, kind = message[0], message[1]
        if kind == "stop":
            send(outbox, [seq, "ok", None])
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
                raise ValueError(f"unknown request {str(kind)[:40]!r}")
            outbox.send_bytes(b'[%d,"ok",null]' % seq)  # the same JSON as send(), without its cost
        except Exception as error:  # report to the store; the device keeps serving
            send(outbox, [seq, "error", f"{type(error).__name__}: {error}"])


def _release(mapped: dict[str, np.ndarray], names: Any) -> None:
    """Forget segments the store freed; each unmaps with its last view."""
    if not isinstance(names, list):
        raise ProtocolError("a release list is not a list")
    for name in names:
        if isinstance(name, str):
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
            peer = peer_user(client)
            if peer is not None and peer[1] != os.geteuid():  # another user: not a word to them
                client.close()
                continue
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
