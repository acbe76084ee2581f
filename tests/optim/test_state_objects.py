"""``Updater.states`` holds what MXNet 1.9.1's holds (None, NDArrays, tuples of them, the
float32 master copy first or last as each optimizer keeps it), on the weight's context, and
MXNet code that reads, changes or replaces the states gets MXNet's numbers, bit for bit:
through ``get_updater``, after ``set_states``, and as a local store's ``kv._updater``
(``tests/optim/state_object_programs.py``, recorded by
``tests/data/make_mxnet_state_objects_reference.py``)."""

from __future__ import annotations

import copy
import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from tests.optim import state_object_programs as programs

DATA = json.loads((Path(__file__).parents[1] / "data" / "mxnet_state_objects_reference.json").read_text())
CASES = DATA["cases"]


def _as_kvcli_store(expected: Any) -> Any:
    """MXNet's local store hands its updater values on ``cpu_pinned(0)``, kvcli's on ``cpu(0)``
    (docs/kvstore.md): the states a store's updater makes are on that context."""
    return json.loads(json.dumps(expected).replace('"cpu_pinned(0)"', '"cpu(0)"'))


def test_recorded_from_mxnet_191_for_every_optimizer() -> None:
    assert DATA["mxnet_version"] == "1.9.1"
    registry = mx.optimizer.Optimizer.opt_registry
    assert {n for n, cls in registry.items() if cls.__module__.startswith("kvcli")} == {c["optimizer"] for c in CASES}
    assert {c["dtype"] for c in CASES} == {"float32", "float16"}
    assert any(c["as_list"] for c in CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c['optimizer']}-{c['dtype']}-{i}" for i, c in enumerate(CASES)])
def test_states_are_what_mxnet_holds_and_changing_them_gives_mxnets_numbers(index: int) -> None:
    case = CASES[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = programs.run(mx, case)
    want = case["mxnet"]
    for part in ("updater", "modified"):
        assert got[part] == want[part], f"{case['optimizer']} {case['kwargs']}: {part}"
    assert got["set_states"] == want["set_states"], f"{case['optimizer']}: set_states"
    assert got["store"] == _as_kvcli_store(want["store"]), f"{case['optimizer']}: kv._updater"


def test_states_are_views_of_the_arrays_the_update_writes() -> None:
    """No copy per update: the NDArray in ``states`` is the one the kernel updates."""
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    weight = mx.nd.ones((3,))
    updater(0, mx.nd.ones((3,)), weight)
    momentum = updater.states[0]
    updater(0, mx.nd.ones((3,)), weight)
    assert updater.states[0] is momentum
    assert momentum.asnumpy().tolist() == [np.float32(-0.1) * np.float32(0.9) - np.float32(0.1)] * 3


def test_a_copied_updater_updates_the_states_it_shows() -> None:
    """A deepcopy (or a pickled optimizer on a dist server) keeps its states live too."""
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    updater(0, mx.nd.ones((2,)), mx.nd.ones((2,)))
    copied = copy.deepcopy(updater)
    copied(0, mx.nd.ones((2,)), mx.nd.ones((2,)))
    updater(0, mx.nd.ones((2,)), mx.nd.ones((2,)))
    assert copied.states[0].asnumpy().tolist() == updater.states[0].asnumpy().tolist() != [-0.1, -0.1]


def test_deepcopy_of_the_states_is_a_snapshot() -> None:
    """MXNet's test_gluon_trainer keeps ``deepcopy(kv._updater.states)`` and compares later."""
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.1))
    kv.init(0, mx.nd.ones((2, 2)))
    kv.push(0, mx.nd.ones((2, 2)))
    before = [s.asnumpy().tolist() for s in kv._updater.states[0]]
    snapshot = copy.deepcopy(kv._updater.states)
    kv.push(0, mx.nd.ones((2, 2)))
    assert [s.asnumpy().tolist() for s in snapshot[0]] == before
    assert [s.asnumpy().tolist() for s in kv._updater.states[0]] != before


def test_store_updater_is_mxnets_updater_and_follows_set_updater() -> None:
    kv = mx.kv.create("local")
    assert kv._updater is None
    kv.init(0, mx.nd.zeros((2,)))

    def double(key: Any, grad: Any, weight: Any) -> None:
        weight[:] += grad * 2

    kv._set_updater(double)
    assert kv._updater is double
    opt = mx.optimizer.SGD(learning_rate=0.5, momentum=0.5)
    kv.set_optimizer(opt)
    kv.push(0, mx.nd.ones((2,)))
    assert isinstance(kv._updater, mx.optimizer.Updater) and kv._updater.optimizer is opt
    assert kv._updater is kv._updater  # one updater, kept
    assert kv._updater.states[0].asnumpy().tolist() == [-0.5, -0.5]


def test_store_states_are_there_at_once_after_load_optimizer_states(tmp_path: Path) -> None:
    """MXNet's set_states fills ``states`` at once (MXNet's test_module compares them right
    after loading); they are then the ones the next push updates."""
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.create("rmsprop", learning_rate=0.01, centered=True))
    kv.init([0, 1], [mx.nd.ones((2, 3)), mx.nd.ones((4,))])
    kv.push([0, 1], [mx.nd.ones((2, 3)) * 0.5, mx.nd.ones((4,)) * 2])
    saved = {k: [s.asnumpy() for s in kv._updater.states[k]] for k in (0, 1)}
    kv.save_optimizer_states(str(tmp_path / "s"))
    kv2 = mx.kv.create("local")
    kv2.set_optimizer(mx.optimizer.create("rmsprop", learning_rate=0.01, centered=True))
    kv2.init([0, 1], [mx.nd.ones((2, 3)), mx.nd.ones((4,))])
    kv2.load_optimizer_states(str(tmp_path / "s"))
    states = kv2._updater.states
    assert sorted(states) == [0, 1]
    for k in (0, 1):
        assert [type(s).__name__ for s in states[k]] == ["NDArray"] * 3
        assert [s.asnumpy().tolist() for s in states[k]] == [a.tolist() for a in saved[k]]
    first = states[0][0]
    first[:] = 0  # MXNet code may change a loaded state before the next push: the push uses it
    kv.push(0, mx.nd.ones((2, 3)))
    kv2.push(0, mx.nd.ones((2, 3)))
    assert kv2._updater.states[0][0] is first
    assert first.asnumpy().tolist() != kv._updater.states[0][0].asnumpy().tolist()


def test_a_loaded_state_that_does_not_fit_the_weight_is_refused_and_dropped() -> None:
    source = mx.optimizer.get_updater(mx.optimizer.Adam())
    source(0, mx.nd.ones((3,)), mx.nd.ones((3,)))
    updater = mx.optimizer.get_updater(mx.optimizer.Adam())
    updater.set_states(source.get_states())
    assert updater.states[0][0].shape == (3,)
    with pytest.raises(mx.base.MXNetError, match=r"has shape \(3,\) but the weight needs \(2,\)"):
        updater(0, mx.nd.ones((2,)), mx.nd.ones((2,)))
    assert 0 not in updater.states
    updater(0, mx.nd.ones((2,)), mx.nd.ones((2,)))  # a new state for the new weight
    assert updater.states[0][0].shape == (2,)


def test_a_replaced_or_deleted_loaded_state_is_the_callers() -> None:
    source = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))
    for i in (0, 1):
        source(i, mx.nd.ones((2,)), mx.nd.ones((2,)))
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9, learning_rate=1.0))
    updater.set_states(source.get_states())
    mine = mx.nd.ones((2,)) * 10
    updater.states[0] = mine
    del updater.states[1]
    weights = [mx.nd.zeros((2,)), mx.nd.zeros((2,))]
    for i in (0, 1):
        updater(i, mx.nd.ones((2,)), weights[i])
    assert updater.states[0] is mine and mine.asnumpy().tolist() == [8.0, 8.0]  # 0.9 * 10 - 1
    assert updater.states[1].asnumpy().tolist() == [-1.0, -1.0]  # a new state: momentum from 0


def test_numpy_updater_of_the_library_keeps_numpy_states() -> None:
    """``kvcli.optim.Updater`` (the library's) works on numpy; only kvcli.mx shows NDArrays."""
    from kvcli.optim import SGD, Updater

    updater = Updater(SGD(momentum=0.9))
    weight = np.ones(3, np.float32)
    updater(0, np.ones(3, np.float32), weight)
    assert isinstance(updater.states[0], np.ndarray)


def test_store_pushes_cost_about_the_same_when_states_are_shown() -> None:
    """The kernels take the NDArrays' buffers once, not at every push: 2,000 pushes with the
    states shown as NDArrays cost at most 1.5 times as many without (measured: about 1.0)."""
    def seconds(look: bool) -> float:
        kv = mx.kv.create("local")
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
        kv.init(0, mx.nd.ones((100,)))
        grad = mx.nd.ones((100,)) * 0.01
        kv.push(0, grad)
        if look:
            assert isinstance(kv._updater.states[0], mx.nd.NDArray)
        start = time.perf_counter()
        for _ in range(2000):
            kv.push(0, grad)
        return time.perf_counter() - start

    plain = min(seconds(False) for _ in range(3))
    shown = min(seconds(True) for _ in range(3))
    assert shown < 1.5 * plain + 0.02, (plain, shown)
