"""Printing for the CLI: rich for people, JSON for scripts, one-line errors.

rich is imported lazily so that commands which print plain text start fast.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

EXIT_OK = 0
EXIT_USER_ERROR = 1
EXIT_USAGE_ERROR = 2


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
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, default=_json_default) + "\n")
    sys.stdout.flush()


def _json_default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def error_line(message: str) -> str:
    """The one-line form of an error message (newlines folded)."""
    return " ".join(str(message).split())


def print_error(message: str) -> None:
    """Print ``error: message`` in red on stderr, as one line."""
    from rich.markup import escape

    stderr_console().print(f"[bold red]error:[/] {escape(error_line(message))}")


def print_note(message: str) -> None:
    """Print a dim note on stderr (never mixed into stdout, which scripts read)."""
    from rich.markup import escape

    stderr_console().print(f"[dim]{escape(message)}[/]")


def fail(message: str, code: int = EXIT_USER_ERROR) -> NoReturn:
    """Print ``message`` as an error and exit with ``code`` (1: user error)."""
    print_error(message)
    raise SystemExit(code)


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
    """``array.tolist()``, with float16/float32 numbers as their shortest decimal
    (``0.1``, not ``0.10000000149011612``) so JSON shows the dtype's value."""
    import numpy as np

    if array.dtype.kind == "f" and array.dtype.itemsize < 8 and array.size <= 1_000_000:
        flat = [float(str(x)) for x in array.ravel()]
        if array.ndim == 0:
            return flat[0]
        return np.array(flat, dtype=object).reshape(array.shape).tolist()
    return array.tolist()


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
