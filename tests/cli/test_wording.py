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
