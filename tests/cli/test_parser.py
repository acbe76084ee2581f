"""The one parser: typer's click objects built from the command table, only the invoked
command built, every value converted by the table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from kvcli.cli import output, table
from kvcli.cli.table import Command, Opt

from .conftest import Parsed, kvcli_env


def test_a_one_shot_command_builds_only_its_own_command(tmp_path: Path) -> None:
    """`kvcli pull k` builds `pull` alone, and typer's pydantic conversion is never imported
    (it cost more than numpy's import)."""
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
    done = subprocess.run([sys.executable, "-c", probe], env=kvcli_env(tmp_path), capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.splitlines()[-1] == "['pull'] False", done.stderr


def test_help_and_completion_list_every_command(parse: Callable[..., Parsed], capsys: pytest.CaptureFixture[str]) -> None:
    from kvcli.cli.build import root_command

    assert list(root_command().commands) == [c.name for c in table.commands()]  # the table's order
    assert parse("--help").code == 0
    listed = capsys.readouterr().out
    assert all(f" {c.name} " in listed for c in table.commands())
    assert [c for c in root_command(for_shell=True).commands] == [c.name for c in table.commands() if c.in_shell]


# ---------------------------------------------------------------------- every option, through the table
def _sample(item: Any) -> str:
    """A valid value for table option or argument ``item``, other than its default."""
    if item.kind == "int":
        low = int(item.low) if item.low is not None else 1
        return str(low + 1 if item.high is None or low + 1 <= item.high else low)
    if item.kind == "float":
        low = item.low if item.low is not None else 0.0
        return str(low + 1.5 if item.high is None or low + 1.5 <= item.high else low)
    if item.kind == "choice":  # typed in capitals: a choice is read in any case
        return item.choices[-1].upper()
    return "some/file.json" if item.kind == "path" else "text"


def _expected(item: Any, text: str) -> Any:
    return item.convert(text) if isinstance(item, Opt) else Path(text) if item.kind == "path" else text


def _walk(commands: tuple[Command, ...], words: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Command]]:
    for command in commands:
        yield (*words, command.name), command
        yield from _walk(command.children, (*words, command.name))


def _global_value(options: Any, dest: str) -> Any:
    store = {flag_dest: name for name, flag_dest in output.STORE_OPTION_DESTS.items()}
    return options.store_options.get(store[dest]) if dest in store else getattr(options, dest)


@pytest.mark.parametrize("words,command", list(_walk(table.commands())),
                         ids=[" ".join(words) for words, _ in _walk(table.commands())])
def test_every_option_of_every_command_is_converted_by_the_table(parse: Callable[..., Parsed], words: tuple[str, ...],
                                                                   command: Command) -> None:
    """Each option (own and global, before and after the command) and argument reaches the
    implementation as the table converts it; an option not given has its table default."""
    arg_words: list[str] = []
    args: dict[str, Any] = {}
    for arg in command.args:
        texts = [_sample(arg), "more"] if arg.many else [_sample(arg)]
        arg_words += texts
        args[arg.dest] = [_expected(arg, t) for t in texts] if arg.many else _expected(arg, texts[0])
    required = [o for o in command.opts if o.required]  # given on every line, with their samples
    words = (*words, *[w for o in required for w in (o.long, _sample(o))])
    bare = parse(*words, "--", *arg_words)
    assert bare.command is command and bare.code == 0
    defaults = {o.dest: (False if o.kind == "flag" else o.convert(_sample(o)) if o.required else o.default)
                for o in command.opts}
    assert bare.values == {**args, **defaults}
    refused = dict(command.extra.get("refused", {}))
    globals_ = [o for o in table.GLOBAL_OPTIONS if o.dest not in refused and not command.option(o.long)]
    for opt in (*[o for o in command.opts if not o.required], *globals_):
        words_of = [opt.long] if opt.kind == "flag" else [opt.long, _sample(opt)]
        if opt.multiple:
            words_of += [opt.long, "other"]
        for line in ([*words, *words_of, "--", *arg_words], [*words_of, *words, "--", *arg_words]):
            if opt in command.opts and line[0] != words[0]:
                continue  # a command's own option goes after the command
            parsed = parse(*line)
            assert parsed.code == 0 and parsed.command is command, line
            got = parsed.values[opt.dest] if opt in command.opts else _global_value(parsed.options, opt.dest)
            want: Any = True if opt.kind == "flag" else opt.convert(_sample(opt))
            if opt.multiple:
                want = [want, opt.convert("other")]
            assert got == want, line
            if opt in command.opts:
                assert {k: v for k, v in parsed.values.items() if k != opt.dest} == \
                    {k: v for k, v in {**args, **defaults}.items() if k != opt.dest}, line


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
    assert parsed.options.json is True and parsed.values == {"keys": "3", "values": ["ones(2)"], "dtype": None}
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
