"""The startup fast path (kvcli.cli.fast) reads command lines as the parser (typer's click
objects) does: every command and option both ways, and random lines; and it spares a
one-shot command typer's import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvcli.cli import fast, table
from kvcli.cli.core import GlobalOptions
from kvcli.cli.table import Command

from .conftest import Parsed, kvcli_env, run_kvcli, sample_lines, sample_value, table_commands

#: The shell's options (its open session) for a shell line.
SHELL = GlobalOptions(live=SimpleNamespace(name="s", home=Path("shell-home")))


def _both_ways(parse: Callable[..., Parsed], line: list[str], prior: Optional[GlobalOptions] = None) -> Any:
    """The fast path's reading of ``line`` (None: it leaves the line to typer), after checking
    that typer reads it the same way."""
    read = fast.parse(line, prior)
    if read is not None:
        parsed = parse(*line, obj=prior)
        assert (parsed.code, parsed.command, parsed.options, parsed.values) == (0, *read), line
    return read


@pytest.mark.parametrize("words,command", table_commands(), ids=[" ".join(words) for words, _ in table_commands()])
def test_every_command_and_option_parses_the_same_both_ways(parse: Callable[..., Parsed], words: tuple[str, ...],
                                                             command: Command) -> None:
    """A command without sub-commands, passed-through words or refused options is read by
    the fast path with every option, as typer reads it; the others (and sub-commands) are left
    to typer."""
    for prior in (None, SHELL):
        for line in sample_lines(words, command):
            read = _both_ways(parse, line, prior)
            assert (read is not None) == (len(words) == 1 and fast.readable(command, prior)), (line, prior)


def test_the_fast_path_reads_the_hot_commands_and_most_others() -> None:
    readable = {command.name for command in table.commands() if fast.readable(command)}
    assert {"init", "push", "pull", "keys", "show", "set-updater", "viz", "summary"} <= readable
    assert readable.isdisjoint({"sessions", "cluster", "launch"})
    assert not fast.readable(table.find("shell"), SHELL)  # type: ignore[arg-type]


def test_what_it_leaves_to_typer() -> None:
    for line in (["pull", "3", "--help"], ["pull", "3", "-d4"], ["pull", "3", "--devices", "0"], ["pull"],
                 ["pull", "3", "4"], ["push", "3", "-1"], ["--version"], ["--session"], ["pull", "3", "--json", "--json"],
                 ["-s", "a", "pull", "3", "-s", "b"], ["--type", "bogus", "keys"], ["--json=1", "keys"], ["sessions"],
                 ["launch", "-n", "1", "--", "true"], ["frobnicate"], []):
        assert fast.parse(line) is None, line


#: Words that are values somewhere, or look like options: what a random line is made of.
VALUES = ["--", "-", "-1", "0", "2", "x", "3", "3,4", "ones(2)", "DEVICE", "local", "a=1", "", "--json", "-h", "-V",
          "--bogus", "-d4", "push", "some/file.json"]


@st.composite
def _option_words(draw: st.DrawFn, opt: table.Opt) -> list[str]:
    flag = draw(st.sampled_from(opt.flags))
    if opt.kind == "flag":
        return [draw(st.sampled_from([flag, flag + "=1"]))]
    value = draw(st.sampled_from([sample_value(opt)] * 3 + [draw(st.sampled_from(VALUES))]))  # mostly valid
    return draw(st.sampled_from([[flag, value], [f"{flag}={value}"] if flag.startswith("--") else [flag, value]]))


@st.composite
def _lines(draw: st.DrawFn) -> list[str]:
    """A command line of a table command: global options before it; after it its arguments,
    options and global options (mostly valid values, some not) in any order, sometimes a
    ``--`` or a stray word."""
    words, command = draw(st.sampled_from(table_commands()))
    globals_ = st.sampled_from(table.GLOBAL_OPTIONS)
    before = [draw(_option_words(draw(globals_))) for _ in range(draw(st.integers(0, 2)))]
    after: list[list[str]] = [[sample_value(arg)] for arg in command.args if arg.required]
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["option", "option", "option", "global", "stray"]))
        if kind == "option" and command.opts:
            after.append(draw(_option_words(draw(st.sampled_from(command.opts)))))
        elif kind == "global":
            after.append(draw(_option_words(draw(globals_))))
        elif kind == "stray":
            after.append([draw(st.sampled_from(VALUES))])
    after = draw(st.permutations(after))
    return [*(w for piece in before for w in piece), *words, *(w for piece in after for w in piece)]


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_lines(), st.booleans())
def test_random_lines_the_fast_path_reads_are_read_the_same_by_typer(parse: Callable[..., Parsed], line: list[str],
                                                                     in_shell: bool) -> None:
    _both_ways(parse, line, SHELL if in_shell else None)


def test_a_one_shot_command_on_the_fast_path_does_not_import_typer(tmp_path: Path) -> None:
    assert run_kvcli("init", "k", "ones(2)", home=tmp_path).returncode == 0
    probe = "\n".join((
        "import sys",
        "from kvcli.cli.app import main",
        "try:",
        "    main(['pull', 'k'])",
        "except SystemExit as done:",
        "    print(done.code, 'typer' in sys.modules)",
    ))
    done = subprocess.run([sys.executable, "-c", probe], env=kvcli_env(tmp_path), capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.splitlines()[-1] == "0 False", done.stderr
    slow = subprocess.run([sys.executable, "-c", probe], env=kvcli_env(tmp_path, KVCLI_NO_FAST_PATH="1"),
                          capture_output=True, text=True, timeout=120)
    assert slow.stdout.splitlines()[-1] == "0 True", slow.stderr
