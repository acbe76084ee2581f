"""The command reference (``docs/commands.md``), written from the command table.

Every command and sub-command of :mod:`kvcli.cli.table` with its usage line, help text,
arguments, options (ranges, defaults, variables) and examples, and the global options, as
plain Markdown. ``tests/cli/test_docs.py`` keeps the file equal to what this module writes;
after a change to the table, write it again::

    python -m kvcli.cli.docs docs/commands.md
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Iterator, Optional, Sequence

from kvcli.cli import table
from kvcli.cli.table import Arg, Command, Opt

COMMAND = "python -m kvcli.cli.docs docs/commands.md"


def render() -> str:
    """The whole reference, as Markdown."""
    entries = list(_walk(table.commands()))
    lines = [
        f"<!-- Written by `{COMMAND}` from kvcli/cli/table.py: edit the table, not this file. -->",
        "",
        "# Command reference",
        "",
        "Every `kvcli` command, with its arguments, options and examples (the same text as `kvcli help COMMAND`).",
        "Exit codes: 0 success, 1 an error (one line: what is wrong and the fix; nothing was changed), 2 a usage "
        "error (an unknown command or option, a value the option does not take), 130 interrupted (Ctrl-C).",
        "",
        "In `kvcli shell`, type the commands without `kvcli`; "
        + " and ".join(f"`{c.name}`" for c in table.commands() if not c.in_shell) + " do not run there.",
        "",
        "| command | what it does |",
        "|---|---|",
        *(f"| [{' '.join(words)}](#{_anchor(words)}) | {_cell(_summary(command))} |" for words, command in entries),
        "",
        "## Global options",
        "",
        "Every command takes these, before or after its name (`kvcli -s exp1 keys`, `kvcli keys -s exp1`).",
        "",
        *(_option(opt) for opt in table.GLOBAL_OPTIONS),
        f"- {_flags(table.VERSION_FLAGS)}: Print the version and exit (before the command).",
        f"- {_flags(table.HELP_FLAGS)}: Show the help of kvcli, or of the command it follows.",
    ]
    for words, command in entries:
        lines += ["", *_command(words, command)]
    return "\n".join(lines) + "\n"


def _walk(commands: Sequence[Command], words: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Command]]:
    for command in commands:
        yield (*words, command.name), command
        yield from _walk(command.children, (*words, command.name))


def _command(words: tuple[str, ...], command: Command) -> list[str]:
    lines = [f"## {' '.join(('kvcli', *words))}", "", f"`{_usage(words, command)}`", ""]
    for paragraph in command.help.split("\n\n"):
        lines += [*_paragraph(paragraph), ""]
    if command.children:
        names = ", ".join(f"[`{child.name}`](#{_anchor((*words, child.name))})" for child in command.children)
        lines += [f"Sub-commands: {names}.", ""]
    if command.args:
        lines += ["Arguments:", "", *(_argument(arg) for arg in command.args), ""]
    if command.opts:
        lines += ["Options:", "", *(_option(opt) for opt in command.opts), ""]
    refused = dict(command.extra.get("refused", {}))
    if refused:
        lines += ["Global options it refuses:", ""]
        lines += [f"- {_flags(_global(dest).flags)}: {_text(reason)}" for dest, reason in refused.items()]
        lines += [""]
    if not command.in_shell:
        lines += [f"Not in `kvcli shell`: run `kvcli {' '.join(words)}` in a terminal.", ""]
    word = "Examples" if len(command.examples) > 1 else "Example"
    lines += [f"{word}:", "", "```sh", *command.examples, "```"]
    return lines


def _usage(words: tuple[str, ...], command: Command) -> str:
    parts = ["kvcli", *words]
    if command.opts:
        parts.append("[OPTIONS]")
    for arg in command.args:
        word = arg.metavar + ("..." if arg.many and not arg.metavar.endswith("...") else "")
        parts.append(word if arg.required else f"[{word}]")
    if command.children:
        parts.append("[COMMAND]")
    return " ".join(parts)


def _argument(arg: Arg) -> str:
    word = arg.metavar + ("..." if arg.many and not arg.metavar.endswith("...") else "")
    optional = " (optional)" if not arg.required else ""
    if arg.complete != "updater":
        return f"- `{word}`{optional}: {_text(arg.help)}"
    # an updater spec: the optimizers and their arguments too, as its help lists them
    from kvcli.optim.spec import spec_help

    lead, *items = _paragraph(f"{arg.help}. {spec_help()}")
    return "\n".join([f"- `{word}`{optional}: {lead}", *(f"  {item}" for item in items)])


def _option(opt: Opt) -> str:
    value = f" `{opt.shown_metavar()}`" if opt.takes_value else ""
    notes = [f"Range: {opt.bounds()[1:-1]}."] if opt.bounds() else []
    notes += ["Required."] if opt.required else []
    notes += [f"Default: `{opt.default}`."] if opt.default is not None and opt.kind != "flag" else []
    notes += [f"Variable: `{opt.envvar}` (read when the option is not given)."] if opt.envvar else []
    return " ".join([f"- {_flags(opt.flags)}{value}: {_text(opt.help)}", *notes])


def _flags(flags: Sequence[str]) -> str:
    return ", ".join(f"`{flag}`" for flag in sorted(flags, key=lambda f: not f.startswith("--")))


def _global(dest: str) -> Opt:
    return next(opt for opt in table.GLOBAL_OPTIONS if opt.dest == dest)


def _paragraph(text: str) -> list[str]:
    """A help paragraph; one that lists ``a  ·  b  ·  c`` becomes a list (after its lead,
    a first piece that ends with a colon)."""
    lead, *pieces = text.split("  ·  ")
    if not pieces:
        return [_text(text)]
    if not lead.endswith(":"):
        lead, pieces = "", [lead, *pieces]
    return [*([_text(lead)] if lead else []), *(f"- {_text(piece)}" for piece in pieces)]


def _summary(command: Command) -> str:
    return command.help.split("\n\n")[0]


def _anchor(words: Sequence[str]) -> str:
    """GitHub's anchor of the heading ``kvcli WORDS``."""
    return "-".join(("kvcli", *words)).lower()


def _text(text: str) -> str:
    """Help text as Markdown: what is in backquotes stays code; elsewhere ``*``, ``_``, ``<``
    and ``\\`` are escaped, so ``'stage3_*'`` and ``__shape__`` read as typed."""
    parts = re.split(r"(`[^`]*`)", " ".join(text.split()))
    return "".join(part if part.startswith("`") else _escape(part) for part in parts)


def _escape(text: str) -> str:
    # an underscore inside a word (dist_sync) never starts emphasis: only one at a word's
    # edge (__shape__) is escaped, so the file stays readable as text
    text = re.sub(r"([\\*<])", r"\\\1", text)
    return re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", text)


def _cell(text: str) -> str:
    return _text(text).replace("|", "\\|")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m kvcli.cli.docs [FILE]``: write the reference to FILE (stdout without one)."""
    args = list(sys.argv[1:] if argv is None else argv)
    text = render()
    if not args:
        sys.stdout.write(text)
        return 0
    Path(args[0]).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
