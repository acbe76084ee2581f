"""Startup fast path: run the plain forms of the hot commands without importing typer.

Building the typer app and coercing its parameters costs more than importing numpy (typer
0.2x validates every parameter through pydantic), which would make ``kvcli pull KEY`` in a
shell loop several times slower than it needs to be. This module *recognises* — it does not
define — the simple argument lists of ``pull``, ``push``, ``init`` and ``keys`` with the
global options, and calls the same :mod:`kvcli.cli.commands` functions the typer commands
call. Anything it does not fully understand (``--help``, a typo, a bad number, an unknown
option, ``-d4``-style short values, a value starting with ``-``) is handed to typer, which
parses it and produces the usage error or help; so the two paths cannot disagree on a
command line that runs. ``KVCLI_NO_FAST_PATH=1`` turns the fast path off (tests compare
both).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Optional

#: Global options that take a value: flag -> (GlobalOptions field, converter).
_GLOBAL_VALUES: dict[str, tuple[str, Callable[[str], Any]]] = {
    "--session": ("session", str),
    "-s": ("session", str),
    "--home": ("home", Path),
    "--type": ("store_type", str),
    "-t": ("store_type", str),
    "--num-devices": ("num_devices", lambda v: _int_in(v, 1, 64)),
    "--ray-address": ("ray_address", str),
    "--num-servers": ("num_servers", lambda v: _int_in(v, 1, None)),
}


class _Defer(Exception):
    """The command line is not one the fast path handles: let typer parse it."""


def _int_in(text: str, low: int, high: Optional[int]) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise _Defer from None
    if value < low or (high is not None and value > high):
        raise _Defer
    return value


def _devices(text: str) -> int:
    return _int_in(text, 1, 1024)


#: Per command: (min positionals, max positionals or None, options with values, flags).
_COMMANDS: dict[str, tuple[int, Optional[int], dict[str, tuple[str, Callable[[str], Any]]], dict[str, str]]] = {
    "pull": (
        1,
        1,
        {"--devices": ("devices", _devices), "-d": ("devices", _devices), "--output": ("out", Path), "-o": ("out", Path)},
        {"--json": "json_output"},
    ),
    "push": (2, None, {"--devices": ("devices", _devices), "-d": ("devices", _devices), "--dtype": ("dtype", str)}, {}),
    "init": (2, None, {"--dtype": ("dtype", str)}, {}),
    "keys": (0, 0, {}, {}),
}


def _split(token: str) -> tuple[str, Optional[str]]:
    if token.startswith("--") and "=" in token:
        name, _, value = token.partition("=")
        return name, value
    return token, None


def _take_value(
    tokens: list[str], index: int, name: str, value: Optional[str],
    table: dict[str, tuple[str, Callable[[str], Any]]], into: dict[str, Any],
) -> int:
    """Record option ``name`` (its value inline or in the next token) in ``into``; returns the
    index of the last token used. A repeated option defers to typer."""
    if value is None:
        if index + 1 >= len(tokens):
            raise _Defer
        index += 1
        value = tokens[index]
    field, convert = table[name]
    if field in into:
        raise _Defer
    into[field] = convert(value)
    return index


def parse(argv: list[str]) -> Optional[tuple[str, dict[str, Any], list[str], dict[str, Any]]]:
    """``(command, global values, positionals, command options)``, or None to defer to typer."""
    try:
        return _parse(argv)
    except _Defer:
        return None


def _parse(argv: list[str]) -> tuple[str, dict[str, Any], list[str], dict[str, Any]]:
    globals_: dict[str, Any] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        name, value = _split(argv[i])
        if name == "--json" and value is None:
            globals_["json"] = True
            i += 1
            continue
        if name not in _GLOBAL_VALUES:
            raise _Defer
        i = _take_value(argv, i, name, value, _GLOBAL_VALUES, globals_) + 1
    if i >= len(argv) or argv[i] not in _COMMANDS:
        raise _Defer
    command = argv[i]
    low, high, valued, flags = _COMMANDS[command]
    positionals: list[str] = []
    options: dict[str, Any] = {}
    rest = argv[i + 1:]
    j = 0
    only_positionals = False
    while j < len(rest):
        token = rest[j]
        if only_positionals or token == "-" or not token.startswith("-"):
            positionals.append(token)
        elif token == "--":
            only_positionals = True
        else:
            name, value = _split(token)
            if name in flags and value is None:
                if flags[name] in options:
                    raise _Defer
                options[flags[name]] = True
            elif name in valued:
                j = _take_value(rest, j, name, value, valued, options)
            else:
                raise _Defer
        j += 1
    if len(positionals) < low or (high is not None and len(positionals) > high):
        raise _Defer
    return command, globals_, positionals, options


def run(argv: list[str]) -> bool:
    """Run ``argv`` if it is a plain hot command; False means "use the typer app"."""
    if os.environ.get("KVCLI_NO_FAST_PATH"):
        return False
    parsed = parse(argv)
    if parsed is None:
        return False
    command, globals_, positionals, options = parsed
    from kvcli.cli import commands

    store_options = {
        "num_devices": globals_.get("num_devices"),
        "address": globals_.get("ray_address"),
        "num_servers": globals_.get("num_servers"),
    }
    global_options = commands.GlobalOptions(
        session=globals_.get("session"),
        home=globals_.get("home"),
        json=bool(globals_.get("json")),
        store_type=globals_.get("store_type"),
        store_options={k: v for k, v in store_options.items() if v is not None},
    )
    if command == "pull":
        commands.run_pull(
            global_options, positionals[0], options.get("devices", 1), options.get("json_output", False), options.get("out")
        )
    elif command == "push":
        commands.run_push(global_options, positionals[0], positionals[1:], options.get("devices"), options.get("dtype"))
    elif command == "init":
        commands.run_init(global_options, positionals[0], positionals[1:], options.get("dtype"))
    else:
        commands.run_keys(global_options)
    return True
