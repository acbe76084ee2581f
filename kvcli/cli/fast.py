"""Startup fast path: run the plain forms of the hot commands without importing typer.

Building the typer app and coercing its parameters costs more than importing numpy, which
would make ``kvcli pull KEY`` in a shell loop several times slower than it needs to be. This
module *recognises* command lines by reading the same table the typer app is built from
(:mod:`kvcli.cli.table`: the commands marked ``fast``, their options and ranges, the global
options before or after the command) and calls the same :func:`kvcli.cli.core.dispatch`.
Anything it does not fully understand (``--help``, a typo, a value out of range, an unknown
option, ``-d4``-style short values, a repeated option that is not repeatable) is handed to typer, which parses it
and produces the usage error or help; so the two paths cannot disagree on a command line
that runs. ``KVCLI_NO_FAST_PATH=1`` turns the fast path off (tests compare both).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from kvcli import config
from kvcli.cli import table
from kvcli.cli.core import dispatch, make_global_options
from kvcli.cli.table import Command, Opt
from kvcli.errors import BadValueError


class _Defer(Exception):
    """The command line is not one the fast path handles: let typer parse it."""


def _split(token: str) -> tuple[str, Optional[str]]:
    if token.startswith("--") and "=" in token:
        name, _, value = token.partition("=")
        return name, value
    return token, None


def _take(opt: Opt, tokens: list[str], index: int, inline: Optional[str], into: dict[str, Any]) -> int:
    """Record ``opt`` (its value inline or in the next token) in ``into``; returns the index of
    the last token used. A repeated option or a bad value defers to typer."""
    if opt.dest in into and not opt.multiple:
        raise _Defer
    if not opt.takes_value:
        if inline is not None:
            raise _Defer
        into[opt.dest] = True
        return index
    if inline is None:
        if index + 1 >= len(tokens):
            raise _Defer
        index += 1
        inline = tokens[index]
    try:
        value = opt.convert(inline)
    except BadValueError:
        raise _Defer from None
    if opt.multiple:  # a repeatable option (--shape) gathers its values, as typer does
        into.setdefault(opt.dest, []).append(value)
    else:
        into[opt.dest] = value
    return index


def parse(argv: list[str]) -> Optional[tuple[str, dict[str, Any], list[str], dict[str, Any]]]:
    """``(command, global values, positionals, command options)``, or None to defer to typer."""
    try:
        return _parse(argv)
    except _Defer:
        return None


def _global(name: str) -> Opt:
    opt = table.global_option(name)
    if opt is None:
        raise _Defer
    return opt


def _parse(argv: list[str]) -> tuple[str, dict[str, Any], list[str], dict[str, Any]]:
    globals_: dict[str, Any] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        name, inline = _split(argv[i])
        i = _take(_global(name), argv, i, inline, globals_) + 1
    if i >= len(argv):
        raise _Defer
    command = table.find(argv[i])
    if command is None or not command.fast:
        raise _Defer
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
            name, inline = _split(token)
            opt = command.option(name)
            if opt is not None:
                j = _take(opt, rest, j, inline, options)
            else:  # a global option after the command: it may not repeat one given before
                j = _take(_global(name), rest, j, inline, globals_)
        j += 1
    _check_count(command, positionals)
    return command.name, globals_, positionals, options


def _check_count(command: Command, positionals: list[str]) -> None:
    low = sum(1 for a in command.args if a.required)
    many = any(a.many for a in command.args)
    if len(positionals) < low or (not many and len(positionals) > len(command.args)):
        raise _Defer


def values_for(command: Command, positionals: list[str], options: dict[str, Any]) -> dict[str, Any]:
    """The keyword values of ``command``'s function: positionals by the table's argument
    order (a ``many`` argument takes the rest), options with their table defaults."""
    values: dict[str, Any] = {}
    index = 0
    for arg in command.args:
        if arg.many:
            values[arg.dest] = positionals[index:]
            index = len(positionals)
        else:
            value = positionals[index] if index < len(positionals) else None
            values[arg.dest] = Path(value) if arg.kind == "path" and value is not None else value
            index += 1
    for opt in command.opts:
        values[opt.dest] = options.get(opt.dest, False if opt.kind == "flag" else opt.default)
    return values


def run(argv: list[str], prior: Any = None) -> bool:
    """Run ``argv`` if it is a plain hot command; False means "use the typer app".

    ``prior``: the shell's :class:`~kvcli.cli.core.GlobalOptions` (its open session), for a
    shell line: a script of 10,000 lines would otherwise spend a third of its time in typer."""
    if config.get(config.NO_FAST_PATH):
        return False
    parsed = parse(argv)
    if parsed is None:
        return False
    name, globals_, positionals, options = parsed
    # an option not given stays None: the library reads its KVCLI_* variable (config.get);
    # in the shell, the open session (prior) wins unless --session/--home is on the line
    global_options = make_global_options(prior, globals_)
    command = table.find(name)
    assert command is not None
    dispatch(command, global_options, values_for(command, positionals, options))
    return True
