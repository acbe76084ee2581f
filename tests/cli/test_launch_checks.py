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


def _launched(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    """Run ``kvcli ARGV`` in this process with Ray's launch replaced by a recorder: what the
    job would have been started with (``{}``: it was not started) and the exit code."""
    from kvcli.cli.app import main
    from kvcli.store.ray import launch as dist_launch

    started: dict = {}

    def record(command, num_workers, **kwargs):  # noqa: ANN001, ANN003, ANN202
        started.update(command=command, num_workers=num_workers, **kwargs)
        return [0] * num_workers

    monkeypatch.setattr(dist_launch, "launch", record)
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    return {"code": done.value.code, "err": capsys.readouterr().err, **started}


@pytest.mark.parametrize("before, after, servers, address", [
    ([], ["--num-servers", "2"], 2, None),
    (["--num-servers", "3"], [], 3, None),
    ([], ["--servers", "2", "--num-servers", "2"], 2, None),
    ([], [], 1, None),
    ([], ["--ray-address", "10.0.0.1:6379"], 1, "10.0.0.1:6379"),
    (["--ray-address", "10.0.0.1:6379"], ["--servers", "2"], 2, "10.0.0.1:6379"),
    ([], ["--address", "auto", "--ray-address", "auto"], 1, "auto"),
])
def test_every_server_and_address_option_launch_lists_is_honoured(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, before: list[str],
        after: list[str], servers: int, address: str | None) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KVCLI_RAY_ADDRESS", raising=False)
    started = _launched(monkeypatch, capsys, *before, "launch", "-n", "1", *after, "--", "true")
    assert started["code"] == 0, started["err"]
    assert started["num_servers"] == servers and started["address"] == address
    assert f"starting {servers} key server" in started["err"]


@pytest.mark.parametrize("words, says", [
    (["--type", "device"], "launch --type: the workers choose dist_sync or dist_async"),
    (["--num-devices", "4"], "launch --num-devices: launch's workers are Ray processes"),
    (["--home", "elsewhere"], "launch --home: launch opens no session"),
    (["--session", "x"], "launch --session: launch runs no session"),
    (["--servers", "2", "--num-servers", "3"], "--servers 2 and --num-servers 3 disagree"),
    (["--address", "auto", "--ray-address", "1.2.3.4:1"], "--address auto and --ray-address 1.2.3.4:1 disagree"),
])
@pytest.mark.parametrize("before", [False, True], ids=["after", "before"])
def test_an_option_launch_has_no_use_for_is_refused(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, words: list[str],
        says: str, before: bool) -> None:
    monkeypatch.chdir(tmp_path)
    if before and words[0] in ("--servers", "--address"):
        pytest.skip("a launch option, not a global one")
    argv = [*words, "launch", "-n", "1", "--", "true"] if before else ["launch", "-n", "1", *words, "--", "true"]
    started = _launched(monkeypatch, capsys, *argv)
    assert started["code"] == 2 and "command" not in started  # refused before anything starts
    assert says in started["err"] and len(started["err"].strip().splitlines()) == 1, started["err"]


def test_launch_help_lists_only_what_it_takes() -> None:
    result = run_kvcli("launch", "--help", env={"COLUMNS": "200"})
    assert result.returncode == 0
    for flag in ("--num-workers", "--servers", "--address", "--timeout", "--json", "--ray-address", "--num-servers"):
        assert flag in result.stdout
    for flag in ("--type", "--num-devices", "--home", "--session"):
        assert flag not in result.stdout, flag
    assert "Usage: kvcli launch [OPTIONS] -- COMMAND..." in result.stdout
