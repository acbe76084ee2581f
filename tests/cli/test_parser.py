"""The one parser: typer's click objects built from the command table, only the invoked
command built, every value converted by the table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from kvcli.cli import output, table
from kvcli.cli.table import Command

from .conftest import Parsed, kvcli_env, sample_lines, table_commands


def test_a_one_shot_command_builds_only_its_own_command(tmp_path: Path) -> None:
    """Parsed by typer, `kvcli pull k` builds `pull` alone, and typer's pydantic conversion is
    never imported (it cost more than numpy's import)."""
    probe = "\n".join((
        "import sys",
        "from kvcli.cli.app import main",
        "from kvcli.cli.build import root_command",
        "try:",
        "    main(['pull', 'k'])",  # the session does not exist: exit 1, after parsing
        "except SystemExit:",
        "    pass",
        "commands = root_command().commands",
        "print(sorted(getattr(commands, 'built', commands)), 'pydantic' in sys.modules)",
    ))
    done = subprocess.run([sys.executable, "-c", probe], env=kvcli_env(tmp_path, KVCLI_NO_FAST_PATH="1"),
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[-1] == "['pull'] False", done.stderr


def test_help_and_completion_list_every_command(parse: Callable[..., Parsed], capsys: pytest.CaptureFixture[str]) -> None:
    from kvcli.cli.build import root_command

    assert list(root_command().commands) == [c.name for c in table.commands()]  # the table's order
    assert parse("--help").code == 0
    listed = capsys.readouterr().out
    assert all(f" {c.name} " in listed for c in table.commands())
    assert [c for c in root_command(for_shell=True).commands] == [c.name for c in table.commands() if c.in_shell]


# ---------------------------------------------------------------------- every option, through the table
def _expected(line: list[str], command: Command) -> dict[str, Any]:
    """The values the table gives ``command`` for ``line`` (one of :func:`sample_lines`)."""
    words = line[line.index("--") + 1:]
    values: dict[str, Any] = {}
    for arg in command.args:
        values[arg.dest] = [arg.convert(w) for w in words] if arg.many else arg.convert(words.pop(0))
    for opt in command.opts:
        given = [line[i + 1] for i, word in enumerate(line[:line.index("--")]) if word == opt.long]
        if opt.kind == "flag":
            values[opt.dest] = opt.long in line[:line.index("--")]
        elif opt.multiple:
            values[opt.dest] = [opt.convert(w) for w in given] or None
        else:
            values[opt.dest] = opt.convert(given[0]) if given else opt.default
    return values


def _global_value(options: Any, dest: str) -> Any:
    store = {flag_dest: name for name, flag_dest in output.STORE_OPTION_DESTS.items()}
    return options.store_options.get(store[dest]) if dest in store else getattr(options, dest)


@pytest.mark.parametrize("words,command", table_commands(), ids=[" ".join(words) for words, _ in table_commands()])
def test_every_option_of_every_command_is_converted_by_the_table(parse: Callable[..., Parsed], words: tuple[str, ...],
                                                                   command: Command) -> None:
    """Each option (own and global, before and after the command) and argument reaches the
    implementation as the table converts it; an option not given has its table default."""
    for line in sample_lines(words, command):
        parsed = parse(*line)
        assert parsed.code == 0 and parsed.command is command, line
        assert parsed.values == _expected(line, command), line
        for opt in table.GLOBAL_OPTIONS:
            given = [line[i + 1] for i, word in enumerate(line) if word == opt.long and i + 1 < len(line)]
            if opt.kind == "flag":
                assert _global_value(parsed.options, opt.dest) is (opt.long in line), line
            elif given:
                assert _global_value(parsed.options, opt.dest) == opt.convert(given[0]), line


def test_a_value_the_table_refuses_is_a_usage_error(parse: Callable[..., Parsed],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    for line, problem in (
        (("pull", "3", "-d", "0"), "'--devices' / '-d': '0' is outside 1..1,024: see `kvcli help pull`"),
        (("pull", "3", "-d", "x"), "'--devices' / '-d': 'x' is not a whole number: see `kvcli help pull`"),
        (("--type", "bogus", "keys"),
         "'--type' / '-t': 'bogus' is not one of 'local', 'device', 'dist_sync', 'dist_async': see `kvcli help`"),
        (("viz", "m.json", "--layout-timeout", "inf"),
         "'--layout-timeout': 'inf' is not a finite number: see `kvcli help viz`"),
    ):
        parsed = parse(*line)
        assert (parsed.code, parsed.command) == (2, None), line
        assert capsys.readouterr().err.splitlines() == [f"error: Invalid value for {problem}"], line


def test_global_options_before_and_after_the_command(parse: Callable[..., Parsed]) -> None:
    assert parse("pull", "3", "-s", "x").options.session == "x"
    assert parse("-s", "a", "pull", "3", "-s", "b").options.session == "b"  # after the command wins
    assert parse("--type", "DEVICE", "keys").options.store_type == "device"
    parsed = parse("init", "3", "ones(2)", "--json")
    assert parsed.options.json is True and parsed.values == {"keys": "3", "values": ["ones(2)"], "dtype": None,
                                                                   "yes": False}
    assert parse("push", "3", "ones(2)", "-d4").values["devices"] == 4
    assert parse("push", "3", "--", "-ones(2)").values["values"] == ["-ones(2)"]


def test_an_argument_and_an_option_of_the_table_are_declared_once() -> None:
    """Every parameter of every built command is one table entry (or typer's --help)."""
    from kvcli.cli.build import root_command

    def params(click_command: Any, entry: Command | None) -> Iterator[tuple[str, Any]]:
        names = {a.dest for a in entry.args} | {o.dest for o in entry.opts} if entry else set()
        names |= {("g_" if entry else "") + o.dest for o in table.GLOBAL_OPTIONS}
        for param in click_command.params:
            yield param.name, param.name in names or param.name in ("version", "install_completion", "show_completion")
        for child in entry.children if entry else ():
            yield from params(click_command.commands[child.name], child)

    root = root_command()
    found = list(params(root, None))
    for name in root.commands:
        found += list(params(root.commands[name], table.find(name)))
    assert [name for name, known in found if not known] == []
