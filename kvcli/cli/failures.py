"""How a command line that fails ends: its message and its exit code, in one place for the
one-shot CLI and the shell (:func:`report`).

The exit code is the error's ``exit_code``, as click puts one on its exceptions: kvcli's
errors exit 1 (a user error) and its :class:`~kvcli.errors.UsageError` 2; click's usage errors
(an unknown command or option, a missing argument, a value the table refuses) 2. Two builtin
exceptions have codes of their own (:data:`EXITS`): Ctrl-C exits 130, as a POSIX shell reports
a command it ended, and a reader that left stdout (``kvcli pull w | head``) ends a command
quietly with 0. Running out of memory or file descriptors is one line, exit 1. A command's
own ``SystemExit`` keeps its code. Anything else is a bug: a one-shot command keeps its
traceback, the shell prints one line and goes on.

The message is one line, ``error: <problem>: <advice>`` (with ``--json``, ``{"error",
"hint"}`` on stderr): a kvcli error's problem and this front end's advice come from
:func:`kvcli.cli.output.report_error`; a click usage error gets kvcli's advice here.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

from kvcli.cli import output
from kvcli.cli.core import typed_scope
from kvcli.errors import KVCliError, StdoutClosed, UsageError

#: Exit codes of the builtin exceptions a command line may end with (kvcli's and click's
#: exceptions carry theirs as ``exit_code``).
EXITS: tuple[tuple[type[BaseException], int], ...] = (
    (KeyboardInterrupt, output.EXIT_INTERRUPTED),
    (BrokenPipeError, output.EXIT_OK),
    (StdoutClosed, output.EXIT_OK),
)

#: What the shell says after "interrupted".
SHELL_INTERRUPTED = "the session keeps its last committed state"


def exit_code(error: BaseException) -> Optional[int]:
    """The exit code a command line ends with when it raises ``error``; None for an
    exception that is not a user's problem (a bug)."""
    if isinstance(error, SystemExit):  # a command's own code (`kvcli shell` with a failed line, launch)
        return error.code if isinstance(error.code, int) else (0 if error.code is None else 1)
    for kind, code in EXITS:
        if isinstance(error, kind):
            return code
    if isinstance(error, KVCliError) or _is_click_error(error):
        return int(error.exit_code)  # type: ignore[attr-defined]  # click's exceptions carry one
    if isinstance(error, (MemoryError, OSError)) and _resource_problem(error) is not None:
        return output.EXIT_USER_ERROR
    return None


def report(error: BaseException, where: str = "cli", *, as_json: bool = False, argv: Sequence[str] = ()) -> Optional[int]:
    """Print ``error`` as front end ``where`` (``cli`` or ``shell``) words it and return the
    exit code its command line ends with (:func:`exit_code`). None: a one-shot command's bug,
    for the caller to raise again (the shell prints it as an internal error, exit 1).

    ``argv``: the command line's words (its ``--session``/``--home`` are kept in the advice,
    and a usage error's advice may rewrite the line). A reader that left the shell's stdout
    is raised again: the shell ends (the one-shot ``kvcli shell`` then ends quietly)."""
    code = exit_code(error)
    if isinstance(error, (BrokenPipeError, StdoutClosed)):
        if where == "shell":
            raise error
        output.silence_stdout()
    elif isinstance(error, KeyboardInterrupt):
        output.print_interrupted(as_json, SHELL_INTERRUPTED if where == "shell" else None)
    elif isinstance(error, KVCliError):
        output.report_error(error, where, as_json=as_json, scope=typed_scope(argv))
    elif _is_click_error(error):
        _report_click_error(error, list(argv), where, as_json)
    elif isinstance(error, (MemoryError, OSError)) and code is not None:
        output.print_error(_resource_problem(error) or "", as_json=as_json)
    elif code is None and where == "shell" and isinstance(error, Exception):
        output.print_error(f"internal error: {type(error).__name__}: {error}", as_json=as_json)
        return output.EXIT_USER_ERROR
    return code


def _is_click_error(error: BaseException) -> bool:
    from typer import TyperException  # what click's exceptions derive from; imported with the parser

    return isinstance(error, TyperException)


def _resource_problem(error: BaseException) -> Optional[str]:
    from kvcli.osutil import resource_problem

    return resource_problem(error)


def _report_click_error(error: Any, argv: list[str], where: str, as_json: bool) -> None:
    """A click error as one line: a usage error (exit 2) with kvcli's advice, another (a
    file click cannot open) as click words it."""
    if error.exit_code != output.EXIT_USAGE_ERROR:
        output.print_error(error.format_message(), as_json=as_json)
        return
    message = error.format_message().rstrip(".")
    value = dash_value(argv, message)
    if value is not None:  # `push 3 '-ones(2)'`: a negative value, read as an option
        import shlex  # only for this advice: off the start-up path

        fixed = [*argv[:argv.index(value)], "--", *argv[argv.index(value):]]
        output.print_error(f"{value!r} is read as an option: put -- before a value that starts with '-'",
                           f"e.g. {output.command_text(shlex.join(fixed), where)}", as_json=as_json)
        return
    advice = usage_advice(argv, message, usage_command(error), where)
    if advice is not None:
        output.print_error(message, advice, as_json=as_json)
        return
    output.report_error(UsageError(message, command=usage_command(error)), where, as_json=as_json)


def usage_command(error: Any) -> Optional[str]:
    """The command words a click usage error is about (``pull``, ``sessions delete``)."""
    ctx = getattr(error, "ctx", None)
    path = getattr(ctx, "command_path", "") or ""
    words = path.split()[1:]
    return " ".join(words) or None


def dash_value(argv: list[str], message: str) -> Optional[str]:
    """The word of ``argv`` that click's "No such option: -o" is about, when that word is a
    value (``-ones(2)``, ``-1``, ``-.5``) rather than a misspelt option."""
    found = re.match(r"No such option: (-\S*)", message)
    if found is None:
        return None
    for word in argv:
        if word == "--":
            break
        looks_like_value = word[1:2].isdigit() or word[1:2] in ("(", ".", "[") or "(" in word
        if word.startswith(found.group(1)) and not word.startswith("--") and looks_like_value:
            return word
    return None


#: Commands people try from other tools, and what kvcli does instead.
NOT_COMMANDS = {
    "save": "a session is saved by every command that changes it (nothing to save or load); to copy one, use "
            "{export} and {import_}",
    "load": "a session is saved by every command that changes it (nothing to save or load); to copy one, use "
            "{export} and {import_}",
}


def usage_advice(argv: list[str], message: str, command: Optional[str], where: str) -> Optional[str]:
    """Advice for two usage errors people make: several keys as separate words (``pull w b``:
    one comma-separated list, ``pull w,b``) and a command kvcli does not need (``save``)."""
    import shlex

    missing = re.match(r"No such command '([^']*)'", message)
    if missing and missing.group(1) in NOT_COMMANDS:
        return NOT_COMMANDS[missing.group(1)].format(export=output.command_text("export DIR", where),
                                                     import_=output.command_text("import DIR", where))
    extra = re.match(r"Got unexpected extra argument(?:\(s\)|s)? \((.*)\)", message)
    if extra is None or command is None:
        return None
    from kvcli.cli import table

    entry = table.find(command)
    if entry is None or not entry.args or entry.args[0].complete != "key" or len(entry.args) != 1:
        return None
    words = extra.group(1).split()
    first = next((i for i, w in enumerate(argv) if w == words[0] and i > 0), None)
    if first is None or argv[first - 1].startswith("-"):
        return None
    fixed = [*argv[:first - 1], ",".join([argv[first - 1], *words]), *argv[first + len(words):]]
    return f"give several keys as one comma-separated list: {output.command_text(shlex.join(fixed), where)}"
