"""Closed pipes and stdout: a reader that leaves ends kvcli quietly, and --json is JSON."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.runner import KVCLI, kvcli_env, run_kvcli


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "typer"])
@pytest.mark.parametrize("args", [["pull", "w", "-o", "-"], ["--json", "pull", "w"]])
def test_a_closed_pipe_ends_quietly(tmp_path: Path, fast: bool, args: list[str]) -> None:
    assert run_kvcli("init", "w", "ones(2000000)", home=tmp_path).returncode == 0
    env = kvcli_env(tmp_path, **({} if fast else {"KVCLI_NO_FAST_PATH": "1"}))
    proc = subprocess.Popen([str(KVCLI), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    head = proc.stdout.read(100)  # `| head -c 100`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert len(head) == 100
    assert code in (0, 141) and err == "", err  # as cat and git: no traceback, no message


def test_json_version(tmp_path: Path) -> None:
    from kvcli import __version__

    for args in (["--json", "-V"], ["-V", "--json"], ["--json", "--version"]):
        result = run_kvcli(*args, home=tmp_path)
        assert result.returncode == 0 and json.loads(result.stdout) == {"version": __version__}
    assert run_kvcli("-V", home=tmp_path).stdout == f"kvcli {__version__}\n"


def test_a_one_shot_command_does_not_import_logging(tmp_path: Path) -> None:
    # the token notice's filter is installed only when kvcli starts Ray (importing logging
    # for it would cost every one-shot command)
    import sys

    assert run_kvcli("init", "k", "zeros(2)", home=tmp_path).returncode == 0
    probe = "import sys; from kvcli.cli.app import main; main(['push', 'k', 'ones(2)'])"
    env = kvcli_env(tmp_path, PYTHONPROFILEIMPORTTIME="1")
    result = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "logging" not in [line.split("|")[-1].strip() for line in result.stderr.splitlines()]


def test_ray_decorations_are_kept_off_pipes(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging
    import sys

    from kvcli.cli import output

    monkeypatch.delenv("RAY_COLOR_PREFIX", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    logger = logging.getLogger(output.RAY_TOKEN_LOGGER)
    monkeypatch.setattr(logger, "filters", [])
    output.quiet_ray_off_terminal()
    output.quiet_ray_token_notice()
    import os

    assert os.environ["RAY_COLOR_PREFIX"] == "0"  # Ray prints its worker prefixes without colour codes
    notice = logger.makeRecord(logger.name, logging.WARNING, __file__, 1,
                               "Token authentication is enabled for this Ray cluster. Set ...", (), None)
    other = logger.makeRecord(logger.name, logging.WARNING, __file__, 1, "Token authentication is disabled", (), None)
    assert not logger.filter(notice) and logger.filter(other)


def test_the_spinner_counts_the_seconds_of_a_slow_start() -> None:
    import io

    from rich.console import Console

    from kvcli.cli import output

    spinner = output.status("pushing to key k; starting a Ray runtime for this command")
    text = output._Elapsed(spinner)
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(text)
    assert console.file.getvalue().strip() == "pushing to key k; starting a Ray runtime for this command"
    text.start -= 12.3  # twelve seconds later
    spinner.update("pushing to key [k]")  # a new message is drawn at the next refresh, escaped
    console.print(text)
    assert console.file.getvalue().splitlines()[-1] == "pushing to key [k] 12 s"


def test_the_ray_start_note_is_one_line_with_the_way_to_keep_a_cluster() -> None:
    from kvcli.cli.commands import RAY_START_NOTE

    assert "\n" not in RAY_START_NOTE and "`kvcli cluster up`" in RAY_START_NOTE
    assert "~10 s" not in RAY_START_NOTE and "5 to 30 s" in RAY_START_NOTE  # 16-27 s were measured under load


MODELS = Path(__file__).resolve().parents[1] / "data" / "sample_models"
#: (runs, command): each run is `kvcli COMMAND | head -1` under `set -o pipefail`. A command
#: whose output passes the pipe's 64 KiB fails on every run if a closed pipe is not handled;
#: the resnet-50 summary (15 KB) only when `head` leaves before rich's one write, now and then,
#: so it runs many times.
PIPE_COMMANDS = [
    (12, f"summary {MODELS / 'mxnet_v1.3_resnet50_attrs.json'} --shape data=1,3,224,224"),
    (2, f"summary {MODELS / 'mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json'}"),
    (2, f"--json summary {MODELS / 'mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json'}"),
    (2, "--help"), (1, "help"), (1, "summary --help"), (2, "show"), (1, "keys"), (1, "sessions"),
    (1, "--json show"), (2, "pull big"), (2, "--json pull big"), (2, "pull big -o -"),
    (2, "shell --file script.kv"),
]


def test_every_command_exits_0_when_the_reader_of_the_pipe_leaves(tmp_path: Path) -> None:
    """`kvcli summary M | head` in a script with `set -o pipefail` (issue 35, item 5)."""
    keys = ",".join(f"k{i}" for i in range(1500))
    assert run_kvcli("init", keys, "ones(3)", home=tmp_path).returncode == 0
    assert run_kvcli("init", "big", "ones(100000)", home=tmp_path).returncode == 0
    (tmp_path / "script.kv").write_text("show\n" * 20 + "pull big\n")
    loop = "\n".join(f'for i in $(seq {runs}); do {KVCLI} {command} | head -1 > /dev/null '
                     f'|| echo "exit $? from: {command}"; done' for runs, command in PIPE_COMMANDS)
    result = subprocess.run(["bash", "-c", "set -o pipefail\n" + loop], capture_output=True, text=True,
                            cwd=tmp_path, env=kvcli_env(tmp_path), timeout=900)
    assert result.returncode == 0 and result.stdout == "", result.stdout
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, result.stderr
