"""``kvcli shell``: a prompt_toolkit REPL over the same commands as the one-shot CLI.

Each line is split with :mod:`shlex` and run by the typer app's click command (with
``standalone_mode=False``) against the session the shell keeps open — there is no second
parser. The session keeps its store between lines, so device workers stay up; every
command still locks the session and commits, so another terminal sees each change (and
the shell sees theirs). History is kept in ``KVCLI_HOME/shell_history``; Tab completes
commands, options and existing keys; ``help`` and ``help CMD`` print help; Ctrl-D (or
``exit``) leaves. An error is printed and the shell goes on.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any, Iterable, Optional

from kvcli.cli import output
from kvcli.cli.commands import GlobalOptions
from kvcli.errors import KVCliError

EXIT_WORDS = ("exit", "quit")
#: Commands whose first argument is a key (completed from the session).
KEY_COMMANDS = ("init", "push", "pull", "delete")
BANNER = "kvcli shell on session {name} ({store} store, {keys} keys, updater {updater}). Type help, or Ctrl-D to exit."


def _click_exceptions() -> tuple[Any, Any, Any]:
    """(Exit, Abort, ClickException) of the click that typer uses."""
    import typer

    try:
        from typer._click.exceptions import ClickException  # typer >= 0.2x vendors click
    except ImportError:  # pragma: no cover - older typer
        from click.exceptions import ClickException
    return typer.Exit, typer.Abort, ClickException


class Shell:
    """Runs shell lines against an open :class:`kvcli.session.Session`."""

    def __init__(self, session: Any, json_output: bool = False) -> None:
        from kvcli.cli.app import build_app
        from typer.main import get_command

        self.session = session
        self.command = get_command(build_app())
        self.options = GlobalOptions(json=json_output, live=session)
        self.exceptions = _click_exceptions()

    @property
    def command_names(self) -> list[str]:
        return sorted(self.command.commands)  # type: ignore[attr-defined]

    def execute(self, line: str) -> bool:
        """Run one line; False when the shell should exit. Never raises for a bad line."""
        text = line.strip()
        if not text or text.startswith("#"):
            return True
        from kvcli.values import MAX_TEXT  # the value language's cap, plus room for the command and keys

        if len(text) > MAX_TEXT + 4096:  # checked first: shlex would take minutes on megabytes
            output.print_error(
                f"the line is {len(text):,} characters long, over {MAX_TEXT + 4096:,}: put big values in a .npy file (@file.npy)"
            )
            return True
        try:
            args = shlex.split(text)
        except ValueError as error:
            output.print_error(f"cannot split the line ({error}): close the quotes")
            return True
        if args and args[0] == "kvcli":  # a pasted one-shot command
            args = args[1:]
        if not args:
            return True
        if args[0] in EXIT_WORDS:
            return False
        if args[0] in ("help", "?"):
            args = [*args[1:2], "--help"]
        self.run(args)
        return True

    def run(self, args: list[str]) -> None:
        exit_, abort, click_exception = self.exceptions
        try:
            self.command.main(args, prog_name="kvcli", standalone_mode=False, obj=self.options)
        except exit_:
            pass
        except abort:
            output.print_error("aborted")
        except click_exception as error:
            error.show()
        except KVCliError as error:
            output.print_error(str(error))
        except KeyboardInterrupt:
            output.print_error("interrupted (the session keeps its last committed state)")
        except SystemExit:
            pass
        except Exception as error:  # a bug: report it, keep the shell
            output.print_error(f"internal error: {type(error).__name__}: {error}")
        finally:
            sys.stdout.flush()

    def banner(self) -> str:
        try:
            info = self.session.describe()
        except KVCliError as error:
            return f"kvcli shell on session {self.session.name} ({error}). Type help, or Ctrl-D to exit."
        return BANNER.format(
            name=self.session.name, store=info["store"]["type"], keys=len(info["keys"]), updater=info["updater"]
        )


def make_completer(shell: Shell) -> Any:
    """Tab completion of command names, their options, and the session's keys."""
    from prompt_toolkit.completion import Completer, Completion

    class ShellCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterable[Completion]:
            text = document.text_before_cursor
            words = text.split()
            current = "" if not words or text.endswith((" ", "\t")) else words[-1]
            done = words if not current else words[:-1]
            for candidate in candidates(shell, done, current):
                yield Completion(candidate, start_position=-len(_tail(current)))

    return ShellCompleter()


def _tail(current: str) -> str:
    """The part of a comma-separated key list being completed."""
    return current.rsplit(",", 1)[-1] if "," in current and not current.startswith("-") else current


def candidates(shell: Shell, done: list[str], current: str) -> list[str]:
    """What may follow the words ``done`` when the word being typed is ``current``."""
    names = shell.command_names + ["help", *EXIT_WORDS]
    if done and done[0] == "kvcli":
        done = done[1:]
    if not done:
        return [n for n in names if n.startswith(current)]
    command = done[0]
    if command == "help":
        return [n for n in shell.command_names if n.startswith(current)] if len(done) == 1 else []
    click_command = shell.command.commands.get(command)  # type: ignore[attr-defined]
    if click_command is None:
        return []
    if current.startswith("-"):
        flags = sorted({opt for p in click_command.params for opt in getattr(p, "opts", []) if opt.startswith("--")})
        return [f for f in flags + ["--help"] if f.startswith(current)]
    positionals = [w for w in done[1:] if not w.startswith("-")]
    if command in KEY_COMMANDS and not positionals:
        tail = _tail(current)
        typed = set(current.split(",")[:-1])
        return [k for k in (str(key) for key in shell.session.peek_keys()) if k.startswith(tail) and k not in typed]
    return []


def run_shell(
    session: Any,
    *,
    json_output: bool = False,
    input: Any = None,  # noqa: A002 - prompt_toolkit's name
    output_: Any = None,
    history_path: Optional[Path] = None,
) -> None:
    """Read and run lines until Ctrl-D or ``exit``. ``input``/``output_`` are for tests."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    shell = Shell(session, json_output=json_output)
    if input is None and not sys.stdin.isatty():  # `kvcli shell < commands.txt`: no prompt
        for line in sys.stdin:
            if not shell.execute(line):
                break
        return
    history: Any
    path = history_path or session.home / "shell_history"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        history = FileHistory(str(path))
    except OSError:
        history = InMemoryHistory()
    prompt = PromptSession(
        history=history,
        completer=make_completer(shell),
        complete_while_typing=False,
        input=input,
        output=output_,
    )
    output.print_text(shell.banner())
    while True:
        try:
            line = prompt.prompt(f"kvcli:{session.name}> ")
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        if not shell.execute(line):
            break
