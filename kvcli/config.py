"""Every ``KVCLI_*`` environment variable, declared once, read and checked one way.

:data:`VARIABLES` is the table: a variable's name, what its value must be, its default and
what it does. Modules read a variable only through :func:`get` (or :func:`raw` for the few
whose value is passed through untouched), so a bad value is always the same one-line
:class:`~kvcli.errors.ConfigError` naming the variable, the value and a fix — never a silent
fallback to the default. The guide's table of variables (docs/environment.md) is checked
against this one by the tests.

This module imports nothing heavy: the one-shot fast path reads it before numpy loads.
"""

from __future__ import annotations

import math
import os
from typing import Any, NamedTuple

from kvcli.errors import BadValueError, ConfigError

#: Kinds of value: ``int`` / ``float`` (with bounds), ``str``, ``path``, ``flag`` (any
#: non-empty value is on).
KINDS = ("int", "float", "str", "path", "flag")


class Variable(NamedTuple):
    """One environment variable.

    Attributes:
        name: the full name, e.g. ``KVCLI_MAX_ELEMENTS``.
        kind: one of :data:`KINDS`.
        default: the value when unset or empty (None: no default; the reader decides).
        doc: one line for the README (what it does, its default).
        low / high: inclusive bounds of an ``int`` or ``float``.
        internal: a test hook, not documented for users.
    """

    name: str
    kind: str
    default: Any
    doc: str
    low: float | None = None
    high: float | None = None
    internal: bool = False


VARIABLES: dict[str, Variable] = {}


def _declare(variable: Variable) -> Variable:
    if variable.kind not in KINDS:  # pragma: no cover - a programming error
        raise ValueError(f"unknown kind {variable.kind!r} of {variable.name}")
    VARIABLES[variable.name] = variable
    return variable


# ---------------------------------------------------------------------- sessions and CLI
HOME = _declare(Variable("KVCLI_HOME", "path", None,
                         "folder that holds the sessions (default: the platform's user-data folder, "
                         "e.g. ~/.local/share/kvcli); same as --home"))
SESSION = _declare(Variable("KVCLI_SESSION", "str", None, "session name (default 'default'); same as --session"))
LOCK_TIMEOUT = _declare(Variable("KVCLI_LOCK_TIMEOUT", "float", 120.0,
                                 "seconds a command waits for another one holding the session's lock (default 120)",
                                 low=0.0, high=86400.0))
TRUST_KEY = _declare(Variable("KVCLI_TRUST_KEY", "path", None,
                              "file of the per-user key that signs trusted `python:` updaters "
                              "(default ~/.config/kvcli/trust.key)"))
NO_FAST_PATH = _declare(Variable("KVCLI_NO_FAST_PATH", "flag", False,
                                 "set to parse every command line with typer, not the startup fast path "
                                 "(slower start; for debugging)"))
CRASH_POINT = _declare(Variable("KVCLI_TEST_CRASH_POINT", "str", None,
                                "test hook: kill the process at this named point of a commit", internal=True))

DEVICE_IDLE = _declare(Variable("KVCLI_DEVICE_IDLE", "float", 300.0,
                                "seconds the device workers of a `device` session stay up after its last "
                                "command, so the next one-shot command attaches to them (default 300; 0: "
                                "stop them after each command)", low=0.0, high=7 * 86400.0))

# ---------------------------------------------------------------------- values
MAX_ELEMENTS = _declare(Variable("KVCLI_MAX_ELEMENTS", "int", 1 << 27,
                                 "largest value (elements) the value language, `-`, `@file` and `@fifo` build "
                                 "or read, and each value of an `import` (default 2**27 = 134,217,728)",
                                 low=1, high=1 << 62))
STREAM_TIMEOUT = _declare(Variable("KVCLI_STREAM_TIMEOUT", "float", 30.0,
                                   "seconds a pipe or FIFO may stay silent while a value or a symbol file is read (default 30)",
                                   low=0.001, high=86400.0))

# ---------------------------------------------------------------------- pictures
DOT = _declare(Variable("KVCLI_DOT", "path", None, "graphviz's `dot` program to use (default: `dot` on PATH)"))

# ---------------------------------------------------------------------- distributed (set by `kvcli launch`)
RAY_ADDRESS = _declare(Variable("KVCLI_RAY_ADDRESS", "str", None,
                                "the Ray cluster (`auto`, `HOST:PORT`, `ray://...`; default: the one this "
                                "process is connected to, else a new local one, never a cluster Ray finds on its own in "
                                "`/tmp/ray`); same as --ray-address"))
GROUP = _declare(Variable("KVCLI_GROUP", "str", None, "the worker group id (set by the launcher)"))
RANK = _declare(Variable("KVCLI_RANK", "int", 0, "this worker's rank (set by the launcher; default 0)",
                         low=0, high=1 << 20))
NUM_WORKERS = _declare(Variable("KVCLI_NUM_WORKERS", "int", None, "the number of workers (set by the launcher)",
                                low=1, high=1 << 20))
NUM_SERVERS = _declare(Variable("KVCLI_NUM_SERVERS", "int", None,
                                "servers a group starts (set by the launcher; default 1)", low=1, high=1024))
DIST_TIMEOUT = _declare(Variable("KVCLI_DIST_TIMEOUT", "float", 60.0,
                                 "seconds a worker waits for the others before failing (default 60)",
                                 low=0.001, high=86400.0))
DIST_IDLE = _declare(Variable("KVCLI_DIST_IDLE", "float", 300.0,
                              "seconds the server actors of a dist session stay up in the home's Ray cluster "
                              "(`kvcli cluster up`) after its last command, so the next one-shot command finds "
                              "them (default 300; 0: stop them after each command)", low=0.0, high=7 * 86400.0))
BIGARRAY_BOUND = _declare(Variable("KVCLI_BIGARRAY_BOUND", "int", 1_000_000,
                                   "arrays of at least this many elements are split by rows over the servers "
                                   "(default 1,000,000, MXNet's MXNET_KVSTORE_BIGARRAY_BOUND)", low=1, high=1 << 62))
DIST_NO_SHM = _declare(Variable("KVCLI_DIST_NO_SHM", "flag", False,
                                "set to send dist values through Ray's object store even between a worker "
                                "and a server on the same node (default: shared memory there)"))
DIST_NO_PRESUM = _declare(Variable("KVCLI_DIST_NO_PRESUM", "flag", False,
                                   "set to send each dist_sync worker's push to a server on another node on "
                                   "its own (default: the node's workers' pushes are summed there first)"))


def raw(variable: Variable) -> str | None:
    """The variable's text, or None when unset or empty."""
    text = os.environ.get(variable.name, "")
    return text if text.strip() else None


def get(variable: Variable) -> Any:
    """The variable's value, checked (its default when unset or empty).

    Raises:
        ConfigError: the value is not of the variable's kind or outside its bounds.
    """
    text = raw(variable)
    if text is None:
        return variable.default
    if variable.kind == "flag":
        return True
    if variable.kind in ("str", "path"):
        if any(ord(c) < 32 for c in text):
            raise _bad(variable, text, "holds control characters")
        if variable.kind == "path":
            from kvcli.osutil import expand_user  # '~' never means '/' for an empty HOME

            return expand_user(text)
        return text
    try:
        return parse_number(text, variable.kind, variable.low, variable.high)
    except BadValueError as error:
        raise _bad(variable, text, str(error)) from None


def check_program(variable: Variable, path: str) -> str | None:
    """``path``, the value of ``variable``, as a program to run: None when nothing is there
    (the caller's "not installed"); a folder, FIFO, device or a file that may not be
    executed is the variable's one-line error (running it was a traceback).

    Raises:
        ConfigError: ``path`` exists but is not an executable regular file.
    """
    import stat

    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise _bad(variable, path, f"cannot be read ({error.strerror})") from None
    if not stat.S_ISREG(info.st_mode) or not os.access(path, os.X_OK):
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "not an executable program"
        raise _bad(variable, path, f"is {what}")
    return path


def parse_number(text: str, kind: str, low: float | None = None, high: float | None = None) -> Any:
    """The number ``text`` of ``kind`` (``int``: a whole number; ``float``: a finite number)
    within ``low..high`` (inclusive; None: unbounded).

    The one parser of bounded numbers: ``KVCLI_*`` variables (:func:`get`), command-line
    options (:meth:`kvcli.cli.table.Opt.convert`, on both the fast path and typer's) and
    the shell's ``exit N`` read numbers through it, so each says a bad one the same way.

    Raises:
        BadValueError: the problem, worded to follow the text it is about: ``is not a whole
            number``, ``is not a number``, ``is not a finite number``, ``is outside 1..64``
            (``is less than 1``, ``is more than 5`` when one bound is given).
    """
    if kind not in ("int", "float"):  # pragma: no cover - a programming error
        raise ValueError(f"parse_number reads int or float, not {kind!r}")
    try:
        value: float = int(text.strip(), 10) if kind == "int" else float(text)
    except ValueError:
        raise BadValueError("is not a whole number" if kind == "int" else "is not a number",
                            text=text, low=low, high=high) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise BadValueError("is not a finite number", text=text, low=low, high=high)
    if low is not None and high is not None and not low <= value <= high:
        raise BadValueError(f"is outside {_bound(low)}..{_bound(high)}", text=text, low=low, high=high)
    if low is not None and value < low:
        raise BadValueError(f"is less than {_bound(low)}", text=text, low=low, high=high)
    if high is not None and value > high:
        raise BadValueError(f"is more than {_bound(high)}", text=text, low=low, high=high)
    return value


def _bound(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _bad(variable: Variable, text: str, problem: str) -> ConfigError:
    shown = text if len(text) <= 40 else text[:37] + "..."
    default = f" (the default is {variable.default!r})" if variable.default not in (None, False) else ""
    return ConfigError(
        f"{variable.name}={shown!r} {problem}: set it to a valid value{default} or unset it",
        variable=variable.name, value=text,
    )


def documented() -> list[Variable]:
    """The variables users may set (test hooks left out), in declaration order."""
    return [v for v in VARIABLES.values() if not v.internal]


def markdown_table() -> str:
    """The guide's table of variables (the tests check docs/environment.md holds exactly this)."""
    rows = ["| Variable | Value | What it does |", "|---|---|---|"]
    rows += [f"| `{v.name}` | {v.kind} | {v.doc} |" for v in documented()]
    return "\n".join(rows)


__all__ = ["KINDS", "VARIABLES", "Variable", "check_program", "documented", "get", "markdown_table", "parse_number", "raw"]
