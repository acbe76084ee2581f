"""How a failing command line ends: the exit code on each error class, and one mapping of
errors to exit codes and messages (kvcli.cli.failures) for the one-shot CLI and the shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

import kvcli.errors
from kvcli.cli import failures, output
from kvcli.errors import KVCliError, StdoutClosed, UnknownKeyError, UsageError
from kvcli.osutil import resource_problem


@pytest.fixture(autouse=True)
def plain_errors(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Error lines as plain text, in a console made for each test."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(output, "_stderr_console", None)
    yield


def test_every_error_class_carries_its_exit_code() -> None:
    """As click's exceptions: a user error exits 1, a usage error 2."""
    codes = {name: value.exit_code for name, value in vars(kvcli.errors).items()
             if isinstance(value, type) and issubclass(value, KVCliError)}
    assert codes.pop("UsageError") == 2
    assert len(codes) > 30 and set(codes.values()) == {1}
    assert output.EXIT_USER_ERROR == KVCliError.exit_code and output.EXIT_USAGE_ERROR == UsageError.exit_code


MISSING_KEY = UnknownKeyError("key 'w' is not initialised", remedy="init", key="w")
OUT_OF_MEMORY = MemoryError("Unable to allocate 8.00 GiB")
ONE_SHOT_AND_SHELL: list[tuple[BaseException, int, str, str]] = [
    # error, exit code, the one-shot CLI's line, the shell's line
    (MISSING_KEY, 1, "error: key 'w' is not initialised: run `kvcli init w VALUE` first",
     "error: key 'w' is not initialised: run `init w VALUE` first"),
    (UsageError("launch: -n takes a number", command="launch"), 2,
     "error: launch: -n takes a number: see `kvcli help launch`", "error: launch: -n takes a number: see `help launch`"),
    (KeyboardInterrupt(), 130, "interrupted", "interrupted (the session keeps its last committed state)"),
    (OUT_OF_MEMORY, 1, f"error: {resource_problem(OUT_OF_MEMORY)}", f"error: {resource_problem(OUT_OF_MEMORY)}"),
    (SystemExit(3), 3, "", ""),
]


@pytest.mark.parametrize("error,code,cli,shell", ONE_SHOT_AND_SHELL, ids=[type(case[0]).__name__ for case in ONE_SHOT_AND_SHELL])
def test_one_mapping_for_the_cli_and_the_shell(capsys: pytest.CaptureFixture[str], error: BaseException, code: int,
                                               cli: str, shell: str) -> None:
    for where, line in (("cli", cli), ("shell", shell)):
        assert failures.exit_code(error) == code
        assert failures.report(error, where, argv=["pull", "w"]) == code, where
        assert capsys.readouterr().err.splitlines() == ([line] if line else []), where


def test_json_error_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert failures.report(MISSING_KEY, "cli", as_json=True, argv=["-s", "exp", "pull", "w"]) == 1
    assert json.loads(capsys.readouterr().err) == {"error": "key 'w' is not initialised",
                                                   "hint": "run `kvcli -s exp init w VALUE` first"}
    assert failures.report(KeyboardInterrupt(), "shell", as_json=True) == 130
    assert json.loads(capsys.readouterr().err) == {"error": "interrupted",
                                                   "hint": "the session keeps its last committed state"}


def test_a_closed_stdout_ends_a_command_quietly(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    silenced: list[bool] = []
    monkeypatch.setattr(output, "silence_stdout", lambda: silenced.append(True))
    for error in (StdoutClosed(), BrokenPipeError()):
        assert failures.report(error, "cli") == 0
        with pytest.raises(type(error)):  # the shell ends: its own kvcli process ends quietly
            failures.report(error, "shell")
    assert silenced == [True, True] and capsys.readouterr().err == ""


def test_a_bug_keeps_its_traceback_in_a_one_shot_command_and_is_one_line_in_the_shell(
        capsys: pytest.CaptureFixture[str]) -> None:
    bug = ValueError("unexpected")
    assert failures.exit_code(bug) is None
    assert failures.report(bug, "cli") is None and capsys.readouterr().err == ""  # raised again by the caller
    assert failures.report(bug, "shell") == 1
    assert capsys.readouterr().err == "error: internal error: ValueError: unexpected\n"


@pytest.mark.parametrize("where,prefix", [("cli", "kvcli "), ("shell", "")])
def test_click_usage_errors_exit_2_with_kvclis_advice(capsys: pytest.CaptureFixture[str], where: str, prefix: str) -> None:
    from kvcli.cli.app import run_line

    assert run_line(["pull"], where=where) == 2
    assert capsys.readouterr().err == f"error: Missing argument 'KEY': see `{prefix}help pull`\n"
    assert run_line(["pull", "w", "b"], where=where) == 2
    assert capsys.readouterr().err == ("error: Got unexpected extra argument(s) (b): give several keys as one "
                                       f"comma-separated list: `{prefix}pull w,b`\n")
    assert run_line(["push", "w", "-1"], where=where) == 2
    assert capsys.readouterr().err == ("error: '-1' is read as an option: put -- before a value that starts with '-': "
                                       f"e.g. `{prefix}push w -- -1`\n")


@pytest.mark.parametrize("error", [MemoryError("Unable to allocate 8.00 GiB"), OSError(24, "Too many open files")],
                         ids=["memory", "descriptors"])
def test_the_shell_words_running_out_of_memory_as_a_one_shot_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     error: BaseException) -> None:
    """Before, the shell printed `internal error: MemoryError: ...` where `kvcli keys` said
    what ran out and how to raise the limit."""
    from kvcli.cli import commands
    from kvcli.cli.shell import Shell
    from kvcli.session import Session

    def run_out(*args: Any, **kwargs: Any) -> None:
        raise error

    monkeypatch.setattr(commands, "run_keys", run_out)
    with Session("s", tmp_path) as session:
        assert Shell(session).run(["keys"]) == 1
    line = "error: " + (resource_problem(error) or "not a resource problem")
    assert capsys.readouterr().err.splitlines() == [line]


def test_every_usage_error_of_the_cli_is_a_usage_error_class() -> None:
    """No front end marks a usage error by a field: the class says it (and its exit code)."""
    import ast

    cli = Path(failures.__file__).parent
    marked: list[str] = []
    for path in sorted(cli.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "remedy" and isinstance(node.value, ast.Constant) \
                    and node.value.value == "usage":
                marked.append(f"{path.name}:{node.lineno}")
    assert marked == []
