"""The small things a newcomer tripped over in the command line's second hour (issue 35,
"Polish"): each is tried as a person would, with the real binary."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from kvcli.session import Session
from tests.other_user import as_user, other_uid
from tests.runner import KVCLI, kvcli_env

from .conftest import Runner


# ---------------------------------------------------------------------- saying what starts
def test_a_dist_pull_does_not_say_it_starts_ray(kv: Runner, tmp_path: Path) -> None:
    """A dist session without Ray: its committed values are read from disk, so nothing starts."""
    assert kv("init", "w", "ones(3)").code == 0
    assert kv("export", str(tmp_path / "backup")).code == 0
    assert kv("-s", "d", "--type", "dist_sync", "reset", "--yes").code == 0
    assert kv("-s", "d", "import", str(tmp_path / "backup")).code == 0
    for args in (["pull", "w"], ["set-updater", "assign"], ["keys"], ["show"]):  # none starts a store
        result = kv("-s", "d", *args)
        assert result.code == 0 and "Ray" not in result.err, (args, result.err)


def test_the_session_says_when_it_starts_its_store_and_only_then(tmp_path: Path) -> None:
    started: list[str] = []
    with Session("s", tmp_path) as session:
        session.on_store_start = started.append
        session.init(["w"], [np.ones(2, np.float32)])
        session.push(["w"], [np.ones(2, np.float32)])
    assert started == ["store"]  # once, by init
    with Session("s", tmp_path) as session:
        session.on_store_start = started.append
        session.pull(["w"])  # read from the committed files
        session.set_updater("assign")  # the same updater: nothing to do
        session.keys()
    assert started == ["store"]


def test_rays_token_notice_is_dropped_on_a_terminal_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    from kvcli.cli import commands, core, output

    logger = logging.getLogger(output.RAY_TOKEN_LOGGER)
    monkeypatch.setattr(logger, "filters", [])
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    notice = logger.makeRecord(logger.name, logging.WARNING, __file__, 1,
                               "Token authentication is enabled for this Ray cluster. Set ...", (), None)
    commands._announce_start("cluster", core.GlobalOptions(), None)
    commands._announce_start("cluster", core.GlobalOptions(), None)
    assert not logger.filter(notice) and len(logger.filters) == 1


# ---------------------------------------------------------------------- tables
LONG_KEY = "stage4_unit3_bn2_moving_variance_of_a_long_model"


@pytest.fixture
def two_sessions(kv: Runner) -> None:
    assert kv("init", f"{LONG_KEY},fc1.bias", "ones(64,3,3,3)").code == 0
    assert kv("set-updater", "sgd:lr=0.1,momentum=0.9").code == 0
    assert kv("-s", "another_session_with_a_long_name", "init", "x", "ones(2)").code == 0


def test_show_and_sessions_print_plain_columns_when_piped(kv: Runner, two_sessions: None, home: Path) -> None:
    show = kv("show", env={"COLUMNS": "40"}).out.splitlines()
    assert show[0] == "session default"
    assert show[1].split() == ["key", "shape", "dtype", "version", "size"] and set(show[2]) == {"-"}
    assert show[3].split() == [LONG_KEY, "(64,3,3,3)", "float32", "1", "6.8", "KiB"]
    assert show[-1] == "store local · updater sgd:lr=0.1,momentum=0.9"
    sessions = kv("sessions", env={"COLUMNS": "40"}).out.splitlines()
    assert sessions[0] == f"sessions in {home}"
    assert sessions[3].split() == ["another_session_with_a_long_name", "local", "assign", "1", "8", "B", "-"]
    assert not re.search("[┃│━…]", "\n".join(show + sessions))


def test_a_narrow_terminal_never_cuts_a_name(kv: Runner, two_sessions: None, home: Path, tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    for columns, boxed in ((30, False), (120, True)):
        name = f"kvcli-narrow-{columns}-{id(tmp_path)}"
        log = tmp_path / f"done-{columns}"
        script = f"{KVCLI} show; {KVCLI} sessions; touch {log}; sleep 60"
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", str(columns), "-y", "60",
                        f"-eKVCLI_HOME={home}", "-eTERM=xterm", "bash", "--norc", "-c", script], check=True)
        try:
            deadline = time.monotonic() + 60
            while not log.exists():
                assert time.monotonic() < deadline
                time.sleep(0.1)
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-J", "-t", name], capture_output=True,
                                    text=True).stdout
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], check=False)
        words = screen.split()
        for whole in (LONG_KEY, "another_session_with_a_long_name", "sgd:lr=0.1,momentum=0.9"):
            assert any(whole in word for word in words), (columns, whole, screen)
        assert "…" not in screen and ("┃" in screen) == boxed, screen


# ---------------------------------------------------------------------- --json back into init
def test_pull_json_pipes_back_into_init_and_push(kv: Runner, home: Path) -> None:
    assert kv("init", "w", "arange(6).reshape(2,3)*0.1").code == 0
    assert kv("init", "i", "arange(4, dtype=int64)").code == 0
    for source, target in (("w", "w2"), ("i", "i2")):
        pulled = kv("--json", "pull", source).out
        assert kv("init", target, "-", input=pulled.encode()).code == 0
        again = json.loads(kv("--json", "pull", target).out)
        assert {k: v for k, v in again.items() if k != "key"} == {k: v for k, v in json.loads(pulled).items() if k != "key"}
    assert kv("push", "w2", "-", input=kv("--json", "pull", "w").out.encode()).code == 0
    both = kv("init", "z", "-", input=kv("--json", "pull", "w,i").out.encode())
    assert both.code == 1 and "pull one key" in both.err
    npy = subprocess.run(f"{KVCLI} pull w -o - | {KVCLI} init w3 -", shell=True, env=kvcli_env(home),
                         capture_output=True, timeout=60)
    assert npy.returncode == 0, npy.stderr  # .npy on stdin, as before
    assert kv("--json", "pull", "w3").out.replace("w3", "w") == kv("--json", "pull", "w").out


# ---------------------------------------------------------------------- hints
@pytest.mark.parametrize("args, hint", [
    (["pull", "w", "b"], "give several keys as one comma-separated list: `kvcli pull w,b`"),
    (["-s", "x", "delete", "w", "b", "c"], "give several keys as one comma-separated list: `kvcli -s x delete w,b,c`"),
    (["save"], "nothing to save or load); to copy one, use `kvcli export DIR` and `kvcli import DIR`"),
    (["load", "x"], "nothing to save or load); to copy one, use `kvcli export DIR` and `kvcli import DIR`"),
])
def test_usage_hints_for_what_newcomers_type(kv: Runner, args: list[str], hint: str) -> None:
    result = kv(*args)
    assert result.code == 2 and hint in result.err and result.err.count("\n") == 1, result.err


def test_a_misspelt_updater_suggests_the_right_one(kv: Runner) -> None:
    result = kv("-s", "x", "set-updater", "adm:lr=0.1")
    assert result.code == 1 and result.err.rstrip().endswith("did you mean `kvcli -s x set-updater adam:lr=0.1`?")
    assert "did you mean" not in kv("set-updater", "zzzzzz").err


def test_a_device_option_on_a_local_session_is_worded(kv: Runner) -> None:
    assert kv("init", "w", "ones(2)").code == 0
    result = kv("--num-devices", "4", "pull", "w")
    assert result.code == 1 and "None" not in result.err
    assert "session 'default' ('local' store) has no num_devices, not 4: leave out --num-devices" in result.err
    assert kv("-s", "d", "--type", "device", "reset", "--yes").code == 0
    result = kv("-s", "d", "--num-devices", "3", "keys")
    assert "has the default num_devices, not 3: to change it, run `kvcli -s d reset --type device --num-devices 3`" \
        in result.err


def test_cluster_status_runs_in_the_shell(kv: Runner, home: Path) -> None:
    result = kv("shell", input=b"cluster status\ncluster status --json\n")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == f"no Ray cluster is running for {home}: start one with `cluster up`"
    assert json.loads(lines[1]) == {"home": str(home), "running": False}


# ---------------------------------------------------------------------- usage lines
def test_usage_lines_have_no_braces_or_doubled_dots(kv: Runner) -> None:
    from kvcli.cli import table

    words = [[c.name] for c in table.commands()] + [[c.name, child.name] for c in table.commands() for child in c.children]
    for command in words:
        usage = next(line for line in kv(*command, "--help").out.splitlines() if "Usage:" in line).strip()
        assert "{" not in usage and "...." not in usage and "......" not in usage, usage
    assert "Usage: kvcli push [OPTIONS] KEY VALUE..." in kv("push", "--help").out
    assert "Usage: kvcli launch [OPTIONS] -- COMMAND..." in kv("launch", "--help").out


# ---------------------------------------------------------------------- confirmations
def test_a_question_nobody_sees_is_not_asked(kv: Runner, home: Path, tmp_path: Path) -> None:
    """stdin a terminal, stderr a file: the question would be invisible; refuse at once."""
    pexpect = pytest.importorskip("pexpect")
    assert kv("init", "w", "ones(2)").code == 0
    log = tmp_path / "err.log"
    child = pexpect.spawn("bash", ["--norc", "-c", f"{KVCLI} reset 2>{log}; echo code=$?"],
                          env=kvcli_env(home), encoding="utf-8", timeout=20)
    child.expect(r"code=(\d+)")
    assert child.match.group(1) == "1"
    assert "no terminal to ask on" in log.read_text() and "pass --yes" in log.read_text()
    assert kv("keys").out.split() == ["w"]


# ---------------------------------------------------------------------- shell --file
def _shell_file_as_user(home: str, paths: list[str], log: str) -> list:
    import contextlib
    import io

    from kvcli.cli.app import main

    os.environ["KVCLI_HOME"], os.environ["NO_COLOR"] = home, "1"
    codes, err = [], io.StringIO()
    with contextlib.redirect_stderr(err):
        for path in paths:
            try:
                main(["shell", "--file", path])
            except SystemExit as done:
                codes.append(done.code)
    Path(log).write_text(err.getvalue())
    return codes


def test_shell_file_missing_or_unreadable_exits_the_same_way(tmp_path: Path) -> None:
    uid = other_uid()
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="kvcli-script-"))
    try:
        os.chmod(top, 0o755)
        (top / "home").mkdir(mode=0o700)
        (top / "log").write_text("")
        script = top / "setup.kv"
        script.write_text("keys\n")
        script.chmod(0o000)
        for path in (top / "home", top / "log"):
            os.chown(path, uid, uid)

        def warm_up() -> None:  # modules imported as root (the interpreter is under root's home)
            _shell_file_as_user(str(top / "warm"), [str(top / "missing.kv"), "/"], str(top / "warm.log"))

        codes = as_user(uid, _shell_file_as_user, str(top / "home"), [str(top / "missing.kv"), str(script)],
                        str(top / "log"), before=warm_up)
        err = re.sub(r"\x1b\[[0-9;]*m", "", (top / "log").read_text()).splitlines()  # colour, if rich chose it
        assert codes == [1, 1], err
        assert err == [f"error: cannot read the script {top / 'missing.kv'}: No such file or directory",
                       f"error: cannot read the script {script}: Permission denied"]
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=False)
