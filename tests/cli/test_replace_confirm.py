"""``kvcli init`` over a key the session has replaces its value and drops its optimizer
state, ``kvcli delete`` drops keys: on a terminal each asks (a no changes nothing),
elsewhere each needs ``--yes``; in the library, ``Session.init(..., replace=False)`` refuses
and names the keys."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import SessionError
from kvcli.session import Session
from tests.runner import KVCLI, kvcli_env

pexpect = pytest.importorskip("pexpect", reason="pexpect is in the [test] extra: pip install -e '.[test]'")


def _value(home: Path, key: str) -> list[float]:
    with Session("default", home) as session:
        return session.pull([key])[0][0].tolist()


def test_init_on_a_terminal_asks_and_a_no_changes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Session("default", home) as session:
        session.init(["w"], [np.full(2, 5, np.float32)])
        session.set_updater("sgd:lr=0.1,momentum=0.9")
        session.push(["w"], [np.ones(2, np.float32)])  # a momentum to lose
    kept = _value(home, "w")
    question = "init would replace the value of 1 key of session 'default' (w) and drop any optimizer state kept for it:"
    for answer in ("n", "y"):
        child = pexpect.spawn(str(KVCLI), ["init", "w", "zeros(2)"], env=kvcli_env(home, TERM="xterm"),
                              encoding="utf-8", timeout=60, dimensions=(40, 300))
        child.expect_exact(question + " [y/N] ")
        child.sendline(answer)
        child.expect(pexpect.EOF)
        child.close()
        if answer == "n":
            assert child.exitstatus == 1 and "nothing was changed (not confirmed)" in (child.before or "")
            assert _value(home, "w") == kept
        else:
            assert child.exitstatus == 0 and "re-initialised key w" in (child.before or "")
            assert _value(home, "w") == [0.0, 0.0]


def test_the_library_refuses_without_replace(tmp_path: Path) -> None:
    with Session("default", tmp_path) as session:
        session.init(["a", "b"], [np.ones(2), np.ones(3)])
        with pytest.raises(SessionError) as caught:
            session.init(["b", "c", "a"], [np.zeros(2)] * 3, replace=False)
        assert caught.value.fields["replaced"] == ["b", "a"]
        assert str(caught.value) == ("init would replace the values of 2 keys of session 'default' (b, a): nothing "
                                     "was changed; pass replace=True to replace them")
        assert session.keys() == ["a", "b"] and session.pull(["b"])[0][0].tolist() == [1, 1, 1]
        session.init(["b"], [np.zeros(2)])  # the default replaces, as before
        assert session.pull(["b"])[0][0].tolist() == [0, 0]


def test_delete_on_a_terminal_asks_and_a_no_changes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Session("default", home) as session:
        session.init(["w", "b"], [np.full(2, 5, np.float32), np.ones(1, np.float32)])
    question = ("delete drops 2 keys (w, b) of session 'default' (the values and any optimizer state kept for them):")
    for answer in ("n", "y"):
        child = pexpect.spawn(str(KVCLI), ["delete", "w,b"], env=kvcli_env(home, TERM="xterm"), encoding="utf-8",
                              timeout=60, dimensions=(40, 300))
        child.expect_exact(question + " [y/N] ")
        child.sendline(answer)
        child.expect(pexpect.EOF)
        child.close()
        with Session("default", home) as session:
            keys = session.keys()
        if answer == "n":
            assert child.exitstatus == 1 and "nothing was changed (not confirmed)" in (child.before or "")
            assert keys == ["w", "b"]
        else:
            assert child.exitstatus == 0 and "deleted key w, key b" in (child.before or "")
            assert keys == []


# ---------------------------------------------------------------------- files an -o replaces
REPO = Path(__file__).resolve().parents[2]
MLP = REPO / "sample_graphs" / "mlp.json"


def test_pull_o_over_a_file_needs_yes_and_changes_nothing_without(tmp_path: Path) -> None:
    from tests.runner import run_kvcli

    home, out = tmp_path / "home", tmp_path / "w.npy"
    assert run_kvcli("init", "w", "[1, 2]", home=home).returncode == 0
    out.write_bytes(b"precious")
    refused = run_kvcli("pull", "w", "-o", str(out), home=home)
    assert refused.returncode == 1 and refused.stderr == (
        f"error: {out} exists: pull replaces it: nothing was changed (no terminal to ask on: stdin and stderr are "
        "not both one): pass --yes to confirm\n")
    assert out.read_bytes() == b"precious"
    unknown = run_kvcli("pull", "nope", "-o", str(out), home=home)  # the key's error, not a question
    assert unknown.returncode == 1 and "nope" in unknown.stderr and "exists" not in unknown.stderr
    assert run_kvcli("pull", "w", "-o", str(out), "--yes", home=home).returncode == 0
    assert np.load(out).tolist() == [1, 2]
    fresh = tmp_path / "new.npy"
    assert run_kvcli("pull", "w", "-o", str(fresh), home=home).returncode == 0  # a new file asks nothing


def test_viz_over_a_file_needs_yes_after_its_checks(tmp_path: Path) -> None:
    from tests.runner import run_kvcli

    out = tmp_path / "m.svg"
    out.write_text("mine")
    refused = run_kvcli("viz", str(MLP), "-o", str(out))
    assert refused.returncode == 1 and f"{out} exists: viz replaces it: nothing was changed" in refused.stderr
    assert out.read_text() == "mine"
    wrong = run_kvcli("viz", str(MLP), "--dtype", "dta=float16", "-o", str(out))  # checked before the question
    assert wrong.returncode == 1 and "no input of that name" in wrong.stderr and "exists" not in wrong.stderr
    assert run_kvcli("viz", str(MLP), "-o", str(out), "-y").returncode == 0
    assert out.read_text().lstrip().startswith("<?xml")
    default = tmp_path / "mlp.svg"  # no -o: MODEL's name in the current folder
    default.write_text("mine too")
    assert run_kvcli("viz", str(MLP), cwd=tmp_path).returncode == 1 and default.read_text() == "mine too"


def test_viz_without_graphviz_asks_before_its_dot_file_replaces_one(tmp_path: Path) -> None:
    from tests.runner import run_kvcli

    (tmp_path / "m.dot").write_text("digraph mine {}")
    done = run_kvcli("viz", str(MLP), "-o", str(tmp_path / "m.svg"), env={"PATH": str(tmp_path / "no-bin")})
    assert done.returncode == 1 and f"{tmp_path / 'm.dot'} exists: viz replaces it" in done.stderr
    assert (tmp_path / "m.dot").read_text() == "digraph mine {}"


def test_viz_on_a_terminal_asks(tmp_path: Path) -> None:
    out = tmp_path / "m.svg"
    for answer in ("n", "y"):
        out.write_text("mine")
        child = pexpect.spawn(str(KVCLI), ["viz", str(MLP), "-o", str(out)], env=kvcli_env(tmp_path, TERM="xterm"),
                              encoding="utf-8", timeout=60, dimensions=(40, 300))
        child.expect_exact(f"{out} exists: viz replaces it: [y/N] ")
        child.sendline(answer)
        child.expect(pexpect.EOF)
        child.close()
        if answer == "n":
            assert child.exitstatus == 1 and out.read_text() == "mine"
        else:
            assert child.exitstatus == 0 and out.read_text().lstrip().startswith("<?xml")
