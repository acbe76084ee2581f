"""Fixtures for the CLI tests: run the real ``kvcli`` binary in a temporary home."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple, Optional

import numpy as np
import pytest

from tests.runner import KVCLI, run_kvcli  # noqa: F401 - KVCLI is used by this folder's tests
from tests.runner import kvcli_env as shared_env

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    code: int
    out: str
    err: str

    def array(self) -> np.ndarray:
        """The printed numpy array (all numbers of stdout, as floats)."""
        text = self.out.replace("[", " ").replace("]", " ")
        return np.array([float(x) for x in text.split()])


Runner = Callable[..., Result]


def kvcli_env(home: Path, **extra: str) -> dict[str, str]:
    return shared_env(home, **extra)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def kv(home: Path) -> Runner:
    """``kv("push", "3", "ones(3)")`` runs the kvcli binary; returns code, stdout, stderr."""

    def run(*args: str, input: Optional[bytes] = None, env: Optional[dict[str, str]] = None, timeout: float = 60) -> Result:
        proc = run_kvcli(*args, home=home, env=env, timeout=timeout, input=input)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run


class Parsed(NamedTuple):
    """What the parser hands the implementations for one command line (:func:`parse`)."""

    code: int
    #: the table's Command (None when the line is refused)
    command: Any
    options: Any
    values: dict[str, Any]


@pytest.fixture
def parse(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Parsed]:
    """``parse("pull", "3", "-d", "2")`` runs the parser (typer's click objects, through
    :func:`kvcli.cli.app.run_line` with the fast path off) with the implementations replaced:
    the exit code, the table command that would run (None when the line is refused), its
    global options and its values. Errors are printed as the CLI prints them. ``obj=``: the
    shell's GlobalOptions, for a shell line."""
    from kvcli.cli import build, output
    from kvcli.cli.app import run_line

    monkeypatch.setenv("KVCLI_NO_FAST_PATH", "1")
    monkeypatch.setenv("NO_COLOR", "1")  # errors as plain text, in a console made for this test
    monkeypatch.setattr(output, "_stderr_console", None)
    seen: list[tuple[Any, Any, dict[str, Any]]] = []
    monkeypatch.setattr(build, "dispatch", lambda command, options, values: seen.append((command, options, values)))

    def run(*argv: str, obj: Any = None) -> Parsed:
        seen.clear()
        code = run_line(list(argv), where="cli" if obj is None else "shell", obj=obj)
        return Parsed(code, *seen[-1]) if seen else Parsed(code, None, None, {})

    return run


def table_commands(commands: Any = None, words: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command of the table with the words that name it (``("sessions", "delete")``)."""
    from kvcli.cli import table

    found = []
    for command in table.commands() if commands is None else commands:
        found.append(((*words, command.name), command))
        found += table_commands(command.children, (*words, command.name))
    return found


def sample_value(item: Any) -> str:
    """A valid value for table option or argument ``item``, other than its default."""
    if item.kind == "int":
        low = int(item.low) if item.low is not None else 1
        return str(low + 1 if item.high is None or low + 1 <= item.high else low)
    if item.kind == "float":
        low = item.low if item.low is not None else 0.0
        return str(low + 1.5 if item.high is None or low + 1.5 <= item.high else low)
    if item.kind == "choice":  # typed in capitals: a choice is read in any case
        return str(item.choices[-1]).upper()
    return "some/file.json" if item.kind == "path" else "text"


def sample_lines(words: tuple[str, ...], command: Any) -> Iterator[list[str]]:
    """Command lines of ``command`` (named by ``words``): its arguments alone, then with each
    option (its own after the command, each global one before and after it) given a sample
    value; required options are on every line."""
    from kvcli.cli import table

    arg_words: list[str] = []
    for arg in command.args:
        arg_words += [sample_value(arg), "more"] if arg.many else [sample_value(arg)]
    words = (*words, *[w for o in command.opts if o.required for w in (o.long, sample_value(o))])
    yield [*words, "--", *arg_words]
    refused = dict(command.extra.get("refused", {}))
    globals_ = [o for o in table.GLOBAL_OPTIONS if o.dest not in refused and not command.option(o.long)]
    for opt in (*[o for o in command.opts if not o.required], *globals_):
        given = [opt.long] if opt.kind == "flag" else [opt.long, sample_value(opt)]
        given += [opt.long, "other"] if opt.multiple else []
        yield [*words, *given, "--", *arg_words]
        if opt in globals_:
            yield [*given, *words, "--", *arg_words]
