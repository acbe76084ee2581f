"""Keep Ctrl-C out of the few steps that must not be cut in half.

A ``KeyboardInterrupt`` is raised between any two bytecodes of the main thread. Most of a
store operation may be interrupted safely — it has changed nothing yet — but a message half
written to a device's pipe, a reply half read, or a stored value half replaced would leave
the store wrong for every later call. :func:`deferred_interrupts` holds SIGINT back for such
a step and delivers it, to whatever handler was installed, as soon as the step is over.
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Iterator


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Run the body with SIGINT deferred; an interrupt that arrived is delivered after it.

    Signals only reach Python's main thread, so elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield  # no Python-level handler to stand in for (set by C code): leave it alone
        return
    received: list[FrameType | None] = []

    def remember(signum: int, frame: FrameType | None) -> None:
        received.append(frame)

    previous = signal.signal(signal.SIGINT, remember)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            _deliver(previous, received[0])


def _deliver(handler: object, frame: FrameType | None) -> None:
    """Hand a deferred SIGINT to the handler that was in place when it arrived."""
    if callable(handler):
        handler(signal.SIGINT, frame)  # default_int_handler raises KeyboardInterrupt here
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), signal.SIGINT)  # the default action: let it happen now
    # SIG_IGN: the interrupt was to be ignored anyway
