"""Run graphviz's ``dot`` safely: bounded in time, interruptible, never a half-written file.

``dot`` writes to a pipe and the picture is written (atomically) only when it succeeds, so
Ctrl-C, a timeout or a crash leave no partial picture behind.
The library draws nothing on the terminal: a caller that shows progress passes a
:data:`Progress` (the CLI passes its one spinner, :class:`kvcli.cli.output.status`).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
from pathlib import Path
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, ContextManager, Iterator, Optional

from kvcli.errors import LayoutTimeoutError, SymbolError
from kvcli.osutil import PLAIN_FILE, atomic_write

#: What shows that ``dot`` is working: called with a one-line description (``laying out
#: m.svg with dot``), it returns a context manager that shows it for as long as the block
#: runs (the CLI's :class:`kvcli.cli.output.status`).
Progress = Callable[[str], ContextManager[Any]]

#: Cost (drawn nodes + edges) above which ``dot`` with default settings takes too long.
COST_LIMIT = 1500
#: Widest rank above which crossing minimisation explodes (the OCR LSTM's 30 parallel steps).
WIDTH_LIMIT = 40
#: After folding, graphs bigger than this are laid out with bounded settings too.
BOUND_NODES = 1000
#: Default --layout-timeout (seconds).
DEFAULT_TIMEOUT = 60.0
#: `kvcli viz` tries the exact layout of a graph the estimate calls costly for this many
#: seconds before folding it: DenseNet-201 (709 boxes, 1 s of CPU) is then drawn exactly,
#: the OCR LSTM (793 boxes, over a minute) folded.
TRIAL_SECONDS = 5.0
#: Above this many boxes the exact layout is not tried (hundreds of seconds at least).
TRIAL_MAX_BOXES = 4000
#: Nor when boxes x widest rank is above this: crossing minimisation over wide ranks is what
#: takes dot minutes (measured: the OCR LSTM, 793 x 31 = 24,583, over 60 s; DenseNet-201,
#: 709 x 1, 1 s of CPU; the char-LSTM, 6,198 x 264, hours).
TRIAL_MAX_WIDTH_COST = 20_000


@contextmanager
def _handling(names: tuple[str, ...], handler: Any) -> Iterator[dict[int, Any]]:
    """Within the block, the signals ``names`` (those this platform has) go to ``handler``;
    the previous handlers come back after it. Yields the previous handlers by signal.

    The one place the signal handlers of a layout are installed. Only the main thread can
    install them: elsewhere the block runs unchanged (and yields ``{}``).
    """
    if threading.current_thread() is not threading.main_thread():
        yield {}
        return
    wanted = [getattr(signal, name) for name in names if hasattr(signal, name)]
    previous = {sig: signal.signal(sig, handler) for sig in wanted}
    try:
        yield previous
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise ``KeyboardInterrupt`` like Ctrl-C does.

    Their default action ends Python at once: ``dot`` would run on as an orphan (and a
    picture being written leave its temporary file). As an exception they go through the
    same clean-up as Ctrl-C (:func:`run_dot` stops ``dot``; ``atomic_write`` removes its
    temporary file). Only the main
    thread can install handlers; elsewhere the block runs unchanged. Previous handlers
    come back after the block.
    """

    def interrupt(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    with _handling(("SIGTERM", "SIGHUP"), interrupt):
        yield


@contextmanager
def _held_interrupts() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP arriving inside the block act when it ends.

    Starting ``dot`` is the one moment an interrupt could leave it running: the child
    exists before ``Popen`` returns it. Held until then, the interrupt finds the process
    known and stops it. (Main thread only; elsewhere the block runs unchanged.)
    """
    pending: list[int] = []

    def hold(signum: int, _frame: Any) -> None:
        pending.append(signum)

    previous: dict[int, Any] = {}
    try:
        with _handling(("SIGINT", "SIGTERM", "SIGHUP"), hold) as previous:
            yield
    finally:  # the previous handlers are back: the first held signal goes to its own
        if pending:
            handler = previous[pending[0]]
            if callable(handler):
                handler(pending[0], None)  # raises KeyboardInterrupt, as it would have
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), pending[0])


def too_costly(nodes: int, edges: int, width: int) -> bool:
    """Whether the exact layout of a graph this size would take ``dot`` more than seconds."""
    return nodes + edges > COST_LIMIT or width > WIDTH_LIMIT


_SCALED = re.compile(r"too large for cairo-renderer bitmaps\. Scaling by ([0-9.]+)")


def scaled_note(stderr: str, name: str) -> Optional[str]:
    """The one-line note for a bitmap graphviz had to shrink (cairo's 32,767-pixel limit), if any."""
    m = _SCALED.search(stderr)
    if m is None:
        return None
    return (f"{name}: graphviz shrank the picture to {float(m.group(1)) * 100:.0f}% (bitmaps are limited to "
            "32,767 pixels a side); .svg, .pdf or .html keep it full size")


def run_dot(program: str, source: str, fmt: str, target: Optional[Path],
            timeout: Optional[float] = None, progress: Optional[Progress] = None,
            notes: Optional[list[str]] = None) -> Optional[bytes]:
    """Lay out ``source`` with ``dot -T fmt``; write to ``target`` (atomically) or return bytes.

    ``dot`` writes to a pipe; the picture is written to ``target`` only when ``dot`` has
    succeeded, through :func:`kvcli.osutil.atomic_write` (a plain file's mode), so a timeout,
    Ctrl-C or a failure leaves nothing behind. Raises :class:`SymbolError` when ``dot``
    fails or exceeds ``timeout`` seconds; re-raises ``KeyboardInterrupt`` after stopping
    ``dot``. A bitmap that graphviz had to shrink adds a note to ``notes`` (see
    :func:`scaled_note`). ``progress`` shows that ``dot`` is working (see :data:`Progress`;
    None: nothing shown).
    """
    proc: "Optional[subprocess.Popen[bytes]]" = None
    try:  # an interrupt anywhere stops dot
        with _held_interrupts():
            proc = subprocess.Popen([program, f"-T{fmt}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
        what = f"laying out {target.name if target else 'the graph'} with dot"
        with progress(what) if progress is not None else nullcontext():
            out, err = proc.communicate(source.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        problem = f"{target or 'output'}: graphviz took longer than {timeout:g} s"
        raise LayoutTimeoutError(f"{problem}; draw less of the graph or allow more time", problem=problem,
                                 remedy="draw-less", limit="layout_timeout") from None
    except BaseException:  # KeyboardInterrupt (Ctrl-C, SIGTERM, SIGHUP) included
        _kill(proc)
        raise
    if proc.returncode != 0:
        lines = [line for line in err.decode("utf-8", "replace").splitlines()
                 if not line.startswith("Warning:")]
        raise SymbolError(f"{target or 'output'}: graphviz 'dot' failed: {lines[0] if lines else proc.returncode}")
    note = scaled_note(err.decode("utf-8", "replace"), target.name if target else "output")
    if note is not None and notes is not None:
        notes.append(note)
    if target is not None:
        write_output(target, out)
        return None
    return out


def output_problem(path: Path) -> Optional[str]:
    """Why ``path`` cannot be written as an output, found without writing anything (``None``:
    it looks writable; a place only the write itself finds bad, as ``/proc``, passes)."""
    # os.path's tests: an unreadable place answers False, never raises
    parent = path.parent
    while not os.path.lexists(parent) and parent != parent.parent:
        parent = parent.parent  # the folders to make: the nearest one that exists decides
    if os.path.lexists(parent) and not os.path.isdir(parent):
        return f"{parent} is not a folder"
    if os.path.isdir(path):
        return "it is a folder"
    if os.path.isdir(parent) and not os.access(parent, os.W_OK | os.X_OK):
        return f"the folder {parent} is not writable"
    return None


def write_output(path: Path, data: bytes) -> None:
    """Write a picture or page the user named: its folders made if missing, the file whole or
    not at all (atomic, a plain file's mode). A place that cannot be written is one
    :class:`SymbolError` line, never a traceback."""
    problem = output_problem(path)
    if problem is not None:
        raise SymbolError(f"cannot write {path}: {problem}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, mode=PLAIN_FILE, sync=False)
    except OSError as error:
        raise SymbolError(f"cannot write {path}: {error.strerror or error}") from None


def _kill(proc: "Optional[subprocess.Popen[bytes]]") -> None:
    if proc is not None:
        proc.kill()
        proc.wait()
