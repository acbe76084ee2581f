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
        "init k 'ones(2)*7' -s b --yes",
        "-s b push k 'ones(2)'",
        "pull k -s b --json",
        "keys -s b",
        "show -s b --json",
        "set-updater sum -s b",
        "push k 'ones(2)' -s b",
        "pull k --session b --json",
        f"export {tmp_path / 'exported'} -s b",
        "import " + str(tmp_path / "exported") + " -s c",
        "delete k -s c --yes",
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


def test_the_history_file_and_a_home_made_by_the_shell_are_private(tmp_path: Path) -> None:
    """A real terminal (pexpect): the shell's history holds every line typed, values too."""
    import stat

    import pytest

    pexpect = pytest.importorskip("pexpect")
    from tests.runner import KVCLI, kvcli_env

    home = tmp_path / "new" / "home"  # made by the shell
    old_home = tmp_path / "old-home"  # a history file an older kvcli made 0644
    old_home.mkdir(mode=0o700)
    (old_home / "shell_history").write_text("\n# 2020-01-01\n+init k 'ones(2)'\n")
    (old_home / "shell_history").chmod(0o644)
    for folder in (home, old_home):
        shell = pexpect.spawn(str(KVCLI), ["shell"], env=kvcli_env(folder, TERM="dumb"), encoding="utf-8",
                              timeout=60, dimensions=(40, 200))
        shell.expect("kvcli:default> ")
        shell.sendline("init secret 'ones(2)*42'")
        shell.expect("initialised key secret")
        shell.expect("kvcli:default> ")
        shell.sendline("exit")
        shell.expect(pexpect.EOF)
        shell.close()
        assert shell.exitstatus == 0
        history = folder / "shell_history"
        assert "ones(2)*42" in history.read_text()
        assert stat.S_IMODE(history.stat().st_mode) == 0o600
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
