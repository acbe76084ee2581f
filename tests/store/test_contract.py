"""The KVStore contract on every single-machine backend: semantics and bad input.

Every bad input must raise the documented error type, name the key and the fix, and leave
the store exactly as it was.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kvcli
from kvcli.errors import (
    ArityError,
    DTypeMismatchError,
    KeyTypeError,
    OptimizerStateError,
    RowSparseError,
    ShapeMismatchError,
    StoreError,
    UnknownKeyError,
    UpdaterError,
)
from kvcli.store.api import KVStore
from kvcli.arrays.sparse import RowSparse


def snapshot(kv: KVStore) -> dict:
    return {k: kv.pull(k) for k in kv.keys()}


def assert_unchanged(kv: KVStore, before: dict) -> None:
    after = snapshot(kv)
    assert after.keys() == before.keys()
    for key in before:
        np.testing.assert_array_equal(after[key], before[key])
        assert after[key].dtype == before[key].dtype


# ---------------------------------------------------------------- semantics
def test_init_stores_a_copy(store: KVStore) -> None:
    value = np.ones((2, 3), np.float32)
    store.init("w", value)
    value[:] = 7
    np.testing.assert_array_equal(store.pull("w"), np.ones((2, 3)))


def test_pull_returns_copies_the_store_keeps_its_value(store: KVStore) -> None:
    store.init(1, np.arange(6, dtype=np.float32).reshape(2, 3))
    pulled = store.pull(1)
    pulled[:] = -1
    out = np.zeros((2, 3), np.float32)
    store.pull(1, out=out)
    out[:] = -2
    np.testing.assert_array_equal(store.pull(1), np.arange(6).reshape(2, 3))


def test_push_list_is_summed_in_order(store: KVStore) -> None:
    """In MXNet 1.9.1's order: ``local`` adds the first value to the sum of the next ones
    (CommCPU's groups of four), the other stores left to right."""
    store.init(0, np.zeros(5, np.float64))
    values = [np.full(5, v) for v in (0.1, 0.2, 0.3)]
    store.push(0, values)
    expected = values[0] + (values[1] + values[2]) if store.type == "local" else (values[0] + values[1]) + values[2]
    assert not np.array_equal(values[0] + (values[1] + values[2]), (values[0] + values[1]) + values[2])
    np.testing.assert_array_equal(store.pull(0), expected)


def test_str_keys_and_lists_of_keys(store: KVStore) -> None:
    store.init(["a", "b"], [np.zeros(2), np.ones(2)])
    store.push(["b", "a"], [np.full(2, 5.0), [np.ones(2), np.ones(2)]])
    a, b = store.pull(["a", "b"])
    np.testing.assert_array_equal(a, [2, 2])
    np.testing.assert_array_equal(b, [5, 5])
    assert store.keys() == ["a", "b"]


def test_updater_spec_strings(store: KVStore) -> None:
    store.init(3, np.ones(4, np.float32))
    store.set_updater("sum")
    store.push(3, np.ones(4, np.float32))
    store.set_updater("scale-add:2")
    store.push(3, [np.ones(4, np.float32), np.ones(4, np.float32)])
    np.testing.assert_array_equal(store.pull(3), [6, 6, 6, 6])  # 1 + 1 + 2*(1+1)
    assert store.updater_spec == "scale-add:2"
    store.set_updater(None)
    store.push(3, np.zeros(4, np.float32))
    np.testing.assert_array_equal(store.pull(3), np.zeros(4))
    assert store.updater_spec == "assign"


def test_python_updater_from_file(store: KVStore, tmp_path: Path) -> None:
    source = tmp_path / "upd.py"
    source.write_text("def halve(key, value, stored):\n    stored[:] = (stored + value) / 2\n")
    store.init(0, np.zeros(3))
    store.set_updater(f"python:{source}:halve")
    store.push(0, np.full(3, 8.0))
    np.testing.assert_array_equal(store.pull(0), [4, 4, 4])
    assert store.updater_spec == f"python:{source}:halve"


def test_pushpull_and_row_sparse_pull(store: KVStore) -> None:
    store.init("emb", RowSparse.all_rows(np.zeros((4, 2), np.float32)))
    out = np.empty((4, 2), np.float32)
    store.pushpull("emb", np.arange(8, dtype=np.float32).reshape(4, 2), out=out)
    np.testing.assert_array_equal(out, np.arange(8).reshape(4, 2))
    rows = RowSparse.zeros((4, 2))
    store.row_sparse_pull("emb", out=rows, row_ids=np.array([3, 1, 3]))
    np.testing.assert_array_equal(rows.indices, [1, 3])
    np.testing.assert_array_equal(rows.data, [[2, 3], [6, 7]])
    two = [RowSparse.zeros((4, 2)) for _ in range(2)]
    store.row_sparse_pull("emb", out=two, row_ids=[[0], [2]])
    assert (two[0].indices.tolist(), two[1].indices.tolist()) == ([0], [2])
    np.testing.assert_array_equal(two[0].data, [[0, 1]])
    np.testing.assert_array_equal(two[1].data, [[4, 5]])
    dense = np.full((4, 2), 9, np.float32)
    with pytest.raises(RowSparseError, match="the output is dense"):
        store.row_sparse_pull("emb", out=dense, row_ids=[1])
    assert (dense == 9).all()


def test_delete_and_reinit_with_new_shape(store: KVStore) -> None:
    store.init(1, np.ones(3))
    store.init(1, np.ones((2, 2), np.int32))
    assert store.info(1).shape == (2, 2) and store.info(1).dtype == np.int32
    store.delete(1)
    assert store.keys() == [] and not store.has(1)
    store.init("now-str-keys-are-fine", np.ones(1))


def test_mxnet_properties(store: KVStore) -> None:
    assert (store.rank, store.num_workers) == (0, 1)
    store.barrier()
    assert store.type in ("local", "device")


def test_optimizer_state_roundtrip(store: KVStore, tmp_path: Path) -> None:
    store.init(0, np.ones(3, np.float32))
    store.set_optimizer("sgd:lr=0.1,momentum=0.9")
    store.push(0, np.ones(3, np.float32))
    path = tmp_path / "opt.npz"
    store.save_optimizer_states(path)
    momentum = store.updater.states[0]["momentum"].copy()
    np.testing.assert_allclose(momentum, [-0.1] * 3, rtol=1e-6)
    store.set_optimizer("sgd:lr=0.1,momentum=0.9")  # fresh state
    store.load_optimizer_states(path)
    np.testing.assert_array_equal(store.updater.states[0]["momentum"], momentum)
    assert store.updater.counts == {0: 1}
    with open(path, "rb") as handle:
        assert b"pickle" not in handle.read()


# ---------------------------------------------------------------- bad input
def test_unknown_key(store: KVStore) -> None:
    store.init(1, np.ones(2))
    before = snapshot(store)
    for call in (lambda: store.push(2, np.ones(2)), lambda: store.pull(2),
                 lambda: store.push([1, 2], [np.ones(2), np.ones(2)])):
        with pytest.raises(UnknownKeyError, match=r"key 2 is not initialised.*init\(2, value\)"):
            call()
    assert_unchanged(store, before)


def test_shape_mismatch_on_push_and_pull(store: KVStore) -> None:
    store.init("w", np.ones((2, 2), np.float32))
    before = snapshot(store)
    with pytest.raises(ShapeMismatchError, match=r"key 'w': shape \(3,\) does not match the stored \(2, 2\)"):
        store.push("w", np.ones(3, np.float32))
    with pytest.raises(ShapeMismatchError, match=r"value 1 of 2"):
        store.push("w", [np.ones((2, 2), np.float32), np.ones((2, 3), np.float32)])
    with pytest.raises(ShapeMismatchError, match="pull"):
        store.pull("w", out=np.zeros((4,), np.float32))
    assert_unchanged(store, before)


def test_dtype_mismatch(store: KVStore) -> None:
    store.init("w", np.ones(2, np.float32))
    before = snapshot(store)
    with pytest.raises(DTypeMismatchError, match=r"key 'w': dtype float64 .*astype\('float32'\)"):
        store.push("w", np.ones(2))
    with pytest.raises(DTypeMismatchError):
        store.pull("w", out=np.zeros(2, np.int64))
    assert_unchanged(store, before)


def test_mixing_int_and_str_keys(store: KVStore) -> None:
    store.init(1, np.ones(2))
    with pytest.raises(KeyTypeError, match="mix int and str keys"):
        store.init("a", np.ones(2))
    with pytest.raises(KeyTypeError, match="mix int and str"):
        store.init([2, "b"], [np.ones(2), np.ones(2)])
    with pytest.raises(KeyTypeError, match="keys are int or str"):
        store.init(1.5, np.ones(2))  # type: ignore[arg-type]
    assert store.keys() == [1]


def test_list_lengths_must_pair(store: KVStore) -> None:
    store.init([1, 2], [np.ones(2), np.ones(2)])
    before = snapshot(store)
    with pytest.raises(ArityError, match=r"2 keys \[1, 2\] but 1 values"):
        store.push([1, 2], [np.ones(2)])
    with pytest.raises(ArityError, match="but one value"):
        store.pull([1, 2], out=np.zeros(2))
    with pytest.raises(ArityError):
        store.init([3, 4], [np.ones(2)])
    assert_unchanged(store, before)


def test_a_bad_value_in_a_key_list_changes_no_key(store: KVStore) -> None:
    store.init([1, 2], [np.zeros(2), np.zeros(2)])
    before = snapshot(store)
    with pytest.raises(ShapeMismatchError, match="key 2"):
        store.push([1, 2], [np.ones(2), np.ones(5)])
    assert_unchanged(store, before)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("sgdd", "does not parse"),
        ("sgd:lr", "is not NAME=VALUE"),
        ("sgd:lr=fast", "is not a number"),
        ("sgd:speed=1", "has no parameter 'speed'"),
        ("scale-add:x", "is not a number"),
        ("adam:lr=nan", "not a finite number"),
        ("python:nowhere.py", "python:FILE.py:FUNCTION"),
        ("python:/does/not/exist.py:f", "does not exist"),
    ],
)
def test_updater_specs_that_do_not_parse(store: KVStore, spec: str, message: str) -> None:
    store.set_updater("sum")
    with pytest.raises(UpdaterError, match=message):
        store.set_updater(spec)
    assert store.updater_spec == "sum"


def test_python_updater_without_the_function(store: KVStore, tmp_path: Path) -> None:
    source = tmp_path / "upd.py"
    source.write_text("def other(k, v, s):\n    pass\n")
    with pytest.raises(UpdaterError, match="has no function 'missing'"):
        store.set_updater(f"python:{source}:missing")
    broken = tmp_path / "broken.py"
    broken.write_text("def broken(:\n")
    with pytest.raises(UpdaterError, match="failed to load: SyntaxError"):
        store.set_updater(f"python:{broken}:f")


def test_optimizer_state_errors(store: KVStore, tmp_path: Path) -> None:
    with pytest.raises(OptimizerStateError, match="updater is assign"):
        store.save_optimizer_states(tmp_path / "x.npz")
    with pytest.raises(OptimizerStateError, match="does not exist"):
        store.load_optimizer_states(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"junk")
    store.set_optimizer("adam")
    with pytest.raises(OptimizerStateError, match="not an optimizer state file"):
        store.load_optimizer_states(tmp_path / "junk.npz")
    store.init(0, np.ones(2, np.float32))
    store.push(0, np.ones(2, np.float32))
    store.save_optimizer_states(tmp_path / "adam.npz")
    store.set_optimizer("sgd:momentum=0.5")
    with pytest.raises(OptimizerStateError, match="holds adam state but the updater is sgd"):
        store.load_optimizer_states(tmp_path / "adam.npz")


def test_closed_store_refuses_work(store: KVStore) -> None:
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.init(1, np.ones(1))
    store.close()  # twice is fine


def test_unknown_store_type() -> None:
    with pytest.raises(StoreError, match="unknown store type 'gpu_magic'"):
        kvcli.create("gpu_magic")
    with pytest.raises(StoreError, match="num_devices"):
        kvcli.create("device", num_devices=0)


def test_view_is_read_only_and_current(store: KVStore) -> None:
    store.init(0, np.arange(3.0))
    view = store.view(0)
    np.testing.assert_array_equal(view, [0, 1, 2])
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 9
    with pytest.raises(UnknownKeyError):
        store.view(1)
