"""The ``kvcli`` entry point: the one parser (typer's click objects, built from the command
table by :mod:`kvcli.cli.build`, only the invoked command), and one error policy.

The commands are declared once in :mod:`kvcli.cli.table`. Importing this module does not
import typer.

Exit codes: 0 success, 1 a kvcli error (one line: what is wrong and the fix), 2 a usage
error (unknown command or option, a bad option value), 130 interrupted (Ctrl-C). With
``--json`` an error is ``{"error": ..., "hint": ...}`` on stderr.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, Optional

from kvcli.cli import output
from kvcli.cli.core import GlobalOptions, typed_scope  # noqa: F401 - GlobalOptions re-exported
from kvcli.errors import KVCliError


def global_options(ctx: Any) -> GlobalOptions:
    """The :class:`GlobalOptions` of the running command (``ctx``: its typer Context)."""
    from kvcli.cli.build import global_options as find

    return find(ctx)


def build_app(for_shell: bool = False) -> Any:
    """The typer app with every command (see :func:`kvcli.cli.build.build_app`)."""
    from kvcli.cli.build import build_app as build

    return build(for_shell)


def __getattr__(name: str) -> Any:
    if name == "app":
        return build_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def wants_json(argv: list[str]) -> bool:
    """Whether errors are to be JSON: ``--json`` is among the options (before a ``--``)."""
    for token in argv:
        if token == "--":
            break
        if token == "--json":
            return True
    return False


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


def run_click(argv: list[str], *, where: str = "cli", obj: Any = None, as_json: bool = False) -> int:
    """Run ``argv`` through the typer app's click command; returns the exit code. Usage
    errors and kvcli errors are printed for ``where`` (``cli`` or ``shell``)."""
    from typer import Abort, Exit, TyperException

    from kvcli.cli.build import root_command

    command = root_command(for_shell=where == "shell")
    try:
        # typer's main() returns the code of an Exit (our commands return None), and turns
        # a Ctrl-C into Exit(130): give that back as the KeyboardInterrupt it was
        if obj is None:  # what the eager -V must know before the line is parsed
            obj = GlobalOptions(json=as_json)
        code = command.main(argv, prog_name="kvcli", standalone_mode=False, obj=obj)
    except Exit as done:
        code = done.exit_code
    except Abort:  # click turns a Ctrl-C in a prompt into Abort
        output.print_interrupted(as_json)
        return output.EXIT_INTERRUPTED
    except TyperException as error:
        if error.exit_code != output.EXIT_USAGE_ERROR:  # click's other errors (a file it cannot open)
            output.print_error(error.format_message(), as_json=as_json)
            return error.exit_code
        # a usage error (typer's public API names only their base class; their code is 2)
        # typer's coercion prefixes pydantic's "Value error, "; the hint follows after ": "
        message = error.format_message().replace("Value error, ", "").rstrip(".")
        value = dash_value(argv, message)
        if value is not None:  # `push 3 '-ones(2)'`: a negative value, read as an option
            import shlex  # only for this advice: off the start-up path

            fixed = [*argv[:argv.index(value)], "--", *argv[argv.index(value):]]
            output.print_error(f"{value!r} is read as an option: put -- before a value that starts with '-'",
                               f"e.g. {output.command_text(shlex.join(fixed), where)}", as_json=as_json)
            return output.EXIT_USAGE_ERROR
        advice = usage_advice(argv, message, usage_command(error), where)
        if advice is not None:
            output.print_error(message, advice, as_json=as_json)
            return output.EXIT_USAGE_ERROR
        problem = KVCliError(message, remedy="usage", command=usage_command(error))
        output.report_error(problem, where, as_json=as_json)
        return output.EXIT_USAGE_ERROR
    if code == output.EXIT_INTERRUPTED:
        raise KeyboardInterrupt
    return code if isinstance(code, int) else 0


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point of the ``kvcli`` console script."""
    # The CLI's array work is elementwise (no BLAS); starting OpenBLAS's thread pool would
    # cost more than the rest of a one-shot command. A value set by the user wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    output.quiet_ray_off_terminal()
    output.watch_stdout_pipe()
    argv_given = argv
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = wants_json(argv)
    request = os.environ.get("_KVCLI_COMPLETE")
    if request is not None:  # a shell's Tab (typer's scripts): the words as typed
        from kvcli.cli import completion

        if request in completion.SHELL_REQUESTS:
            raise SystemExit(completion.answer(request, lambda: run_click(argv), os.environ))
    try:
        code = run_click(argv, as_json=as_json)
    except KVCliError as error:
        output.report_error(error, "cli", as_json=as_json, scope=typed_scope(argv))
        code = output.exit_code(error)
    except KeyboardInterrupt:
        # the session commits atomically at the end of a command: an interrupted one
        # left the last committed state (uncommitted values were discarded)
        output.print_interrupted(as_json)
        code = output.EXIT_INTERRUPTED
    except (BrokenPipeError, output.StdoutClosed):  # `kvcli pull big | head`: the reader left; not ours
        output.silence_stdout()
        code = 0
    # after BrokenPipeError (an OSError) has been handled above
    except (MemoryError, OSError) as error:  # out of memory or descriptors (ulimit -v / -n): one line
        from kvcli.osutil import resource_problem

        problem = resource_problem(error)
        if problem is None:
            raise
        output.print_error(problem, as_json=as_json)
        code = output.EXIT_USER_ERROR
    try:
        sys.stdout.flush()
    except (BrokenPipeError, output.StdoutClosed):  # the reader left after the last write
        output.silence_stdout()
        code = 0 if code == output.EXIT_OK else code
    if argv_given is None and _joined_ray_cluster():
        # A process that joined the home's cluster has nothing left to tell it: its session
        # is committed and its Ray calls answered. Ray's exit handlers (disconnect, worker
        # teardown) would cost half a second of a one-shot command; the cluster sees the
        # driver leave and ends its job either way (kept servers are detached).
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)


def _joined_ray_cluster() -> bool:
    dist_group = sys.modules.get("kvcli.store.dist.group")
    return dist_group is not None and bool(dist_group.joined_cluster())
