"""Library errors speak Python; the CLI and the shell add their own advice from the error's
class and fields (kvcli/cli/output.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kvcli.cli import output
from kvcli.errors import KVCliError, SessionError, UnknownKeyError
from kvcli.session import Session


def advice(error: KVCliError) -> tuple[str, str, str]:
    return str(error), output.hint_for(error, "cli") or "", output.hint_for(error, "shell") or ""


def test_unknown_key(tmp_path: Path) -> None:
    with Session("s", tmp_path) as session:
        session.init(["a"], [np.ones(2, np.float32)])
        with pytest.raises(UnknownKeyError) as info:
            session.pull(["nope"])
    message, cli, shell = advice(info.value)
    assert "kvcli" not in message and "call init('nope', value) first" in message
    assert cli == "run `kvcli init nope VALUE` first"
    assert shell == "run `init nope VALUE` first"


def test_another_store_type(tmp_path: Path) -> None:
    with Session("s", tmp_path) as session:
        session.init(["a"], [np.ones(2, np.float32)])
    with pytest.raises(SessionError) as info:
        with Session("s", tmp_path, store_type="device", store_options={"num_devices": 2}) as session:
            session.keys()
    message, cli, shell = advice(info.value)
    assert "kvcli" not in message and "Session.reset('device')" in message
    assert cli == "to change it, run `kvcli reset --type device` (this deletes its keys)"
    assert shell == "to change it, run `reset --type device` (this deletes its keys)"


def test_damaged_manifest(tmp_path: Path) -> None:
    with Session("s", tmp_path) as session:
        session.init(["a"], [np.ones(2, np.float32)])
    manifest = tmp_path / "sessions" / "s" / "session.db"
    manifest.write_text("{")
    with pytest.raises(SessionError) as info:
        with Session("s", tmp_path) as session:
            session.keys()
    message, cli, shell = advice(info.value)
    assert "kvcli reset" not in message and "Session.reset()" in message and str(manifest) in message
    assert "`kvcli reset`" in cli and "`reset`" in shell and "kvcli" not in shell


def test_printed_line_uses_the_problem_and_the_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = UnknownKeyError("key 'x' is missing: call init('x', value) first", problem="key 'x' is missing",
                            remedy="init", key="x")
    output.report_error(error, "shell", as_json=True)
    assert capsys.readouterr().err == '{"error": "key \'x\' is missing", "hint": "run `init x VALUE` first"}\n'
    output.report_error(KVCliError("plain message"), "cli", as_json=True)
    assert capsys.readouterr().err == '{"error": "plain message", "hint": null}\n'


def _suggested(err: str) -> str:
    """The command in backquotes of an error line's advice."""
    import re

    found = re.findall(r"`([^`]*)`", err)
    assert found, err
    return found[-1]


def test_advice_keeps_the_session_and_home_typed(tmp_path: Path) -> None:
    """Copying a suggested fix must act on the session and home the user named (issue 35, item 8)."""
    import shlex

    from tests.runner import run_kvcli

    default, other = tmp_path / "default-home", tmp_path / "other home"
    for home in (default, other):
        assert run_kvcli("-s", "exp", "init", "a", "ones(2)", home=home).returncode == 0
    cases = [
        (["--home", str(other), "-s", "exp", "pull", "w"], f"kvcli --home '{other}' -s exp init w VALUE"),
        (["pull", "w", "--session", "exp", f"--home={other}"], f"kvcli --session exp '--home={other}' init w VALUE"),
        (["-s", "exp", "--home", str(other), "--type", "device", "keys"],
         f"kvcli -s exp --home '{other}' reset --type device"),
        (["--home", str(other), "-s", "nosuch", "keys"], f"kvcli --home '{other}' --session nosuch init KEY VALUE"),
    ]
    for argv, suggested in cases:
        result = run_kvcli(*argv, home=default)
        assert result.returncode == 1 and _suggested(result.stderr) == suggested, result.stderr
    # the first advice, copied with a value, initialises w in session exp of the other home
    words = shlex.split(_suggested(run_kvcli("--home", str(other), "-s", "exp", "pull", "w", home=default).stderr))
    assert run_kvcli(*[w if w != "VALUE" else "ones(3)" for w in words[1:]], home=default).returncode == 0
    assert run_kvcli("--home", str(other), "-s", "exp", "keys", home=default).stdout.split() == ["a", "w"]
    assert run_kvcli("-s", "exp", "keys", home=default).stdout.split() == ["a"]


def test_the_shells_advice_keeps_a_session_typed_on_the_line(tmp_path: Path) -> None:
    from tests.runner import run_kvcli

    assert run_kvcli("-s", "b", "init", "a", "ones(2)", home=tmp_path).returncode == 0
    result = run_kvcli("shell", home=tmp_path, input=b"pull w -s b\n")
    assert result.returncode == 1 and _suggested(result.stderr.splitlines()[0]) == "-s b init w VALUE", result.stderr
