"""Issue 35 item 1: ``kvcli import DIR`` into a session that has keys replaces and drops
them: it says which, asks on a terminal, refuses without ``--yes`` elsewhere (nothing
changed); ``--merge`` imports only the exported keys and keeps the rest."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kvcli.session import Session
from tests.runner import KVCLI, kvcli_env, run_kvcli

pexpect = pytest.importorskip("pexpect", reason="pexpect is in the [test] extra: pip install -e '.[test]'")


def setup(tmp_path: Path) -> tuple[Path, Path]:
    """An export holding w=[1,1,1] and b=[2,2] (sgd with state), and session 'target'
    holding w=[7,7,7] and c=[9] (updater sum)."""
    home = tmp_path / "home"
    with Session("source", home) as session:
        session.init(["w", "b"], [np.ones(3, np.float32), np.full(2, 2, np.float32)])
        session.set_updater("sgd:lr=0.1,momentum=0.9")
        session.push(["w"], [np.zeros(3, np.float32)])  # a state to export
        session.push(["w"], [np.full(3, -10, np.float32)])  # w = 1 + 1 = 2: sgd subtracts lr * grad
        folder = session.export(tmp_path / "export")
    with Session("target", home) as session:
        session.init(["w", "c"], [np.full(3, 7, np.float32), np.full(1, 9, np.float32)])
        session.set_updater("sum")
    return home, folder


def held(home: Path) -> dict[str, object]:
    with Session("target", home) as session:
        return {"keys": {k: session.pull([k])[0][0].tolist() for k in session.keys()},
                "updater": session.describe()["updater"]}


BEFORE = {"keys": {"w": [7.0, 7.0, 7.0], "c": [9.0]}, "updater": "sum"}
QUESTION = ("import of {folder} into session 'target' replaces the values of key w and drops key c, and replaces "
            "its updater and optimizer state:")


def test_import_in_a_script_refuses_without_yes_and_says_what_it_would_replace(tmp_path: Path) -> None:
    home, folder = setup(tmp_path)
    done = run_kvcli("--session", "target", "import", str(folder), home=home)
    assert done.returncode == 1 and done.stderr.count("\n") == 1  # the old import replaced everything
    assert QUESTION.format(folder=folder) in done.stderr
    assert "nothing was changed (no terminal to ask on: stdin and stderr are not both one): pass --yes to confirm" in done.stderr
    assert held(home) == BEFORE
    done = run_kvcli("--json", "--session", "target", "import", str(folder), "--yes", home=home)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["replaced"], report["dropped"], report["keys"], report["merged"]) == (["w"], ["c"], ["w", "b"], False)
    assert held(home) == {"keys": {"w": [2.0, 2.0, 2.0], "b": [2.0, 2.0]}, "updater": "sgd:lr=0.1,momentum=0.9"}


def test_import_on_a_terminal_asks_and_a_no_changes_nothing(tmp_path: Path) -> None:
    home, folder = setup(tmp_path)
    env = kvcli_env(home, TERM="xterm")
    for answer, after in (("n", BEFORE), ("y", None)):
        child = pexpect.spawn(str(KVCLI), ["--session", "target", "import", str(folder)], env=env, encoding="utf-8",
                              timeout=60, dimensions=(40, 400))
        child.expect_exact(QUESTION.format(folder=folder) + " [y/N] ")
        child.sendline(answer)
        child.expect(pexpect.EOF)
        child.close()
        if after is not None:
            assert child.exitstatus == 1 and "nothing was changed (not confirmed)" in (child.before or "")
            assert held(home) == after
        else:
            assert child.exitstatus == 0
            assert "imported 2 keys from" in (child.before or "") and "replaced key w; dropped key c" in child.before
            assert held(home)["keys"] == {"w": [2.0, 2.0, 2.0], "b": [2.0, 2.0]}


def test_merge_imports_only_the_exported_keys_and_keeps_the_rest(tmp_path: Path) -> None:
    home, folder = setup(tmp_path)
    done = run_kvcli("--session", "target", "import", str(folder), "--merge", home=home)
    assert done.returncode == 1 and (f"import of {folder} into session 'target' replaces the values of key w, and "
                                     "keeps its other keys, updater and state:") in done.stderr
    assert held(home) == BEFORE
    done = run_kvcli("--session", "target", "import", str(folder), "--merge", "--yes", home=home)
    assert done.returncode == 0, done.stderr
    assert "the exported updater 'sgd:lr=0.1,momentum=0.9' and its optimizer state were not adopted" in done.stderr
    assert "imported 2 keys from" in done.stderr and "(replaced key w)" in done.stderr
    assert held(home) == {"keys": {"w": [2.0, 2.0, 2.0], "c": [9.0], "b": [2.0, 2.0]}, "updater": "sum"}
    assert run_kvcli("--session", "target", "push", "w", "[1, 1, 1]", home=home).returncode == 0
    assert held(home)["keys"]["w"] == [3.0, 3.0, 3.0]  # the session's own updater (sum) runs


def test_an_import_into_an_empty_session_asks_nothing(tmp_path: Path) -> None:
    home, folder = setup(tmp_path)
    done = run_kvcli("--session", "fresh", "import", str(folder), home=home)
    assert done.returncode == 0, done.stderr
    assert "imported 2 keys from" in done.stderr and "replaced" not in done.stderr


def test_import_plan_names_what_changes(tmp_path: Path) -> None:
    home, folder = setup(tmp_path)
    with Session("target", home) as session:
        assert session.import_plan(folder) == (["w"], ["c"], ["b"])
        assert session.import_plan(folder, merge=True) == (["w"], [], ["b"])
    with Session("fresh", home) as session:
        assert session.import_plan(folder) == ([], [], ["w", "b"])
        assert not session.exists()  # a plan creates nothing
