"""``kvcli shell``: the same commands over a session kept open, driven by pipe input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from kvcli.cli.shell import Shell, candidates, run_shell
from kvcli.session import Session

from .conftest import Runner


def drive(session: Session, text: str, history: Path, **kwargs) -> None:
    with create_pipe_input() as pipe:
        pipe.send_text(text)
        pipe.close()
        run_shell(session, input=pipe, output_=DummyOutput(), history_path=history, **kwargs)


@pytest.fixture
def session(home: Path) -> Iterator[Session]:
    with Session("default", home) as s:
        yield s


def test_seed_in_the_shell(session: Session, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    lines = [
        "init 3 'ones(3,3)*2'", "pull 3",
        "push 3 'ones(3,3)*8'", "pull 3",
        "init 3 'zeros(3,3)' --yes", "push 3 'ones(3,3)' --devices 4", "pull 3",
        "set-updater scale-add:2", "push 3 'ones(3,3)'", "pull 3",
        "pull 3 --devices 4",
        "init 5,7,9 'ones(2,2)'", "push 5,7,9 'ones(2,2)'", "pull 7",
        "init 10,11,12 'ones(2,2)*0.5'", "push 10,11,12 'ones(2,2)' -d 2", "pull 11 -d 2",
    ]
    drive(session, "\n".join(lines) + "\n", tmp_path / "history")
    out, err = capfd.readouterr()
    arrays = [block for block in out.split("\n") if block.startswith("[")]
    firsts = [float(a.strip("[]").split()[0]) for a in arrays]
    assert firsts == [2, 8, 4, 6, 6, 3, 4.5]
    assert "re-initialised key 3" in err
    assert (tmp_path / "history").read_text().count("pull 3") >= 4


def test_errors_never_end_the_shell(session: Session, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    text = "\n".join([
        "bogus", "pull nope", "init k 'ones(10**12)'", "init 'unclosed", "push k --devices 0",
        "init ../x 'ones(2)'", "init 'a\x00b' 'ones(2)'", "set-updater nonsense", "shell", "launch -n 2 -- true", "",
        "# a comment", "init k 'ones(2)*7'", "pull k",
    ]) + "\n"
    drive(session, text, tmp_path / "h")
    out, err = capfd.readouterr()
    assert out.rstrip().endswith("[7. 7.]")
    for message in ("No such command 'bogus'", "not initialised", "limit", "close the quotes", "not allowed", "does not parse",
                    "shell does not run inside the shell", "launch does not run inside the shell", "run `init nope VALUE` first"):
        assert message in err, message


def test_help_exit_and_json(session: Session, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    drive(session, "help\nhelp push\ninit k 'ones(2)'\npull k\nexit\npull k\n", tmp_path / "h", json_output=True)
    out, _ = capfd.readouterr()
    assert "push" in out and "Example" in out
    payloads = [json.loads(line) for line in out.splitlines() if line.startswith('{"key"')]
    assert payloads == [{"key": "k", "shape": [2], "dtype": "float32", "value": [1.0, 1.0]}]  # nothing after exit


def test_shell_and_one_shot_commands_see_each_other(session: Session, kv: Runner) -> None:
    shell = Shell(session)
    assert shell.execute("init k 'zeros(2)'")
    assert kv("pull", "k").array().tolist() == [0, 0]  # committed after the command
    assert kv("push", "k", "ones(2)*3").code == 0
    assert kv("set-updater", "sum").code == 0
    shell.execute("push k 'ones(2)'")  # sees the new value and the new updater
    assert kv("pull", "k").array().tolist() == [4, 4]


def test_device_workers_stay_up(home: Path) -> None:
    with Session("dev", home, store_type="device", store_options={"num_devices": 2}) as session:
        shell = Shell(session)
        shell.execute("init k 'zeros(4)'")
        shell.execute("push k 'ones(4)' -d 2")
        pids = session.store.backend.device_pids
        assert len(pids) == 2
        for _ in range(3):
            shell.execute("push k 'ones(4)' -d 2")
        assert session.store.backend.device_pids == pids
        assert session.pull(["k"])[0][0].tolist() == [2, 2, 2, 2]


def test_completion(session: Session) -> None:
    shell = Shell(session)
    shell.execute("init alpha,beta 'ones(1)'")
    assert candidates(shell, [], "pu") == ["pull", "push"]
    assert candidates(shell, ["pull"], "") == ["alpha", "beta"]
    assert candidates(shell, ["push"], "b") == ["beta"]
    assert candidates(shell, ["pull"], "alpha,") == ["beta"]
    assert "--devices" in candidates(shell, ["push", "alpha"], "--d")
    assert candidates(shell, ["help"], "set") == ["set-compression", "set-updater"]
    assert candidates(shell, ["pull", "alpha"], "") == []


def test_completer_with_prompt_toolkit_document(session: Session) -> None:
    from prompt_toolkit.document import Document

    from kvcli.cli.shell import make_completer

    shell = Shell(session)
    shell.execute("init weight 'ones(1)'")
    completer = make_completer(shell)
    got = [c.text for c in completer.get_completions(Document("pull we"), None)]
    assert got == ["weight"]


def test_shell_binary_reads_piped_lines(kv: Runner) -> None:
    kv("init", "3", "ones(2)")
    result = kv("shell", "--keep-going", input=b"pull 3\npush 3 'ones(2)*6'\nbogus\npull 3\nexit\npull 3\n")
    assert result.code == 1  # a script with a failed line fails, after running every line
    assert result.out == "[1. 1.]\n[6. 6.]\n"
    assert "No such command 'bogus'" in result.err and "1 line of stdin failed" in result.err


def test_script_lines_skip_typer_where_the_fast_path_reads_them(session: Session,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22: a 10,000-line script spent a third of its time in typer's parsing; the lines
    the fast path reads (the table's commands without sub-commands) run straight, the rest
    go through typer, and the shell's open session still wins over KVCLI_SESSION."""
    from kvcli.cli import app
    from kvcli.cli.shell import run_script

    real = app.run_click
    typer_lines: list[list[str]] = []
    monkeypatch.setattr(app, "run_click", lambda argv, **kw: typer_lines.append(argv) or real(argv, **kw))
    monkeypatch.setenv("KVCLI_SESSION", "elsewhere")
    shell = Shell(session)
    lines = ["init w 'ones(2)'", "push w 'ones(2)*3'", "pull w", "keys", "show", "sessions", "pull w --help"]
    assert run_script(shell, lines) == 0
    assert typer_lines == [["sessions"], ["pull", "w", "--help"]]
    assert session.pull(["w"])[0][0].tolist() == [3.0, 3.0]
    assert not (session.home / "sessions" / "elsewhere").exists()
