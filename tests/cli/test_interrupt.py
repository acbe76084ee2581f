"""Ctrl-C through a real pseudo-terminal (pexpect): the shell cancels the running command
with "interrupted" and goes on; a one-shot command exits 130; nothing half-written.

The slow command is a push through a ``python:`` updater that first changes the stored
value in place, writes a marker file and then sleeps: the tests send the interrupt once the
marker is there, so it lands after the store holds an uncommitted value, before the commit,
and they see whether that value is discarded.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .conftest import KVCLI, Runner, kvcli_env

pexpect = pytest.importorskip("pexpect", reason="pexpect is in the [test] extra: pip install -e '.[test]'")

SLOW_UPDATER = """
import time
from pathlib import Path

def update(key, pushed, stored):
    stored += pushed * 100   # the store now holds a value nobody committed
    Path({marker!r}).write_text("in the updater")
    time.sleep(60)
"""


def spawn(home: Path, *args: str) -> "pexpect.spawn":
    env = kvcli_env(home, TERM="dumb")
    return pexpect.spawn(str(KVCLI), list(args), env=env, encoding="utf-8", timeout=60, dimensions=(40, 200))


@pytest.fixture
def slow_session(kv: Runner, tmp_path: Path) -> Path:
    """Session default: k = 5s (2x2), updater python:slow.py:update (sleeps in the push).
    Gives the marker file the updater writes once it has changed the stored value."""
    marker = tmp_path / "in-updater"
    updater = tmp_path / "slow.py"
    updater.write_text(SLOW_UPDATER.format(marker=str(marker)))
    assert kv("init", "k", "full((2,2),5)").code == 0
    assert kv("set-updater", f"python:{updater}:update").code == 0
    return marker


def wait_for(marker: Path, child: "pexpect.spawn", seconds: float = 60) -> None:
    """Until the updater has written ``marker`` (the command is inside its sleep)."""
    deadline = time.monotonic() + seconds
    while not marker.exists():
        assert child.isalive(), child.before
        assert time.monotonic() < deadline, f"{marker} never appeared"
        time.sleep(0.02)


def data_files(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "sessions" / "default" / "data").iterdir())


def test_ctrl_c_in_the_shell_cancels_the_command_and_the_shell_goes_on(
    kv: Runner, home: Path, slow_session: Path
) -> None:
    before = data_files(home)
    shell = spawn(home, "shell")
    shell.expect("kvcli:default> ")
    shell.sendline("push k 'ones(2,2)'")
    wait_for(slow_session, shell)  # inside the updater's sleep
    shell.sendintr()
    shell.expect("interrupted")
    shell.expect("kvcli:default> ")
    shell.sendline("pull k")  # the store is usable and holds the committed value
    shell.expect(r"\[\[5\. 5\.\]")
    shell.expect("kvcli:default> ")
    shell.sendline("set-updater sum")
    shell.expect("kvcli:default> ")
    shell.sendline("push k 'ones(2,2)'")
    shell.expect("version 2")
    shell.expect("kvcli:default> ")
    shell.sendline("exit")
    shell.expect(pexpect.EOF)
    shell.close()
    assert shell.exitstatus == 0
    assert "Traceback" not in shell.before
    assert kv("pull", "k").array().tolist() == [6, 6, 6, 6]
    assert len(data_files(home)) == len(before)  # no stray value file


def test_ctrl_c_on_a_one_shot_push_exits_130_and_changes_nothing(
    kv: Runner, home: Path, slow_session: Path
) -> None:
    before = data_files(home)
    child = spawn(home, "push", "k", "ones(2,2)")
    wait_for(slow_session, child)
    child.sendintr()
    child.expect("interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "Traceback" not in child.before
    assert kv("pull", "k").array().tolist() == [5, 5, 5, 5]
    assert data_files(home) == before  # nothing half-written
    assert '"version": 1' in kv("--json", "show").out


def test_ctrl_c_at_the_prompt_only_clears_the_line(home: Path) -> None:
    shell = spawn(home, "shell")
    shell.expect("kvcli:default> ")
    shell.send("init k 'ones(2)'")
    shell.sendintr()
    shell.expect("kvcli:default> ")
    shell.sendline("keys")
    shell.expect("kvcli:default> ")
    shell.sendline("exit")
    shell.expect(pexpect.EOF)
    shell.close()
    assert shell.exitstatus == 0
    assert not (home / "sessions" / "default" / "session.db").exists()  # the cleared line never ran


def test_reset_asks_on_a_terminal(kv: Runner, home: Path) -> None:
    assert kv("init", "k", "ones(2)").code == 0
    child = spawn(home, "reset")
    child.expect(r"reset deletes the 1 key of session 'default'.*\[y/N\]")
    child.sendline("n")
    child.expect("not confirmed")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert kv("pull", "k").array().tolist() == [1, 1]
    child = spawn(home, "sessions", "delete", "default")
    child.expect(r"delete session 'default' and its 1 key\? \[y/N\]")
    child.sendline("y")
    child.expect("deleted session default")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert not (home / "sessions" / "default").exists()


def test_a_slow_push_shows_a_status_on_a_terminal(kv: Runner, home: Path, slow_session: Path) -> None:
    child = pexpect.spawn(str(KVCLI), ["push", "k", "ones(2,2)"], env=kvcli_env(home, TERM="xterm"),
                          encoding="utf-8", timeout=30, dimensions=(40, 200))
    child.expect("pushing to key k")  # after 0.5 s, while the updater sleeps
    child.sendintr()
    child.expect("interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130


def test_no_status_on_a_pipe_or_with_json(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from kvcli.cli import output

    monkeypatch.setattr("sys.stderr", io.StringIO())
    with output.status("working") as status:  # stderr is not a terminal
        assert not status._enabled
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    monkeypatch.setenv("TERM", "xterm")
    with output.status("working", quiet=True) as status:  # --json
        assert not status._enabled
    with output.status("working") as status:
        assert status._enabled


def test_ctrl_c_in_a_real_terminal_leaves_no_spinner_frame(kv: Runner, home: Path, slow_session: Path,
                                                          tmp_path: Path) -> None:
    """tmux: the terminal echoes ^C where the cursor is; the spinner's last frame must still go,
    and the line is `interrupted`, as the README says (issue 35)."""
    import shutil
    import subprocess

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    env = kvcli_env(home, TERM="xterm")
    env.pop("NO_COLOR", None)
    name = f"kvcli-interrupt-{id(tmp_path)}"
    # every variable the command needs is given with -e: a tmux server already running (another
    # terminal test, a person's tmux) starts the window with its own environment, not this one's
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "100", "-y", "30", "-c", str(tmp_path),
                    *(f"-e{k}={env[k]}" for k in ("KVCLI_HOME", "KVCLI_TRUST_KEY", "PYTHONPYCACHEPREFIX", "TERM")),
                    "-ePS1=$ ",
                    "bash", "--norc", "--noprofile"], check=True)

    def screen() -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout

    try:
        for attempt in range(3):  # the ^C lands at another point of the spinner's line each time
            marker = slow_session
            marker.unlink(missing_ok=True)
            subprocess.run(["tmux", "send-keys", "-t", name, "clear", "Enter"], check=True)
            subprocess.run(["tmux", "send-keys", "-t", name, f"{KVCLI} push k 'ones(2,2)'; printf '%s=%s.' exit $?", "Enter"],
                           check=True)
            deadline = time.monotonic() + 60
            while "pushing to key k" not in screen() or not marker.exists():
                assert time.monotonic() < deadline, screen()
                time.sleep(0.1)
            time.sleep(0.4 * attempt)
            subprocess.run(["tmux", "send-keys", "-t", name, "C-c"], check=True)
            while "exit=" not in screen():  # the typed line has no "exit=": printf writes it
                assert time.monotonic() < deadline, screen()
                time.sleep(0.1)
            lines = [line.rstrip() for line in screen().splitlines() if line.strip()]
            assert "pushing to key k" not in "\n".join(lines), lines
            assert lines[-2:] == ["interrupted", "exit=130.$"], lines  # printf's line, then the prompt
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False)


def test_a_fast_command_on_a_terminal_imports_no_rich_for_its_spinner() -> None:
    """The spinner's rich is imported when the work passes STATUS_DELAY, not before: a fast
    command on a terminal does not pay its import (about 30 ms)."""
    import os
    import pty
    import subprocess
    import sys

    code = ("import sys, time\nfrom kvcli.cli import output\n"
            "with output.status('fast'):\n    pass\nprint('rich.status' in sys.modules, flush=True)\n"
            "with output.status('slow work'):\n    time.sleep(1.2)\nprint('rich.status' in sys.modules, flush=True)\n")
    master, slave = pty.openpty()
    env = dict(os.environ, TERM="xterm")
    env.pop("NO_COLOR", None)
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=slave, env=env, timeout=60,
                          text=True)
    os.close(slave)
    seen = b""
    try:
        while chunk := os.read(master, 4096):
            seen += chunk
    except OSError:  # the pty's other end is closed
        pass
    os.close(master)
    assert proc.stdout.split() == ["False", "True"]
    assert b"slow work" in seen and b"fast" not in seen
