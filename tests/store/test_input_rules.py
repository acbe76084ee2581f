"""Regression tests for the library's input rules (issue 13): keys that are not keys, values
that are not numeric arrays, closed stores, outputs that cannot be written — each one error
class, with the value untouched."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import kvcli
from kvcli.errors import OutputError, StoreClosedError, UpdaterError, ValueTypeError


@pytest.fixture
def kv():
    store = kvcli.create("local")
    store.init(1, np.arange(3, dtype=np.float32))
    yield store
    store.close()


@pytest.mark.parametrize("not_a_key", [True, False, 1.0, None, (1,)])
def test_has_is_false_for_what_init_refuses(kv, not_a_key) -> None:
    assert kv.has(not_a_key) is False
    assert kv.has(1) is True and kv.has(np.int64(1)) is True


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", r"key 2: a value of dtype <U3 cannot be stored"),
        ([[1, 2], [3]], r"key 2: a value of type list is not a rectangular array"),
        (np.array([1 + 2j]), r"key 2: a value of dtype complex128 cannot be stored"),
        (np.array([object()]), r"dtype object cannot be stored"),
    ],
)
def test_init_refuses_values_that_are_not_numeric_arrays(kv, value, message) -> None:
    with pytest.raises(ValueTypeError, match=message):
        kv.init(2, value)
    assert kv.keys() == [1]


def test_push_of_a_string_is_refused_and_keeps_the_value(kv) -> None:
    with pytest.raises(ValueTypeError, match=r"key 1: a value of dtype <U1"):
        kv.push(1, "a")
    assert kv.pull(1).tolist() == [0.0, 1.0, 2.0]


def test_closed_store_refuses_every_call_with_its_own_error(kv) -> None:
    kv.close()
    for call in (kv.keys, lambda: kv.has(1), lambda: kv.pull(1), lambda: kv.push(1, np.ones(3))):
        with pytest.raises(StoreClosedError, match="store is closed"):
            call()


def test_unwritable_outputs_and_updaters_have_their_own_errors(kv) -> None:
    frozen = np.zeros(3, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(OutputError, match="read-only"):
        kv.pull(1, out=frozen)
    with pytest.raises(OutputError, match="into a str"):
        kv.pull(1, out="x")
    with pytest.raises(UpdaterError, match="must be callable"):
        kv.set_updater(3)


def test_gc_state_survives_a_summary_in_the_same_process(tmp_path) -> None:
    """`summary`/`viz` pause the cyclic GC while they work; a shell must get it back."""
    from typer.testing import CliRunner

    from kvcli.cli.app import app

    model = tmp_path / "m.json"
    model.write_text('{"nodes": [{"op": "null", "name": "data", "inputs": []}], "arg_nodes": [0], "heads": [[0, 0, 0]]}')
    assert gc.isenabled()
    result = CliRunner().invoke(app, ["summary", str(model), "--allow-unknown-ops"])
    assert result.exit_code == 0, result.output
    assert gc.isenabled()
