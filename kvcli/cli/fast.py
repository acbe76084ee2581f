"""Startup fast path: a command line read straight from the command table, without typer.

Importing typer costs a one-shot command about a quarter of a numpy import (typer's own
modules, measured in ``bench/RESULTS.md``), which would make ``kvcli pull KEY`` in a shell loop
1.4x ``python -c "import numpy"`` instead of 1.1x. This module reads the same table the parser is
built from (:mod:`kvcli.cli.table`): the commands, their arguments and options, the global
options before or after the command, each value converted by the table
(:meth:`~kvcli.cli.table.Opt.convert`, as the parser converts it), and calls the same
:func:`kvcli.cli.core.dispatch`. No command has code of its own here.

It reads a command with neither sub-commands, nor words passed through (``launch --``),
nor global options it refuses: the rest, and anything it does not fully understand
(``--help``, ``-V``, a typo, a value the table refuses, ``-d4``-style short values, a repeated
option), is handed to typer, which parses it and words the usage
error or help; so the two cannot disagree on a command line that runs
(``tests/cli/test_fast_path.py`` parses every command and option both ways).
``KVCLI_NO_FAST_PATH=1`` turns the fast path off.
"""

from __future__ import annotations

from typing import Any, Optional

from kvcli import config
from kvcli.cli import table
from kvcli.cli.core import GlobalOptions, dispatch, make_global_options
from kvcli.cli.table import Command, Opt
from kvcli.errors import BadValueError


class _Defer(Exception):
    """The command line is not one the fast path reads: let typer parse it."""


def readable(command: Command, prior: Optional[GlobalOptions] = None) -> bool:
    """Whether the fast path reads ``command``'s lines (``prior``: the shell's options, whose
    lines have only the commands that run in the shell)."""
    in_shell = prior is not None and prior.live is not None
    return (not command.children and not command.passthrough and not command.extra.get("refused")
            and (command.in_shell or not in_shell))


def parse(argv: list[str], prior: Optional[GlobalOptions] = None) -> Optional[tuple[Command, GlobalOptions, dict[str, Any]]]:
    """What :func:`~kvcli.cli.core.dispatch` is called with for ``argv`` (the command, its
    global options and its values), or None to let typer parse the line."""
    try:
        return _parse(argv, prior)
    except _Defer:
        return None


def run(argv: list[str], prior: Optional[GlobalOptions] = None) -> bool:
    """Run ``argv`` if the fast path reads it; False means "let typer parse it".

    ``prior``: the shell's :class:`~kvcli.cli.core.GlobalOptions` (its open session), for a
    shell line: a script of 10,000 lines would otherwise spend a quarter of its time in typer."""
    if config.get(config.NO_FAST_PATH):
        return False
    parsed = parse(argv, prior)
    if parsed is None:
        return False
    dispatch(*parsed)
    return True


def _split(token: str) -> tuple[str, Optional[str]]:
    if token.startswith("--") and "=" in token:
        name, _, value = token.partition("=")
        return name, value
    return token, None


def _take(opt: Opt, tokens: list[str], index: int, inline: Optional[str], into: dict[str, Any]) -> int:
    """Record ``opt`` (its value inline or in the next token) in ``into``; returns the index of
    the last token used. A repeated option (but a repeatable one) or a value the table
    refuses defers to typer."""
    if opt.dest in into and not opt.multiple:
        raise _Defer
    if not opt.takes_value:
        if inline is not None:
            raise _Defer
        into[opt.dest] = True
        return index
    if inline is None:
        if index + 1 >= len(tokens):  # as click, the next word is the value, whatever it is
            raise _Defer
        index += 1
        inline = tokens[index]
    try:
        value = opt.convert(inline)
    except BadValueError:
        raise _Defer from None
    if opt.multiple:
        into.setdefault(opt.dest, []).append(value)
    else:
        into[opt.dest] = value
    return index


def _global(name: str) -> Opt:
    opt = table.global_option(name)
    if opt is None:
        raise _Defer
    return opt


def _parse(argv: list[str], prior: Optional[GlobalOptions]) -> tuple[Command, GlobalOptions, dict[str, Any]]:
    globals_: dict[str, Any] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        name, inline = _split(argv[i])
        i = _take(_global(name), argv, i, inline, globals_) + 1
    if i >= len(argv):
        raise _Defer
    command = table.find(argv[i])
    if command is None or not readable(command, prior):
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
    # an option not given stays None: the library reads its KVCLI_* variable (config.get);
    # in the shell, the open session (prior) wins unless --session/--home is on the line
    return command, make_global_options(prior, globals_), _values(command, positionals, options)


def _values(command: Command, positionals: list[str], options: dict[str, Any]) -> dict[str, Any]:
    """The keyword values of ``command``'s function: positionals by the table's argument
    order (a ``many`` argument takes the rest; none at all is None, as typer gives it), each
    converted by the table; options with their table defaults."""
    low = sum(1 for a in command.args if a.required)
    many = any(a.many for a in command.args)
    if len(positionals) < low or (not many and len(positionals) > len(command.args)):
        raise _Defer
    values: dict[str, Any] = {}
    index = 0
    for arg in command.args:
        if arg.many:
            values[arg.dest] = [arg.convert(text) for text in positionals[index:]] or None
            index = len(positionals)
        else:
            values[arg.dest] = arg.convert(positionals[index]) if index < len(positionals) else None
            index += 1
    for opt in command.opts:
        values[opt.dest] = options.get(opt.dest, False if opt.kind == "flag" else opt.default)
    return values
