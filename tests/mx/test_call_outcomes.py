"""kvcli.mx returns what MXNet 1.9.1 returns (None from ``pull``, ``pushpull``, ``broadcast``,
``row_sparse_pull``, ...) and raises what MXNet raises where MXNet code catches it:
``AssertionError`` for a pull without ``out``, lists of keys and values of other lengths,
keys that are not int or str and optimizer states without an optimizer; ``TypeError`` for an
optimizer keyword that does not exist and for ``nd.array`` of strings
(``tests/mx/call_programs.py``, recorded by ``tests/data/make_mxnet_call_outcomes_reference.py``)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import kvcli.mx as mx
from kvcli.errors import KVCliError
from tests.mx import call_programs

DATA = json.loads((Path(__file__).parents[1] / "data" / "mxnet_call_outcomes_reference.json").read_text())
OUTCOMES = DATA["outcomes"]


def test_recorded_from_mxnet_191_for_every_call(tmp_path: Path) -> None:
    assert DATA["mxnet_version"] == "1.9.1"
    assert set(OUTCOMES) == set(call_programs.programs(mx, str(tmp_path)))


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_call_returns_or_raises_as_mxnet(name: str, tmp_path: Path) -> None:
    want = OUTCOMES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = call_programs.outcome(mx, call_programs.programs(mx, str(tmp_path))[name])
    if "caught" in want:
        assert "caught" in got, f"{name}: MXNet raises {want['caught']}, kvcli returned {got}"
        assert set(want["caught"]) <= set(got["caught"]), f"{name}: MXNet's {want['caught']}, kvcli's {got['caught']}"
    else:
        assert got == want


@pytest.mark.parametrize("call, message", [
    (lambda kv: kv.pull(3), r"pull of key 3 needs out=: the NDArray \(or list of them\) to write into"),
    (lambda kv: kv.init([4, 5], [mx.nd.ones((2,))]), r"init got 2 keys \[4, 5\] but 1 values"),
    (lambda kv: kv.init(1.5, mx.nd.ones((2,))), r"key 1.5 is a float: keys are int or str"),
    (lambda kv: kv.load_optimizer_states("x"), r"cannot load optimizer states: this store has no optimizer"),
])
def test_assertions_are_kvcli_errors_that_say_the_fix(call, message) -> None:
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.ones((2,)))
    with pytest.raises(AssertionError, match=message) as caught:
        call(kv)
    assert isinstance(caught.value, KVCliError)  # one line with the fix, and an MXNetError as every kvcli error


def test_library_store_keeps_returning_values() -> None:
    """Only kvcli.mx returns None as MXNet; the library's store (kvcli.create) returns values."""
    import numpy as np

    import kvcli

    with kvcli.create("local") as kv:
        kv.init(3, np.ones(2, np.float32))
        assert kv.pull(3).tolist() == [1.0, 1.0]
        value = np.ones(2, np.float32)
        assert kv.pushpull(3, value) is value
