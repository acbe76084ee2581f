"""Scripts fail loudly: exit codes, script mode of the shell, confirmation, JSON errors,
``-`` for stdout, help and version, and global options after the command."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from .conftest import KVCLI, Runner, kvcli_env


def test_piped_shell_stops_at_the_first_error(kv: Runner) -> None:
    assert kv("init", "k", "zeros(2)").code == 0
    result = kv("shell", input=b"push k 'ones(2)'\npull nope\npush k 'ones(2)*5'\n")
    assert result.code == 1
    assert "key 'nope' is not initialised" in result.err and "stdin line 2 failed: stopped" in result.err
    assert kv("pull", "k").array().tolist() == [1, 1]  # line 1 committed, line 3 never ran


def test_script_file_and_keep_going_count_the_failures(kv: Runner, tmp_path: Path) -> None:
    script = tmp_path / "setup.kv"
    script.write_text("init k 'zeros(2)' --yes\nbogus\npush k 'ones(2)*3'\npull nope\n# a comment\npull k\n")
    stopped = kv("shell", "--file", str(script))
    assert stopped.code == 1 and f"{script} line 2 failed" in stopped.err
    assert kv("pull", "k").array().tolist() == [0, 0]
    going = kv("shell", "--file", str(script), "--keep-going")
    assert going.code == 1 and "2 lines of" in going.err
    assert going.out == "[3. 3.]\n"
    clean = tmp_path / "ok.kv"
    clean.write_text("push k 'ones(2)'\npull k\n")
    assert kv("shell", "-f", str(clean)).code == 0
    assert kv("shell", "-f", "-", input=b"pull k\n").out == "[1. 1.]\n"
    missing = kv("shell", "--file", str(tmp_path / "nope.kv"))
    assert missing.code == 1 and "cannot read the script" in missing.err


def test_read_only_commands_on_a_missing_session_name_it_and_list_the_sessions(kv: Runner) -> None:
    assert kv("-s", "big", "init", "k", "ones(2)").code == 0
    for args in (("-s", "bgi", "show"), ("-s", "bgi", "keys"), ("-s", "bgi", "pull", "k"), ("show", "-s", "bgi")):
        result = kv(*args)
        assert result.code == 1, args
        assert "session 'bgi' does not exist" in result.err and "(sessions: big)" in result.err, result.err
    assert kv("-s", "big", "show").code == 0


def test_reset_and_sessions_delete_need_yes_without_a_terminal(kv: Runner, home: Path) -> None:
    assert kv("init", "k", "ones(2)").code == 0
    for args in (("reset",), ("--json", "reset"), ("sessions", "delete", "default")):
        refused = kv(*args)
        assert refused.code == 1 and "pass --yes" in refused.err, args
    assert kv("pull", "k").array().tolist() == [1, 1]
    assert kv("reset", "--yes").code == 0 and kv("keys").out == ""
    assert kv("-s", "other", "init", "k", "ones(1)").code == 0
    deleted = kv("sessions", "delete", "other", "-y")
    assert deleted.code == 0 and "deleted session other" in deleted.err
    assert not (home / "sessions" / "other").exists()
    assert [row["session"] for row in json.loads(kv("--json", "sessions").out)["sessions"]] == ["default"]
    again = kv("sessions", "delete", "other", "--yes")
    assert again.code == 1 and "does not exist" in again.err


@pytest.mark.parametrize(
    "args",
    [
        ("--type", "bogus", "keys"),
        ("--num-devices", "65", "keys"),
        ("pull", "k", "-d", "0"),
        ("pull",),
        ("frobnicate",),
        ("pull", "k", "--bogus"),
        ("help", "frobnicate"),
        ("sessions", "delete"),
    ],
)
def test_usage_errors_exit_2_with_a_hint(kv: Runner, args: tuple[str, ...]) -> None:
    result = kv(*args)
    assert result.code == 2, result
    assert result.err.startswith("error: ") and "see `kvcli help" in result.err
    assert "Traceback" not in result.err and "Usage:" not in result.err


def test_json_errors_are_json_on_stderr(kv: Runner) -> None:
    usage = kv("--json", "pull", "k", "-d", "0")
    assert usage.code == 2 and usage.out == ""
    assert json.loads(usage.err) == {
        "error": "Invalid value for '--devices' / '-d': '0' is outside 1..1,024",  # the one parser's words
        "hint": "see `kvcli help pull`",
    }
    assert kv("init", "k", "ones(2)").code == 0
    missing = kv("pull", "nope", "--json")
    assert missing.code == 1
    assert json.loads(missing.err) == {
        "error": "key 'nope' is not initialised in session 'default' (known keys: 'k')",
        "hint": "run `kvcli init nope VALUE` first",
    }
    plain = json.loads(kv("--json", "init", "k", "nonsense(").err)
    assert plain["hint"] is None and "does not parse" in plain["error"]


def test_dash_writes_npy_to_stdout_and_reads_it_from_stdin(kv: Runner, home: Path) -> None:
    assert kv("init", "6", "arange(6).reshape(2,3)").code == 0
    pulled = subprocess.run([str(KVCLI), "pull", "6", "-o", "-"], capture_output=True, env=kvcli_env(home), timeout=60)
    assert pulled.returncode == 0, pulled.stderr
    array = np.load(io.BytesIO(pulled.stdout), allow_pickle=False)
    assert array.tolist() == [[0, 1, 2], [3, 4, 5]] and array.dtype == np.float32
    assert kv("init", "7", "-", input=pulled.stdout).code == 0
    assert kv("pull", "7").array().tolist() == [0, 1, 2, 3, 4, 5]


def test_help_version_and_bare_kvcli(kv: Runner) -> None:
    import kvcli

    bare = kv()
    assert bare.code == 0 and "Commands" in bare.out and "init" in bare.out
    assert kv("help").out == bare.out
    assert kv("-V").out.strip() == f"kvcli {kvcli.__version__}"
    assert kv("--version").out.strip() == f"kvcli {kvcli.__version__}"
    push_help = kv("help", "push")
    assert push_help.code == 0 and push_help.out == kv("push", "--help").out
    assert "<bool>" not in push_help.out and "<str>" not in push_help.out and "<list" not in push_help.out
    assert "<int range>" not in push_help.out and "1<=x" not in push_help.out
    assert "(1 to 1024)" in push_help.out
    assert kv("help", "sessions", "delete").out == kv("sessions", "delete", "--help").out


def test_global_options_after_the_command(kv: Runner) -> None:
    init = kv("init", "3", "ones(3,3)*2", "--json")  # "No such option: --json" before
    assert init.code == 0 and json.loads(init.out)["keys"][0]["key"] == 3
    assert kv("init", "k", "ones(2)", "-s", "other").code == 0
    assert kv("pull", "k", "--session", "other").array().tolist() == [1, 1]
    assert kv("keys", "-s", "other").out == "k\n"
    assert json.loads(kv("pull", "3", "--json").out)["value"][0] == [2, 2, 2]


def test_plurals(kv: Runner, tmp_path: Path) -> None:
    assert kv("init", "k", "ones(2)").code == 0
    assert "exported 1 key to" in kv("export", str(tmp_path / "one")).err
    assert kv("init", "j", "ones(2)").code == 0
    assert "exported 2 keys to" in kv("export", str(tmp_path / "two")).err
    assert "imported 1 key from" in kv("-s", "copy", "import", str(tmp_path / "one")).err


def test_one_meaning_per_short_flag() -> None:
    from kvcli.cli import table

    assert table.check_short_flags() == []
    shorts = {o.short: o.long for o in table.GLOBAL_OPTIONS if o.short}
    assert shorts == {"-s": "--session", "-t": "--type"}
    launch = table.find("launch")
    assert launch is not None and launch.option("-s") is None  # --servers has no short flag now


def test_every_command_of_the_app_is_in_the_table() -> None:
    from typer.main import get_command

    from kvcli.cli import table
    from kvcli.cli.build import build_app

    names = set(get_command(build_app()).commands)  # type: ignore[attr-defined]
    assert names == {c.name for c in table.commands()}
    assert {"viz", "summary"} <= names


def test_viz_and_summary_options_share_the_one_meaning_per_short_flag_rule() -> None:
    from kvcli.cli import table

    viz = table.find("viz")
    assert viz is not None and viz.option("--shape") is not None and viz.option("--shape").short is None
    assert table.check_short_flags() == []


def test_a_bad_rankdir_is_a_usage_error(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    model = tmp_path / "m.json"
    model.write_text('{"nodes": [{"op": "null", "name": "data", "inputs": []}], "arg_nodes": [0], "heads": [[0, 0, 0]]}')
    kvcli = Path(sys.executable).with_name("kvcli")
    done = subprocess.run([str(kvcli), "viz", str(model), "--rankdir", "XX", "-o", str(tmp_path / "m.dot")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "--rankdir" in done.stderr
    assert not (tmp_path / "m.dot").exists()
