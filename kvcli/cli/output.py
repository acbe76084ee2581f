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
