"""``mx.test_utils.assert_almost_equal`` and ``almost_equal`` behave as MXNet 1.9.1's: the
default tolerances by dtype (float32 1e-4 / 1e-3, float16 1e-2 / 1e-1, float64 1e-5 / 1e-20,
integers exact), what a failure prints and its message, the numpy print options it leaves
(recorded by ``tests/data/make_mxnet_almost_equal_reference.py`` over
``almost_equal_cases.py``).

The messages are numpy's ``build_err_msg`` text: numpy 2 adds ``shape=(n,)`` to a summarised
array's repr (MXNet 1.9.1 runs on numpy < 1.24), which is dropped before comparing; a bool
mismatch is numpy's own ``assert_equal`` message, whose wording changed with numpy 2, so only
that it fails is compared there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import kvcli.mx as mx

from . import almost_equal_cases as cases

REFERENCE = json.loads((Path(__file__).resolve().parents[1] / "data" / "mxnet_almost_equal_reference.json").read_text())
#: Cases whose message is numpy's own assertion text (worded differently by numpy 2).
NUMPY_OWN_MESSAGE = {"bools"}


def _comparable(outcome: dict[str, Any], name: str) -> dict[str, Any]:
    outcome = dict(outcome)
    if "error" in outcome:
        outcome["error"] = "<failed>" if name in NUMPY_OWN_MESSAGE else re.sub(r", shape=\(\d+,\)\)", ")", outcome["error"])
    return outcome


def test_reference_is_from_mxnet_191() -> None:
    assert REFERENCE["mxnet"] == "1.9.1" and set(REFERENCE["cases"]) == set(cases.CASES)


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_as_mxnet(name: str) -> None:
    got = cases.run(mx, cases.CASES[name])
    assert _comparable(got, name) == _comparable(REFERENCE["cases"][name], name)
