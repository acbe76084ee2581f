"""Optimizers on row-sparse store keys (embedding tables): the store's value is updated in
place, lazily where the optimizer is lazy; MXNet's numbers are checked in
test_training_loops.py, these tests check what kvcli adds or refuses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.errors import UpdaterError
from kvcli.arrays.sparse import RowSparse

SHAPE = (4, 2)


def _grad(rows: list[int], value: float = 1.0) -> object:
    return mx.nd.sparse.row_sparse_array((np.full((len(rows), 2), value, np.float32), rows), shape=SHAPE)


def _table(kv: object, key: int = 0) -> np.ndarray:
    out = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.row_sparse_pull(key, out=out, row_ids=mx.nd.array(np.arange(SHAPE[0])))  # type: ignore[attr-defined]
    return out.asnumpy()


def test_a_lazy_update_never_goes_over_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.create("adam", learning_rate=0.1))
    kv.init(0, mx.nd.ones(SHAPE).tostype("row_sparse"))

    grads = [_grad([1]), _grad([1, 3])]

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the push went over the whole table")

    monkeypatch.setattr(RowSparse, "to_dense", refuse)
    monkeypatch.setattr(RowSparse, "__array__", refuse)
    monkeypatch.setattr(RowSparse, "validate", refuse)  # a check of every row id
    kv.push(0, grads)
    monkeypatch.undo()
    table = _table(kv)
    np.testing.assert_allclose(table[[1, 3], 0], 0.9, rtol=1e-5)  # Adam's first step: lr
    np.testing.assert_array_equal(table[[0, 2]], 1.0)


def test_a_user_optimizer_gets_the_row_sparse_weight() -> None:
    seen = []

    class HalfStep(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):  # type: ignore[no-untyped-def]
            seen.append((weight.stype, grad.stype))
            weight[:] = weight - grad * 0.5

    kv = mx.kv.create("local")
    kv.set_optimizer(HalfStep())
    kv.init(0, mx.nd.ones(SHAPE).tostype("row_sparse"))
    kv.push(0, _grad([2]))
    assert seen == [("row_sparse", "row_sparse")]  # as MXNet 1.9.1 hands them (tests/optim/subclass_programs.py)
    np.testing.assert_array_equal(_table(kv), [[1, 1], [1, 1], [0.5, 0.5], [1, 1]])


@pytest.mark.parametrize("name", ["sgd", "adam", "nag"])
def test_a_key_missing_rows_is_refused_and_kept(name: str) -> None:
    # MXNet 1.9.1 refuses too (its kernels check that every row is present)
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.create(name, learning_rate=0.1, momentum=0.9) if name != "adam"
                     else mx.optimizer.create(name))
    kv.init(0, mx.nd.sparse.row_sparse_array((np.ones((2, 2), np.float32), [0, 2]), shape=SHAPE))
    with pytest.raises(UpdaterError, match="must hold every row: it has 2 of 4"):
        kv.push(0, _grad([1]))
    np.testing.assert_array_equal(_table(kv), [[1, 1], [0, 0], [1, 1], [0, 0]])
    assert kv._store.updater.states == {}  # type: ignore[attr-defined]  # no state was made


def test_row_sparse_key_states_save_and_resume_exactly(tmp_path: Path) -> None:
    def store(value: object) -> object:
        kv = mx.kv.create("local")
        kv.set_optimizer(mx.optimizer.create("adam", learning_rate=0.1))
        kv.init(0, value)
        return kv

    first = store(mx.nd.ones(SHAPE).tostype("row_sparse"))
    first.push(0, _grad([1, 2], 0.3))  # type: ignore[attr-defined]
    first.save_optimizer_states(str(tmp_path / "adam.npz"))  # type: ignore[attr-defined]
    resumed = store(mx.nd.array(_table(first)).tostype("row_sparse"))
    resumed.load_optimizer_states(str(tmp_path / "adam.npz"))  # type: ignore[attr-defined]
    for kv in (first, resumed):
        kv.push(0, _grad([2, 3], -0.7))  # type: ignore[attr-defined]
    np.testing.assert_array_equal(_table(resumed), _table(first))


def test_an_updater_that_leaves_the_rows_malformed_is_an_error() -> None:
    # optimizers change the rows in place and skip the re-check; anything else is checked
    import kvcli
    from kvcli.errors import RowSparseError

    def unsort(key: object, grad: object, stored: RowSparse) -> None:
        stored.indices = stored.indices[::-1].copy()

    def reshape(key: object, grad: object, stored: RowSparse) -> None:
        stored.data = stored.data[:2]

    for updater, match in ((unsort, "not sorted"), (reshape, "data of shape")):
        kv = kvcli.create("local")
        kv.init(0, RowSparse(np.ones(SHAPE, np.float32), np.arange(4), SHAPE))
        kv.set_updater(updater)
        with pytest.raises(RowSparseError, match=f"the updater left key 0 malformed: .*{match}"):
            kv.push(0, RowSparse(np.ones((1, 2), np.float32), [1], SHAPE))
