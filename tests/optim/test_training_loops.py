"""MXNet 1.9.1's training loops (model.py / Module and gluon.Trainer KVStore call patterns,
tools/mxnet_training_loops.py) through kvcli.mx give MXNet's final weights, recorded by
tests/data/make_mxnet_training_loops_reference.py."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import kvcli.mx as mx

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((ROOT / "tests" / "data" / "mxnet_training_loops_reference.json").read_text())


def _load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mxnet_training_loops", ROOT / "tools" / "mxnet_training_loops.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


LOOPS = _load_tool()
#: Every local run; the device store (worker processes, slower) on a few that cover its
#: row-sparse path, per-device updaters and the plain update on the store.
SCENARIOS = [s for s in LOOPS.scenario_ids() if "/local/" in s] + [
    "module/device/nag", "trainer_updaters/device/adam", "trainer_row_sparse/device/sgd",
    "module_row_sparse/device/adam", "trainer_sparse_grad/device/adam",
]


def test_reference_is_mxnet_191_with_every_run() -> None:
    assert DATA["mxnet_version"] == "1.9.1" and DATA["steps"] == LOOPS.STEPS == 20
    assert sorted(DATA["runs"]) == sorted(LOOPS.scenario_ids()) and len(DATA["runs"]) == 48
    assert all("weights" in run for run in DATA["runs"].values())


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_training_loop_gives_mxnet_final_weights(scenario: str) -> None:
    got = LOOPS.run_scenario(mx, scenario)
    assert "error" not in got, got.get("error")
    want = DATA["runs"][scenario]["weights"]
    assert sorted(got["weights"]) == sorted(want)
    for name, values in want.items():
        assert len(got["weights"][name]) == len(values)
        for mine, theirs in zip(got["weights"][name], values):
            np.testing.assert_allclose(mine, theirs, rtol=LOOPS.RTOL, atol=LOOPS.ATOL, err_msg=f"{scenario} {name}")


def test_per_device_updaters_keep_their_own_step_counts() -> None:
    # MXNet: each Updater call switches the optimizer to the weight's device's update counts,
    # so Adam's bias correction on cpu(1) starts at t=1 too: both weights end at 0.7.
    got = LOOPS.per_device_updaters(mx)
    np.testing.assert_allclose(got, DATA["per_device_updaters"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, 0.7, atol=1e-5)


@pytest.mark.parametrize("case", ["local/sgd", "local/adam", "local/nag", "local/adagrad", "device/adam"])
def test_optimizer_on_a_row_sparse_key_matches_mxnet(case: str) -> None:
    # MXNet's Module and Gluon train embeddings this way: set_optimizer, init a row-sparse
    # table, push row-sparse gradients. kvcli crashed ('RowSparse' object is not subscriptable).
    kvtype, opt_name = case.split("/")
    got = LOOPS.row_sparse_key(mx, kvtype, opt_name)
    assert "error" not in got, got.get("error")
    table = np.asarray(got["weights"]["table"][0])
    want = np.asarray(DATA["row_sparse_key"][case]["weights"]["table"][0])
    np.testing.assert_allclose(table, want, rtol=1e-6, atol=1e-7)
    initial = np.arange(1, 13, dtype=np.float32).reshape(6, 2) / 4
    never_pushed = [2, 4, 5]
    if opt_name == "nag":  # no lazy NAG in MXNet: weight decay moves every row
        assert not np.allclose(table[never_pushed], initial[never_pushed])
    else:  # lazy updates: the rows never pushed keep their values
        np.testing.assert_array_equal(table[never_pushed], initial[never_pushed])


def test_per_device_step_counts_survive_get_states_and_set_states() -> None:
    # Gluon's Trainer.save_states / load_states without update on the store: updater 0's
    # states and the optimizer go to a file; every device's updater loads them. Each device
    # must go on from its own step count: 2 + 1 steps end where 3 steps do (0.7, 0.7).
    def run(steps: int, updaters: list, weights: list) -> None:  # type: ignore[type-arg]
        for _ in range(steps):
            for updater, weight in zip(updaters, weights):
                updater(0, mx.nd.ones((2,), ctx=weight.context), weight)

    opt = mx.optimizer.create("adam", learning_rate=0.1)
    updaters = [mx.optimizer.get_updater(opt) for _ in range(2)]
    weights = [mx.nd.ones((2,), ctx=mx.cpu(k)) for k in range(2)]
    run(2, updaters, weights)
    saved = updaters[0].get_states(dump_optimizer=True)
    resumed = [mx.optimizer.get_updater(mx.optimizer.create("adam", learning_rate=0.1)) for _ in range(2)]
    for updater in resumed:
        updater.set_states(saved)
        updater.optimizer = resumed[0].optimizer
    run(1, resumed, weights)
    np.testing.assert_allclose([w.asnumpy() for w in weights], DATA["per_device_updaters"], rtol=1e-6, atol=1e-7)
