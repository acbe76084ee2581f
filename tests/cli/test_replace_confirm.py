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
