"""``kvcli --home B shell``: every command of the shell works in B, never in the default home
(a session of another folder was once deleted this way)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.runner import run_kvcli


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` with its size and mtime (a change to any shows)."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_every_session_command_of_the_shell_uses_its_home(tmp_path: Path) -> None:
    default, other = tmp_path / "default-home", tmp_path / "other-home"
    default.mkdir()
    other.mkdir()
    for name in ("default", "victim", "b"):  # same names in both homes: a mix-up would show
        for home in (default, other):
            assert run_kvcli("--session", name, "init", "k", "ones(2)*5", home=home).returncode == 0
    before = snapshot(default)
    script = "\n".join([
        "sessions --json",
        "sessions delete victim --yes",
        "init k 'ones(2)*7' -s b",
        "-s b push k 'ones(2)'",
        "pull k -s b --json",
        "keys -s b",
        "show -s b --json",
        "set-updater sum -s b",
        "push k 'ones(2)' -s b",
        "pull k --session b --json",
        f"export {tmp_path / 'exported'} -s b",
        "import " + str(tmp_path / "exported") + " -s c",
        "delete k -s c",
        "reset -s b --yes",
        "init fresh 'ones(1)' --session d",
        "pull k --json",
        "sessions --json",
    ]) + "\n"
    # the default home is KVCLI_HOME; the shell is given another with --home
    result = run_kvcli("--home", str(other), "shell", home=default, input=script.encode())
    assert result.returncode == 0, result.stderr
    payloads = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert payloads[0]["home"] == str(other)
    assert sorted(row["session"] for row in payloads[0]["sessions"]) == ["b", "default", "victim"]
    assert payloads[1]["value"] == [1.0, 1.0]  # b's k, re-initialised to 7, then assigned 1
    assert payloads[2]["updater"] == "assign" and payloads[3]["value"] == [2.0, 2.0]  # the sum updater
    assert payloads[4]["value"] == [5.0, 5.0]  # the shell's own session, untouched
    assert payloads[5]["home"] == str(other)
    assert sorted(row["session"] for row in payloads[5]["sessions"]) == ["b", "c", "d", "default"]
    assert snapshot(default) == before  # nothing in the default home changed
    assert sorted(os.listdir(default / "sessions")) == ["b", "default", "victim"]
