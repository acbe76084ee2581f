"""The one-shot session commands, run through the real ``kvcli`` binary."""

from __future__ import annotations

import json
import pickle
import subprocess
from pathlib import Path

import numpy as np
import pytest

from .conftest import KVCLI, REPO, Runner, kvcli_env


def test_seed_script_prints_every_value(home: Path) -> None:
    proc = subprocess.run(
        ["bash", str(REPO / "examples" / "seed.sh")],
        capture_output=True,
        text=True,
        env=kvcli_env(home, KVCLI=str(KVCLI)),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    sections = {}
    for line in proc.stdout.splitlines():
        if line[:1].isdigit() and ". " in line:
            current = line
            sections[current] = []
        else:
            sections[current].append(line)
    values = []
    for lines in sections.values():
        numbers = [float(x) for x in " ".join(lines).replace("[", " ").replace("]", " ").split()]
        assert numbers and len(set(numbers)) == 1, lines
        values.append((numbers[0], len(numbers)))
    assert values == [(2, 9), (8, 9), (4, 9), (6, 9), (6, 9), (3, 4), (4.5, 4)]
    assert "re-initialised key 3" in proc.stderr
    assert "pushed key 3 from 4 devices" in proc.stderr


def test_pull_prints_like_numpy_respecting_dtype(kv: Runner) -> None:
    assert kv("init", "i", "arange(4, dtype=int32).reshape(2,2)").code == 0
    assert kv("pull", "i").out == "[[0 1]\n [2 3]]\n"
    assert kv("init", "f", "[0.5, 1]").code == 0
    assert kv("pull", "f").out == "[0.5 1. ]\n"
    assert kv("push", "i", "ones(2,2)").code == 0  # built in the key's dtype (int32)
    assert kv("pull", "i").out == "[[1 1]\n [1 1]]\n"


def test_pull_json(kv: Runner) -> None:
    kv("init", "3", "full((2,2), 0.1)")
    result = kv("pull", "3", "--json")
    assert result.code == 0
    assert json.loads(result.out) == {"key": 3, "shape": [2, 2], "dtype": "float32", "value": [[0.1, 0.1], [0.1, 0.1]]}
    assert json.loads(kv("--json", "pull", "3").out)["key"] == 3
    multi = json.loads(kv("--json", "pull", "3", "--devices", "2").out)
    assert multi["devices"] == 2


def test_pull_to_file(kv: Runner, tmp_path: Path) -> None:
    kv("init", "w", "arange(6).reshape(2,3)")
    out = tmp_path / "w.npy"
    result = kv("pull", "w", "-o", str(out))
    assert result.code == 0 and result.out == ""
    np.testing.assert_array_equal(np.load(out, allow_pickle=False), np.arange(6, dtype=np.float32).reshape(2, 3))
    result = kv("push", "w", f"@{out}")
    assert result.code == 0


def test_value_from_stdin(kv: Runner) -> None:
    kv("init", "w", "zeros(3)")
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.array([1, 2, 3], np.float32))
    assert kv("push", "w", "-", input=buffer.getvalue()).code == 0
    assert kv("pull", "w").array().tolist() == [1, 2, 3]


def test_multi_key_and_multi_device(kv: Runner) -> None:
    kv("init", "10,11,12", "ones(2,2)*0.5")
    kv("set-updater", "scale-add:2")
    result = kv("push", "10,11,12", "ones(2,2)", "ones(2,2)")  # two values = two devices
    assert result.code == 0 and result.err.count("from 2 devices") == 3
    assert set(kv("pull", "11").array()) == {4.5}
    out = kv("pull", "10,12").out
    assert out.startswith("key 10:\n") and "key 12:" in out


def test_show_keys_sessions_delete(kv: Runner) -> None:
    kv("init", "a", "ones(3,3)")
    kv("init", "b", "zeros(2, dtype=int64)")
    kv("set-updater", "sgd:lr=0.1")
    show = kv("show")
    assert show.code == 0
    for text in ("a", "(3,3)", "float32", "int64", "sgd:lr=0.1", "local"):
        assert text in show.out
    info = json.loads(kv("--json", "show").out)
    assert [k["key"] for k in info["keys"]] == ["a", "b"] and info["updater"] == "sgd:lr=0.1"
    assert kv("keys").out == "a\nb\n"
    assert json.loads(kv("--json", "keys").out) == ["a", "b"]
    refused = kv("delete", "a")  # no terminal to ask on: nothing changed
    assert refused.code == 1 and refused.err == (
        "error: delete drops key a of session 'default' (the value and any optimizer state kept for it): nothing was "
        "changed (no terminal to ask on: stdin and stderr are not both one): pass --yes to confirm\n")
    assert kv("keys").out == "a\nb\n"
    assert kv("delete", "a,nope", "--yes").code == 1 and kv("keys").out == "a\nb\n"  # an unknown key: nothing goes
    assert kv("delete", "a", "--yes").code == 0
    assert kv("keys").out == "b\n"
    sessions = json.loads(kv("--json", "sessions").out)["sessions"]
    assert [(s["session"], s["keys"]) for s in sessions] == [("default", 1)]
    assert "default" in kv("sessions").out


def test_sessions_are_separate(kv: Runner) -> None:
    kv("--session", "x", "init", "k", "ones(1)")
    kv("-s", "y", "init", "k", "ones(1)*2")
    assert kv("-s", "x", "pull", "k").array().tolist() == [1]
    assert kv("pull", "k", env={"KVCLI_SESSION": "y"}).array().tolist() == [2]


def test_updater_state_persists_across_commands(kv: Runner) -> None:
    import kvcli

    kv("init", "w", "ones(3)")
    kv("set-updater", "sgd:lr=0.1,momentum=0.9")
    for _ in range(3):
        assert kv("push", "w", "ones(3)").code == 0
    with kvcli.create("local") as store:
        store.init("w", np.ones(3, np.float32))
        store.set_updater("sgd:lr=0.1,momentum=0.9")
        for _ in range(3):
            store.push("w", np.ones(3, np.float32))
        expected = store.pull("w")
    got = json.loads(kv("pull", "w", "--json").out)["value"]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_device_store_type_is_remembered(kv: Runner) -> None:
    assert kv("--type", "device", "--num-devices", "2", "init", "k", "zeros(4)").code == 0
    assert kv("push", "k", "ones(4)", "--devices", "3").code == 0
    assert kv("pull", "k").array().tolist() == [3, 3, 3, 3]
    assert json.loads(kv("--json", "show").out)["store"] == {"type": "device", "options": {"num_devices": 2}}
    changed = kv("--type", "local", "push", "k", "ones(4)")
    assert changed.code == 1 and "kvcli reset --type local" in changed.err
    assert kv("reset", "--type", "local", "--yes").code == 0
    assert json.loads(kv("--json", "show").out)["store"]["type"] == "local"


def test_reinit_asks_and_says_so(kv: Runner) -> None:
    """init over a key the session has replaces its value (and drops its optimizer state): a
    script must say --yes, and the refusal says what would go and changes nothing."""
    assert "initialised key 3" in kv("init", "3", "ones(2)").err
    assert kv("init", "4", "ones(1)").code == 0
    refused = kv("init", "3,4,5", "zeros(2)")
    assert refused.code == 1
    assert refused.err == ("error: init would replace the values of 2 keys of session 'default' (3, 4): nothing was "
                           "changed (no terminal to ask on: stdin and stderr are not both one): pass --yes to confirm\n")
    assert kv("pull", "3").array().tolist() == [1, 1] and kv("pull", "5").code == 1  # nothing changed
    kv("set-updater", "sgd:lr=0.1,momentum=0.9", "--yes")
    kv("push", "3", "ones(2)")
    stateful = kv("init", "3", "zeros(2)")
    assert "(3) and drop any optimizer state kept for it: nothing was changed" in stateful.err
    again = kv("init", "3", "zeros(2)", "--yes")
    assert again.code == 0 and "re-initialised key 3" in again.err
    assert kv("pull", "3").array().tolist() == [0, 0]
    assert json.loads(kv("--json", "init", "3", "zeros(2)", "-y").out)["keys"][0]["reinitialised"] is True
    assert kv("init", "6", "ones(2)").code == 0  # a new key asks nothing


def test_export_import(kv: Runner, tmp_path: Path) -> None:
    kv("init", "w", "arange(4)")
    kv("set-updater", "sum")
    assert kv("export", str(tmp_path / "bk")).code == 0
    assert kv("-s", "copy", "import", str(tmp_path / "bk")).code == 0
    kv("-s", "copy", "push", "w", "ones(4)")
    assert kv("-s", "copy", "pull", "w").array().tolist() == [1, 2, 3, 4]


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("pull", "nope"), "session 'default' does not exist"),
        (("push", "nope", "ones(2)"), "session 'default' does not exist"),
        (("init", "k", "ones(10**12)"), "limit"),
        (("init", "k", "__import__('os')"), "unknown function"),
        (("init", "k", "foo"), "unknown name"),
        (("init", "../x", "ones(2)"), "not allowed"),
        (("init", "/etc/passwd", "ones(2)"), "not allowed"),
        (("init", "k" * 10_000, "ones(2)"), "not allowed"),
        (("-s", "../evil", "init", "k", "ones(2)"), "session name"),
        (("set-updater", "bogus"), "does not parse"),
        (("init", "k", "@/no/such.npy"), "does not exist"),
    ],
)
def test_user_errors_are_one_line_exit_1(kv: Runner, home: Path, args: tuple[str, ...], message: str) -> None:
    result = kv(*args)
    assert result.code == 1, result
    assert message in result.err
    assert result.err.startswith("error: ") and result.err.count("\n") == 1
    assert "Traceback" not in result.err
    assert len(result.err) < 1000  # a 10,000-character key is not echoed back in full
    files = [p for p in home.rglob("*") if p.is_file() and p.name not in (".lock",)]
    assert all(p.is_relative_to(home) for p in files)
    assert not (home.parent / "x").exists() and not (home.parent / "evil").exists()


def test_pickled_value_file_refused(kv: Runner, tmp_path: Path) -> None:
    evil = tmp_path / "evil.npy"
    evil.write_bytes(pickle.dumps(np.ones(3)))
    result = kv("init", "k", f"@{evil}")
    assert result.code == 1 and "pickle" in result.err


def test_damaged_session_names_the_file_and_keeps_it(kv: Runner, home: Path) -> None:
    kv("init", "k", "ones(2)")
    manifest = home / "sessions" / "default" / "session.db"
    manifest.write_bytes(manifest.read_bytes()[:40])
    damaged = manifest.read_bytes()
    for args in (("pull", "k"), ("push", "k", "ones(2)"), ("show",)):
        result = kv(*args)
        assert result.code == 1 and str(manifest) in result.err and "kvcli reset" in result.err
    assert manifest.read_bytes() == damaged
    assert kv("reset", "--yes").code == 0 and kv("keys").out == ""


def test_usage_errors_exit_2(kv: Runner) -> None:
    bogus = kv("--type", "bogus", "init", "k", "ones(1)")
    assert bogus.code == 2 and "'bogus' is not one of 'local', 'device'" in bogus.err
    assert kv("pull").code == 2
    assert kv("push", "k", "ones(2)", "--devices", "0").code == 2
    assert kv("frobnicate").code == 2
    assert kv("pull", "k", "--bogus").code == 2


def test_every_command_has_help_with_an_example() -> None:
    from typer.testing import CliRunner

    from kvcli.cli.app import build_app
    from kvcli.cli.table import commands

    runner = CliRunner()
    for command in [c.name for c in commands()]:
        result = runner.invoke(build_app(), [command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (command, result.output)
        assert "Example" in result.output and "kvcli " in result.output, command


def test_version(kv: Runner) -> None:
    import kvcli

    assert kv("--version").out.strip() == f"kvcli {kvcli.__version__}"


# ---------------------------------------------------------------------- fast path == typer path, end to end
FAST_PATH_CASES = [
    ("pull", "3"),
    ("pull", "3", "--json"),
    ("--json", "pull", "3"),
    ("pull", "3", "-d", "2"),
    ("pull", "3", "--devices=2", "--json"),
    ("-s", "default", "pull", "3"),
    ("--session=default", "pull", "3,4"),
    ("pull", "9"),
    ("keys",),
    ("--json", "keys"),
    ("show",),
    ("--json", "show"),
    ("delete", "99"),
]


def test_fast_path_matches_typer(kv: Runner) -> None:
    kv("init", "3,4", "arange(4).reshape(2,2)")
    for args in FAST_PATH_CASES:
        fast = kv(*args)
        slow = kv(*args, env={"KVCLI_NO_FAST_PATH": "1"})
        assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err), args


def test_fast_path_push_matches_typer(kv: Runner) -> None:
    kv("init", "3", "zeros(2)")
    for env in ({}, {"KVCLI_NO_FAST_PATH": "1"}):
        for args in (("push", "3", "ones(2)", "-d", "2"), ("push", "3", "--", "-ones(2)"), ("push", "3", "ones(2)", "ones(2)*2")):
            result = kv(*args, env=env)
            assert result.code == 0, (args, env, result)
        assert kv("pull", "3").array().tolist() == [3, 3]


def test_json_pull_writes_non_finite_numbers_as_null(kv) -> None:
    """NaN and Infinity are not JSON: `pull --json` stays parseable by strict readers."""
    import json as _json

    assert kv("init", "n", "[nan, inf, -inf, 1.5]").code == 0
    done = kv("pull", "n", "--json")
    assert done.code == 0
    text = done.out
    assert "NaN" not in text and "Infinity" not in text
    assert _json.loads(text)["value"] == [None, None, None, 1.5]
