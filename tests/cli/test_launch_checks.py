"""``kvcli launch`` checks its own command line before it starts anything (Ray takes seconds
to start, and the mistakes below were reported only after it had)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner import run_kvcli

STARTING = "starting 1 key server"  # launch's note, printed just before Ray starts


@pytest.mark.parametrize("words, says", [
    (["--server", "2", "python", "x.py"], "no option '--server' (did you mean --servers?)"),
    (["--launcher", "local", "python", "x.py"], "--launcher is an option of MXNet's launch.py"),
    (["-H", "hosts", "python", "x.py"], "-H is an option of MXNet's launch.py"),
    (["-s", "2", "python", "x.py"], "for S key servers write --servers S (MXNet's launch.py -s S)"),
    (["--servers", "1", "--session", "x", "--", "python", "x.py"], "launch runs no session"),
])
def test_a_wrong_option_is_a_usage_error_before_ray_starts(tmp_path: Path, words: list[str], says: str) -> None:
    result = run_kvcli("launch", "-n", "2", *words, home=tmp_path, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert says in result.stderr and STARTING not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_session_named_before_launch_is_refused_too(tmp_path: Path) -> None:
    result = run_kvcli("-s", "2", "launch", "-n", "2", "--", "true", home=tmp_path)
    assert result.returncode == 2 and "launch runs no session" in result.stderr


def test_kvcli_session_from_the_environment_is_not_an_error(tmp_path: Path) -> None:
    # KVCLI_SESSION is set in many shells: only a typed -s is refused (the job fails later, on
    # the missing script, which is checked next)
    result = run_kvcli("launch", "-n", "1", "--", "python", "nosuch.py", home=tmp_path, cwd=tmp_path,
                       env={"KVCLI_SESSION": "exp"})
    assert result.returncode == 1 and "no script 'nosuch.py'" in result.stderr


@pytest.mark.parametrize("command, says", [
    (["python", "nosuch.py"], "python: no script 'nosuch.py' in "),
    (["python", "-u", "-W", "ignore", "nosuch.py"], "no script 'nosuch.py'"),
    (["nosuch-program", "x"], "cannot run 'nosuch-program': no such program on PATH"),
    (["./nosuch.sh"], "cannot run './nosuch.sh': no such program"),
])
def test_a_missing_program_or_script_is_reported_before_ray_starts(tmp_path: Path, command: list[str],
                                                                   says: str) -> None:
    result = run_kvcli("launch", "-n", "2", "--", *command, home=tmp_path, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert says in result.stderr and STARTING not in result.stderr


def test_python_script_finder() -> None:
    from kvcli.store.ray.launch import _python_script

    assert _python_script(["-u", "train.py", "--lr", "1"]) == "train.py"
    assert _python_script(["-X", "dev", "-W", "error", "t.py"]) == "t.py"
    assert _python_script(["-c", "print(1)"]) is None
    assert _python_script(["-m", "pkg.train"]) is None
    assert _python_script(["-mpkg"]) is None
    assert _python_script([]) is None
