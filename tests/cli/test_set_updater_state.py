"""``set-updater`` and the saved optimizer state (issue 35, item 2): the same spec again keeps
the state, as one MXNet training run does; another spec drops it only when asked (a
terminal's yes, or --yes), and the line says what was dropped. ``set-compression none``
drops the compression residuals under the same rule.

The numbers are MXNet 1.9.1's (tests/data/make_mxnet_updater_state_reference.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import SessionError
from kvcli.session import Session

from .conftest import KVCLI, Runner, kvcli_env

REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "mxnet_updater_state_reference.json").read_text())
CASES = REFERENCE["cases"]


def _reordered(spec: str) -> str:
    """The same spec with its arguments in the reverse order (the same updater)."""
    name, _, args = spec.partition(":")
    return f"{name}:{','.join(reversed(args.split(',')))}"


def _run(session: Session, case: dict, second: str, drop_state: bool = False) -> np.ndarray:
    session.init(["w"], [np.array(case["weight"], np.float32)])
    session.set_updater(case["spec"], drop_state=True)
    session.push(["w"], [np.array(case["grads"][0], np.float32)])
    session.set_updater(second, drop_state=drop_state)
    session.push(["w"], [np.array(case["grads"][1], np.float32)])
    return session.pull(["w"])[0][0]


@pytest.mark.parametrize("case", CASES, ids=[c["spec"] for c in CASES])
def test_the_same_spec_again_keeps_the_state_as_mxnet(tmp_path: Path, case: dict) -> None:
    with Session("s", tmp_path) as session:
        got = _run(session, case, _reordered(case["spec"]))
        assert session.notices == [f"the same updater: kept the saved state of {session.describe()['updater']!r} "
                                   "for 1 key"]
    np.testing.assert_array_equal(got, np.array(case["kept"], np.float32))


@pytest.mark.parametrize("case", CASES, ids=[c["spec"] for c in CASES])
def test_another_spec_drops_the_state_only_when_asked(tmp_path: Path, case: dict) -> None:
    with Session("s", tmp_path) as session:
        with pytest.raises(SessionError, match="would drop the saved state of .* for 1 key: nothing was changed") as error:
            _run(session, case, case["other_spec"])
        assert error.value.fields["dropped"] == 1
        assert session.describe()["optimizer_state"]  # nothing changed
    with Session("t", tmp_path) as session:
        got = _run(session, case, case["other_spec"], drop_state=True)
        assert len(session.notices) == 1 and session.notices[0].startswith("dropped the saved state of")
    np.testing.assert_allclose(got, np.array(case["changed"], np.float32), rtol=1e-6, atol=1e-7)


def test_the_issues_example_on_the_command_line(kv: Runner) -> None:
    case = CASES[-1]
    assert case["spec"] == "sgd:lr=0.1,momentum=0.9" and case["kept"][0][0] == pytest.approx(0.71)
    assert case["fresh"][0][0] == pytest.approx(0.8)
    assert kv("init", "w", "ones(2,3)").code == 0
    assert kv("set-updater", "sgd:lr=0.1,momentum=0.9").code == 0
    assert kv("push", "w", "ones(2,3)").code == 0
    again = kv("set-updater", "sgd:lr=0.1,momentum=0.9")
    assert again.code == 0
    assert "kept the saved state of 'sgd:lr=0.1,momentum=0.9' for 1 key" in again.err
    assert kv("push", "w", "ones(2,3)").code == 0
    assert kv("--json", "pull", "w").out.count("0.71") == 6  # MXNet's 0.71, not 0.8


def test_another_spec_in_a_script_needs_yes_and_says_what_it_dropped(kv: Runner) -> None:
    assert kv("init", "w", "ones(2)").code == 0
    assert kv("set-updater", "sgd:lr=0.1,momentum=0.9").code == 0
    assert kv("push", "w", "ones(2)").code == 0
    refused = kv("set-updater", "adam")
    assert refused.code == 1
    assert ("setting the updater 'adam' would drop the saved state of 'sgd:lr=0.1,momentum=0.9' for 1 key: "
            "nothing was changed") in refused.err and "pass --yes" in refused.err
    assert "Traceback" not in refused.err
    show = json.loads(kv("--json", "show").out)
    assert show["updater"] == "sgd:lr=0.1,momentum=0.9" and show["optimizer_state"]
    done = kv("set-updater", "adam", "--yes")
    assert done.code == 0
    assert done.err.strip() == "updater: adam (dropped the saved state of 'sgd:lr=0.1,momentum=0.9' for 1 key)"
    assert kv("set-updater", "sgd").code == 0  # no state saved yet: nothing to ask


def test_a_terminal_is_asked(kv: Runner, home: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    assert kv("init", "w", "ones(2)").code == 0
    assert kv("set-updater", "sgd:lr=0.1,momentum=0.9").code == 0
    assert kv("push", "w", "ones(2)").code == 0
    for answer, code, updater in (("n", 1, "sgd:lr=0.1,momentum=0.9"), ("y", 0, "adam")):
        child = pexpect.spawn(str(KVCLI), ["set-updater", "adam"], env=kvcli_env(home, TERM="dumb"),
                              encoding="utf-8", timeout=60, dimensions=(40, 200))
        child.expect(r"would drop the saved state of 'sgd:lr=0\.1,momentum=0\.9' for 1 key: \[y/N\]")
        child.sendline(answer)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == code, child.before
        assert json.loads(kv("--json", "show").out)["updater"] == updater


def test_turning_compression_off_drops_residuals_only_when_asked(kv: Runner) -> None:
    assert kv("--type", "device", "--num-devices", "1", "init", "g", "zeros(4)").code == 0
    assert kv("set-compression", "2bit:threshold=0.5").code == 0
    assert kv("push", "g", "full((4,),0.3)").code == 0  # below the threshold: all of it is a residual
    assert kv("set-compression", "2bit:threshold=0.25").code == 0  # another threshold keeps them
    refused = kv("set-compression", "none")
    assert refused.code == 1
    assert "would drop the compression residuals of 1 key: nothing was changed" in refused.err
    assert json.loads(kv("--json", "show").out)["compression"] == "2bit:threshold=0.25"
    done = kv("set-compression", "none", "--yes")
    assert done.code == 0 and done.err.strip() == "gradient compression: none (dropped the compression residuals of 1 key)"
