"""``kvcli shell``: a prompt_toolkit REPL over the same commands as the one-shot CLI.

Each line is split with :mod:`shlex` and run as a one-shot command line is
(:func:`kvcli.cli.app.run_line`: the fast path, else the click command built from the same
table, without the commands that cannot run here: ``shell``, ``launch``) against the session
the shell keeps open. The session keeps its store
between lines, so device workers stay up; every command still locks the session and
commits, so another terminal sees each change (and the shell sees theirs).

Interactive: history in ``KVCLI_HOME/shell_history``; Tab completes commands, options,
keys, file paths and updater specs; the bottom line shows the arguments of the command
being typed; ``help`` and ``help CMD``; Ctrl-C cancels the running command ("interrupted",
nothing half-written) and the shell goes on; Ctrl-D (or ``exit``) leaves. An error is
printed in the shell's words (``help pull``, ``reset``) and the shell goes on.

Script (a pipe on stdin, or ``--file``): no prompt; the first failing line stops the script
with exit 1 (``--keep-going``: run every line, then exit 1 with the count of failures).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any, Iterable, Optional

from kvcli.cli import output
from kvcli.cli.core import GlobalOptions
from kvcli.errors import KVCliError

EXIT_WORDS = ("exit", "quit")
BANNER = "kvcli shell on session {name} ({store} store, {keys}, updater {updater}). Type help, or Ctrl-D to exit."


class Shell:
    """Runs shell lines against an open :class:`kvcli.session.Session`."""

    def __init__(self, session: Any, json_output: bool = False) -> None:
        from kvcli.cli.build import root_command

        self.session = session
        self.command = root_command(for_shell=True)
        self.options = GlobalOptions(json=json_output, live=session)
        #: N of ``exit N`` (None: not left by ``exit N``)
        self.exit_code: Optional[int] = None

    @property
    def command_names(self) -> list[str]:
        return sorted(self.command.commands)

    def execute(self, line: str) -> bool:
        """Run one line; False when the shell should exit. Never raises for a bad line;
        :attr:`last_ok` says whether the line succeeded."""
        self.last_ok = True
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
            output.print_error(f"cannot split the line ({error})", "close the quotes", as_json=self.options.json)
            self.last_ok = False
            return True
        if args and args[0] == "kvcli":  # a pasted one-shot command
            args = args[1:]
        if not args:
            return True
        if args[0] in EXIT_WORDS:
            return self._exit(args)
        if args[0] == "clear" and len(args) == 1:
            clear_screen()
            return True
        if args[0] == "?":
            args = ["help", *args[1:]]
        from kvcli.cli import table

        entry = table.find(args[0])
        if entry is not None and not entry.in_shell:
            output.print_error(f"{entry.name} does not run inside the shell",
                               f"run `kvcli {entry.name}` in a terminal; type help for the shell's commands",
                               as_json=self.options.json)
            self.last_ok = False
            return True
        self.last_ok = self.run(args) == 0
        return True

    def _exit(self, args: list[str]) -> bool:
        """``exit`` / ``exit N`` (0 to 255, as in sh): False leaves the shell with that code."""
        from kvcli.config import parse_number
        from kvcli.errors import BadValueError

        try:
            if len(args) > 2:
                raise BadValueError("takes one number")
            self.exit_code = parse_number(args[1], "int", 0, 255) if len(args) == 2 else None
        except BadValueError:
            output.print_error(f"{' '.join(args)}: exit takes one number from 0 to 255", "e.g. exit 3",
                               as_json=self.options.json)
            self.last_ok = False
            return True
        return False

    def run(self, args: list[str]) -> int:
        """Run one command's words; returns its exit code (errors are printed, a bug as an
        internal error: the shell goes on)."""
        from kvcli.cli.app import run_line

        try:
            return run_line(args, where="shell", obj=self.options, as_json=self.options.json)
        finally:
            sys.stdout.flush()

    def banner(self) -> str:
        try:
            info = self.session.describe()
        except KVCliError as error:
            return f"kvcli shell on session {self.session.name} ({error}). Type help, or Ctrl-D to exit."
        return BANNER.format(
            name=self.session.name, store=info["store"]["type"], keys=output.plural(len(info["keys"]), "key"),
            updater=info["updater"],
        )


def clear_screen() -> None:
    """``clear``: wipe the terminal (nothing on a pipe, whose reader wants no control codes)."""
    if sys.stdout.isatty():
        sys.stdout.write("\x1b[H\x1b[2J\x1b[3J")
        sys.stdout.flush()


def make_completer(shell: Shell) -> Any:
    """Tab completion of command names, their options, keys, files and updater specs."""
    from prompt_toolkit.completion import Completer, Completion

    class ShellCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterable[Completion]:
            text = document.text_before_cursor
            words = text.split()
            current = "" if not words or text.endswith((" ", "\t")) else words[-1]
            done = words if not current else words[:-1]
            # a command name is always followed by its arguments: insert the space too
            # (`init` then `3` would otherwise read `init3`)
            after = " " if not done or (done == ["kvcli"]) else ""
            for candidate in candidates(shell, done, current):
                yield Completion(candidate + after, start_position=-len(_tail(current)), display=candidate)

    return ShellCompleter()


def _tail(current: str) -> str:
    """The part of a comma-separated key list (or of a ``@file`` value) being completed."""
    if current.startswith("@"):
        return current[1:]
    return current.rsplit(",", 1)[-1] if "," in current and not current.startswith("-") else current


def _click_command(shell: Shell, done: list[str]) -> tuple[Any, list[str]]:
    """The (sub-)command the words ``done`` name, and the words after it."""
    command: Any = shell.command
    index = 0
    while index < len(done) and hasattr(command, "commands"):
        sub = command.commands.get(done[index])
        if sub is None:
            return None, []
        command, index = sub, index + 1
    return (command if command is not shell.command else None), done[index:]


def candidates(shell: Shell, done: list[str], current: str) -> list[str]:
    """What may follow the words ``done`` when the word being typed is ``current``."""
    from kvcli.cli import completion, table

    names = sorted([*shell.command_names, *EXIT_WORDS, "clear"])
    if done and done[0] == "kvcli":
        done = done[1:]
    if not done:
        return [n for n in names if n.startswith(current)]
    if done[0] == "help":
        return [n for n in shell.command_names if n.startswith(current)] if len(done) == 1 else []
    click_command, rest = _click_command(shell, done)
    if click_command is None:
        return []
    if current.startswith("-"):
        flags = sorted({opt for p in click_command.params for opt in getattr(p, "opts", []) if opt.startswith("--")})
        return [f for f in flags if f.startswith(current)]
    entry = table.find(done[0])
    if entry is not None and len(done) > 1 and entry.children:
        entry = next((c for c in entry.children if c.name == done[1]), None)
    if entry is None:
        return []
    # the option whose value is being typed, else the next positional argument
    if rest and rest[-1].startswith("-"):
        opt = entry.option(rest[-1]) or table.global_option(rest[-1])
        if opt is not None and opt.takes_value:
            return completion.values(opt.complete, current, shell.session, shell=True)
    positionals = [w for i, w in enumerate(rest) if not w.startswith("-") and not _is_option_value(entry, rest, i)]
    arg = _nth_arg(entry, len(positionals))
    if arg is None:
        return []
    return completion.values(arg.complete, current, shell.session, shell=True)


def _is_option_value(entry: Any, words: list[str], index: int) -> bool:
    from kvcli.cli import table

    if index == 0:
        return False
    previous = words[index - 1]
    opt = entry.option(previous) or table.global_option(previous)
    return bool(opt is not None and opt.takes_value)


def _nth_arg(entry: Any, index: int) -> Any:
    for arg in entry.args:
        if index == 0 or arg.many:
            return arg
        index -= 1
    return None


def argument_hint(shell: Shell, text: str) -> str:
    """The arguments of the command being typed, as redis-cli shows them (``push KEY VALUE...``)."""
    from kvcli.cli import table

    words = text.split()
    if not words:
        return ""
    entry = table.find(words[0])
    if entry is None or not entry.in_shell:
        return ""
    if entry.children and len(words) > 1:
        entry = next((c for c in entry.children if c.name == words[1]), entry)
    parts = [_arg_word(a) if a.required else f"[{_arg_word(a)}]" for a in entry.args]
    parts += [f"[{o.long}{' ' + o.shown_metavar() if o.takes_value else ''}]" for o in entry.opts]
    return " ".join([entry.name if entry.name == words[0] else f"{words[0]} {entry.name}", *parts])


def _arg_word(arg: Any) -> str:
    """``VALUE...`` for an argument that takes several (never ``...`` twice), else its metavar."""
    return arg.metavar + ("..." if arg.many and not arg.metavar.endswith("...") else "")


def run_script(shell: Shell, lines: Iterable[str], keep_going: bool = False, source: str = "stdin") -> int:
    """Run script lines; stops at the first failing line unless ``keep_going``. Returns the
    number of failed lines (``exit N`` ends the script: see :attr:`Shell.exit_code`)."""
    failures = 0
    for number, line in enumerate(lines, 1):
        if not shell.execute(line):
            break
        if not shell.last_ok:
            failures += 1
            if not keep_going:
                output.print_error(f"{source} line {number} failed: stopped (the lines before it were committed)",
                                   "fix the line, or pass --keep-going to run every line",
                                   as_json=shell.options.json)
                return failures
    if failures:
        output.print_error(f"{output.plural(failures, 'line')} of {source} failed", as_json=shell.options.json)
    return failures


def run_shell(
    session: Any,
    *,
    json_output: bool = False,
    input: Any = None,  # noqa: A002 - prompt_toolkit's name
    output_: Any = None,
    history_path: Optional[Path] = None,
    script: Optional[Path] = None,
    keep_going: bool = False,
) -> int:
    """Read and run lines until Ctrl-D or ``exit``; returns the shell's exit code: N of
    ``exit N``, else 1 when a script line failed, else 0. ``input``/``output_`` are for tests."""
    shell = Shell(session, json_output=json_output)
    if script is not None and str(script) != "-":
        try:
            lines = Path(script).expanduser().read_text().splitlines()
        except OSError as error:
            raise KVCliError(f"cannot read the script {script}: {error.strerror}") from None
        return _code(shell, run_script(shell, lines, keep_going, source=str(script)))
    if script is not None or (input is None and not sys.stdin.isatty()):  # a pipe: no prompt
        return _code(shell, run_script(shell, sys.stdin, keep_going))
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    history: Any
    path = history_path or session.home / "shell_history"
    try:
        history = FileHistory(str(private_history(path)))
    except (OSError, KVCliError):  # no private file for it: this shell's lines are not kept
        history = InMemoryHistory()
    prompt: PromptSession[str] = PromptSession(
        history=history,
        completer=make_completer(shell),
        complete_while_typing=False,
        bottom_toolbar=lambda: argument_hint(shell, prompt.default_buffer.text) or None,
        input=input,
        output=output_,
    )
    output.print_text(shell.banner())
    while True:
        try:
            line = prompt.prompt(f"kvcli:{session.name}> ")
        except KeyboardInterrupt:  # Ctrl-C at the prompt: a new line, as bash does
            continue
        except EOFError:
            break
        if not shell.execute(line):
            break
    return _code(shell, 0)


def private_history(path: Path) -> Path:
    """``path``, the history file (every line typed, values too), made 0600 in a home made
    0700 if need be, as every file of kvcli's; an older file readable by others is closed."""
    import os

    from kvcli.osutil import NOFOLLOW, PRIVATE_FILE, private_dir

    private_dir(path.parent, "home folder", create=True)
    handle = os.open(path, os.O_RDONLY | os.O_CREAT | NOFOLLOW, PRIVATE_FILE)
    try:
        if os.fstat(handle).st_mode & 0o077:
            os.fchmod(handle, PRIVATE_FILE)
    finally:
        os.close(handle)
    return path


def _code(shell: Shell, failures: int) -> int:
    if shell.exit_code is not None:
        return shell.exit_code
    return output.EXIT_USER_ERROR if failures else 0


def run_shell_command(options: GlobalOptions, file: Optional[Path] = None, keep_going: bool = False) -> None:
    """``kvcli shell [FILE]``: open the session and read commands until the end."""
    if options.live is not None:
        from kvcli.errors import SessionError

        raise SessionError("you are already in the kvcli shell")
    from kvcli.session import Session

    with Session(options.session, options.home, store_type=options.store_type, store_options=options.store_options) as session:
        code = run_shell(session, json_output=options.json, script=file, keep_going=keep_going)
    if code:
        raise SystemExit(code)
