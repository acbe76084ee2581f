"""Printing for the CLI: rich for people, JSON for scripts, one-line errors.

rich is imported lazily so that commands which print plain text start fast.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn, Optional, Sequence

from kvcli.errors import KVCliError, UsageError
from kvcli.errors import StdoutClosed as StdoutClosed  # raised where stdout is written, caught by the front ends

EXIT_OK = 0
#: the error classes carry their exit codes (kvcli.cli.failures maps an error to its code)
EXIT_USER_ERROR = KVCliError.exit_code
EXIT_USAGE_ERROR = UsageError.exit_code


class PipeStdout:
    """``sys.stdout`` while it is a pipe or file: a write or flush that finds the reader gone
    raises :class:`StdoutClosed` rather than ``BrokenPipeError``. rich's consoles (kvcli's
    and typer's help) answer a ``BrokenPipeError`` with ``SystemExit(1)`` before kvcli's
    handler sees it, so ``kvcli summary M | head`` failed at random under ``pipefail``; this
    way every writer's closed pipe reaches the front end, which ends with exit 0.
    Everything else is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self.stream.write(text))
        except BrokenPipeError:
            raise StdoutClosed from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise StdoutClosed from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def watch_stdout_pipe() -> None:
    """Put :class:`PipeStdout` around ``sys.stdout`` when it is not a terminal (a terminal
    has no reader to leave; prompt_toolkit gets the real stream there)."""
    stream = sys.stdout
    if stream is not None and not isinstance(stream, PipeStdout) and not stream.isatty():
        sys.stdout = PipeStdout(stream)


def silence_stdout() -> None:
    """After the reader left: point file descriptor 1 at /dev/null, so the interpreter's
    last flush of what is still buffered has nowhere to fail (Python's advice for SIGPIPE)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
        os.close(devnull)
    except (OSError, ValueError):
        pass


def stdout_console() -> Any:
    """The rich Console for normal output (created on first use)."""
    global _stdout_console
    if _stdout_console is None:
        from rich.console import Console

        _stdout_console = Console(highlight=False, soft_wrap=True)
    return _stdout_console


def stderr_console() -> Any:
    """The rich Console for errors and notes (created on first use)."""
    global _stderr_console
    if _stderr_console is None:
        from rich.console import Console

        _stderr_console = Console(stderr=True, highlight=False, soft_wrap=True)
    return _stderr_console


_stdout_console: Any = None
_stderr_console: Any = None


def print_json(payload: Any) -> None:
    """Write ``payload`` as one line of JSON to stdout (for scripts and ``jq``)."""
    # allow_nan=False: NaN/Infinity are not JSON; values reach here through json_value (null)
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, allow_nan=False, default=_json_default) + "\n")
    sys.stdout.flush()


def _json_default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.ndarray):
        return json_value(value)
    if isinstance(value, np.generic):
        return json_value(np.asarray(value))
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def error_line(message: str) -> str:
    """The one-line form of an error message (newlines folded)."""
    return " ".join(str(message).split())


EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a POSIX shell reports a command ended by Ctrl-C


def print_error(message: str, hint: Optional[str] = None, as_json: bool = False) -> None:
    """Print ``error: message: hint`` in red on stderr as one line; with ``as_json`` the line
    is ``{"error": message, "hint": hint}``."""
    if as_json:
        sys.stderr.write(json.dumps({"error": error_line(message), "hint": hint}, ensure_ascii=False) + "\n")
        sys.stderr.flush()
        return
    from rich.markup import escape

    text = error_line(message) + (f": {hint}" if hint else "")
    stderr_console().print(f"[bold red]error:[/] {escape(text)}")


# ---------------------------------------------------------------------- advice per front end
#: ``where``: "cli" (one-shot commands: `kvcli reset`) or "shell" (inside kvcli shell: `reset`).
def command_text(words: str, where: str, scope: Sequence[str] = ()) -> str:
    """How a user types command ``words`` here: ```kvcli init K V``` or ```init K V```;
    ``scope`` (``-s exp1 --home DIR``, as typed) goes first, so the advice acts on the
    session and home the user named."""
    import shlex

    typed = "".join(shlex.quote(word) + " " for word in scope)
    return f"`{typed}{words}`" if where == "shell" else f"`kvcli {typed}{words}`"


def _home_of(scope: Sequence[str]) -> list[str]:
    """The ``--home`` part of a :func:`kvcli.cli.core.typed_scope` (each option there is one ``--x=V`` word
    or a flag and its value)."""
    found: list[str] = []
    index = 0
    while index < len(scope):
        word = scope[index]
        pair = "=" not in word
        if word.startswith("--home"):
            found += scope[index:index + 2] if pair else [word]
        index += 2 if pair else 1
    return found


def hint_for(error: BaseException, where: str = "cli", scope: Sequence[str] = ()) -> Optional[str]:
    """The advice for ``error`` in this front end, from its class and fields (None: the
    message says it all). Library messages speak Python; the words to type live here.
    ``scope``: the session and home options typed (:func:`kvcli.cli.core.typed_scope`), kept in
    the advice."""
    fields: dict[str, Any] = getattr(error, "fields", None) or {}
    remedy = fields.get("remedy")
    if remedy == "reset":
        return (f"restore the file, or run {command_text('reset', where, scope)} to start the session over "
                "(this deletes its keys)")
    if remedy == "reset-type":
        options = fields.get("options") or {}
        flags = "".join(
            f" {flag_for(name)} {value}"
            for name, value in options.items()
        )
        kind = _type_taking(fields.get("store_type"), options)
        words = f"reset --type {kind}{flags}"
        change = f"run {command_text(words, where, scope)} (this deletes its keys)"
        if kind != fields.get("store_type"):  # `--num-devices 4` on a local session: it takes none
            given = ", ".join(flag_for(name) for name in options)
            return f"leave out {given} (a {fields.get('store_type')} store takes none), or to make it a {kind} store, {change}"
        return f"to change it, {change}"
    if remedy == "init":
        words = f"init {fields.get('key')} VALUE"
        return f"run {command_text(words, where, scope)} first"
    if remedy == "one-kind":
        return f"use one kind of key per session, or {command_text('reset', where, scope)}"
    if remedy == "set-updater":
        return f"choose another with {command_text('set-updater SPEC', where, scope)}"
    if remedy == "missing-session":
        words = f"--session {fields.get('session')} init KEY VALUE"
        return f"pick one with --session NAME, or create it with {command_text(words, where, _home_of(scope))}"
    if remedy == "did-you-mean":
        return f"did you mean {command_text(str(fields.get('words')), where, scope)}?"
    if remedy == "confirm-ray-address":
        return f"pass --ray-address {fields.get('address')}, or set KVCLI_RAY_ADDRESS"
    if remedy == "input-shapes":
        return "give the input shapes with --shape NAME=D1,D2,... (e.g. --shape data=1,3,224,224)"
    if remedy == "draw-less":  # a picture too big or too slow for graphviz
        ways = [] if fields.get("folded") else ["draw part of it (--focus NODE, --collapse PATTERN, --depth N)"]
        ways += ["write a .dot file (-o x.dot)"] if fields.get("dot") else []
        return f"{', '.join(ways)} or raise {flag_for(str(fields.get('limit')))}"
    if remedy == "allow-unknown-ops":
        return f"fix the file, or pass {flag_for('allow_unknown_ops')} to draw it with unknown shapes"
    if remedy == "strict":
        return f"{flag_for('strict')} makes this an error"
    if remedy == "partial":  # a --shape that does not fit the graph
        return f"give shapes that fit, or pass {flag_for('partial')} to show what is known"
    if isinstance(error, UsageError):
        command = fields.get("command")
        words = f"help {command}" if command else "help"
        return f"see {command_text(words, where)}"
    return None


def _type_taking(store_type: Any, options: dict[str, Any]) -> Any:
    """``store_type`` if it takes these session options, else the first store type that does
    (``--num-devices 4`` on a local session: the advice is a device store, not local)."""
    from kvcli.store import REGISTRY

    def takes(name: Any) -> bool:
        entry = REGISTRY.get(name)
        return entry is not None and all(option in entry.session_options for option in options)

    if not options or takes(store_type):
        return store_type
    return next((name for name in REGISTRY if takes(name)), store_type)


#: The global flag (its table dest) of each store option a session records: ``--ray-address``
#: gives the store option ``address``.
STORE_OPTION_DESTS = {"num_devices": "num_devices", "address": "ray_address", "num_servers": "num_servers"}


def flag_for(param: str) -> str:
    """The command-line flag of a library parameter: ``layout_timeout`` -> ``--layout-timeout``
    (the table names each option after its parameter; the tests check every one a library
    error names), a store option's through :data:`STORE_OPTION_DESTS` (``--ray-address``)."""
    return "--" + STORE_OPTION_DESTS.get(param, param).replace("_", "-")


def message_for(error: BaseException) -> str:
    """The message of ``error`` in the CLI's words: an error about a parameter's value
    (fields ``param`` and ``about``, see :func:`kvcli.errors.bad_param`) names the flag, not
    the Python parameter; anything else is ``str(error)``."""
    fields: dict[str, Any] = getattr(error, "fields", None) or {}
    if fields.get("param") and fields.get("about") is not None:
        return f"{fields.get('where') or ''}{flag_for(str(fields['param']))} {fields['about']}"
    return str(error)


def report_error(error: BaseException, where: str = "cli", as_json: bool = False, scope: Sequence[str] = ()) -> None:
    """Print a kvcli error for ``where`` (its problem and this front end's advice, which
    keeps the ``scope`` typed: :func:`kvcli.cli.core.typed_scope`)."""
    fields: dict[str, Any] = getattr(error, "fields", None) or {}
    hint = hint_for(error, where, scope)
    message = str(fields["problem"]) if hint and fields.get("problem") else message_for(error)
    print_error(message, hint, as_json=as_json)


def print_interrupted(as_json: bool = False, detail: Optional[str] = None) -> None:
    """``interrupted`` on stderr (as the README documents it; not an error line), with
    ``detail``; with ``as_json`` the JSON error line."""
    if as_json:
        print_error("interrupted", detail, as_json=True)
        return
    sys.stderr.write("interrupted" + (f" ({detail})" if detail else "") + "\n")
    sys.stderr.flush()


def print_note(message: str) -> None:
    """Print a dim note on stderr (never mixed into stdout, which scripts read)."""
    from rich.markup import escape

    stderr_console().print(f"[dim]{escape(message)}[/]")


def fail(message: str, code: int = EXIT_USER_ERROR, as_json: bool = False) -> NoReturn:
    """Print ``message`` as an error and exit with ``code`` (1: user error)."""
    print_error(message, as_json=as_json)
    raise SystemExit(code)


def plural(count: int, word: str, words: Optional[str] = None) -> str:
    """``1 key``, ``2 keys``, ``0 keys``."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


# ---------------------------------------------------------------------- plain, fast output
def note(message: str) -> None:
    """A status line on stderr without importing rich (dim on a terminal, plain otherwise).

    Data goes to stdout; what a command did goes here, so scripts can read stdout.
    """
    stream = sys.stderr
    if stream.isatty() and not _no_color():
        stream.write(f"\x1b[2m{message}\x1b[0m\n")
    else:
        stream.write(message + "\n")
    stream.flush()


#: Ray's notice, on each start of a local instance, that it made an auth token (informational)
RAY_TOKEN_LOGGER = "ray._private.authentication.authentication_token_setup"


def quiet_ray_off_terminal() -> None:
    """Keep Ray's colour codes out of files and pipes: its worker lines are printed without
    them (``RAY_COLOR_PREFIX=0``) when stdout or stderr is not a terminal or ``NO_COLOR`` is
    set. Costs an environment variable until Ray runs (every command calls it)."""
    import os

    if not (sys.stdout.isatty() and sys.stderr.isatty()) or _no_color():
        os.environ.setdefault("RAY_COLOR_PREFIX", "0")


def quiet_ray_token_notice() -> None:
    """Drop Ray's notice that a new local instance made an auth token (called just before
    kvcli starts or joins Ray, which kvcli says itself: importing logging costs a one-shot
    command). Once per process."""
    import logging

    logger = logging.getLogger(RAY_TOKEN_LOGGER)
    if not any(getattr(f, "kvcli_token_notice", False) for f in logger.filters):
        def drop(record: logging.LogRecord) -> bool:
            return "Token authentication is enabled" not in record.getMessage()

        drop.kvcli_token_notice = True  # type: ignore[attr-defined]
        logger.addFilter(drop)


def _no_color() -> bool:
    import os

    return bool(os.environ.get("NO_COLOR"))


def print_text(text: str) -> None:
    """Write ``text`` and a newline to stdout (plain, no rich)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def format_array(array: Any) -> str:
    """An array as numpy prints it (``[[2. 2.] [2. 2.]]``; ints without dots)."""
    import numpy as np

    return np.array2string(array, separator=" ") if array.ndim else str(array)


def json_value(array: Any) -> Any:
    """``array.tolist()`` as strict JSON: float16/float32 numbers as their shortest decimal
    (``0.1``, not ``0.10000000149011612``) so JSON shows the dtype's value, and non-finite
    numbers (nan, inf, -inf), which JSON cannot hold, as ``null``."""
    import numpy as np

    if array.dtype.kind != "f":
        return array.tolist()
    finite = np.isfinite(array)
    short = array.dtype.itemsize < 8 and array.size <= 1_000_000
    if finite.all() and not short:
        return array.tolist()
    as_number = (lambda x: float(str(x))) if short else float
    flat = [as_number(x) if ok else None for x, ok in zip(array.ravel(), finite.ravel())]
    if array.ndim == 0:
        return flat[0]
    return np.array(flat, dtype=object).reshape(array.shape).tolist()


def array_payload(key: Any, array: Any, **extra: Any) -> dict[str, Any]:
    """The JSON object of one pulled key: ``{"key", "shape", "dtype", "value"}``."""
    payload = {"key": key, "shape": list(array.shape), "dtype": array.dtype.name, "value": json_value(array)}
    payload.update(extra)
    return payload


def human_bytes(size: int) -> str:
    """``1536`` -> ``1.5 KiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover


# ---------------------------------------------------------------------- progress
STATUS_DELAY = 0.5  # seconds: a command faster than this shows nothing


class status:  # noqa: N801 - used like a function: `with output.status("pulling"):`
    """A rich spinner with ``message`` on stderr when the work passes :data:`STATUS_DELAY`.

    Only on a terminal, never with ``--json`` (``quiet``) or when stderr is a pipe, so
    scripts and logs see no control characters. :meth:`update` changes the text.
    """

    def __init__(self, message: str, quiet: bool = False) -> None:
        self.message = message
        self._live: Any = None
        self._timer: Any = None
        self._enabled = not quiet and sys.stderr.isatty() and not _no_color_or_dumb()

    def __enter__(self) -> "status":
        if self._enabled:
            import threading
            import time

            self._began = time.monotonic()
            self._lock = threading.Lock()
            self._done = self._started = False
            self._timer = threading.Timer(STATUS_DELAY, self._start)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _start(self) -> None:
        with self._lock:  # never start after __exit__ stopped it (which waits for this import)
            if not self._done:
                # rich is imported here, once the work is slow: a fast command on a terminal
                # does not pay its import (about 30 ms of a one-shot command)
                from rich.status import Status

                self._live = Status(_Elapsed(self, self._began), console=_spinner_console(), spinner="dots")
                self._live.start()
                self._started = True

    def update(self, message: str) -> None:
        self.message = message  # the spinner draws it at its next refresh (see _Elapsed)

    def __exit__(self, *exc: object) -> None:
        if self._timer is None:
            return
        self._timer.cancel()
        with self._lock:
            self._done = True
            if self._started:
                self._live.stop()


#: Columns the spinner leaves free at the right: a terminal echoes Ctrl-C as "^C" where the
#: cursor is, and on a line drawn to the last column that echo would wrap onto a new line,
#: leaving the spinner's last frame behind when it is cleared.
ECHO_ROOM = 2


def _spinner_console() -> Any:
    from rich.console import Console

    width = stderr_console().width
    return Console(stderr=True, highlight=False, soft_wrap=True, width=max(width - ECHO_ROOM, 10))


class _Elapsed:
    """The spinner's text: the status message and, from 2 s on, the seconds spent (drawn
    anew at each refresh, so a slow start such as Ray's visibly counts up)."""

    def __init__(self, owner: status, start: float | None = None) -> None:
        import time

        self.owner = owner
        self.start = time.monotonic() if start is None else start

    def __rich__(self) -> str:
        import time

        from rich.markup import escape

        seconds = time.monotonic() - self.start
        return escape(self.owner.message) + (f" [dim]{seconds:.0f} s[/]" if seconds >= 2 else "")


def _no_color_or_dumb() -> bool:
    import os

    return os.environ.get("TERM") == "dumb"
