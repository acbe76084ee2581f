"""kvcli's SGD and Adam against numbers recorded from real MXNet 1.9.1.

The reference file is written by ``tests/data/make_mxnet_reference.py`` (run with MXNet's
own interpreter); this test needs neither MXNet nor the formulas that built the inputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import kvcli
from kvcli.updaters import create_optimizer

REFERENCE = json.loads((Path(__file__).parent / "data" / "mxnet_optimizer_reference.json").read_text())
SCENARIOS = REFERENCE["scenarios"]
STORE_TYPES = ["local", "device"]
TOL = {"rtol": 1e-6, "atol": 1e-6}


def f32(values) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def open_store(store_type: str):
    try:
        return kvcli.create(store_type)
    except (ImportError, ModuleNotFoundError) as error:
        pytest.skip(f"store type {store_type!r} is not available yet ({type(error).__name__}: {error})")


def init_store(kv, scenario: dict, weights: dict[str, list] | None = None) -> None:
    weights = weights or scenario["init"]
    for key in scenario["keys"]:
        kv.init(key, f32(weights[str(key)]))
    kv.set_optimizer(create_optimizer(scenario["optimizer"], **scenario["kwargs"]))


def push_step(kv, step: dict) -> None:
    grads = [f32(g) for g in step["grads"]]
    kv.push(step["key"], grads if len(grads) > 1 else grads[0])


def check_weights(kv, scenario: dict, index: int, name: str) -> None:
    for key in scenario["keys"]:
        got = kv.pull(key)
        want = f32(scenario["expected"][index][str(key)])
        assert got.dtype == np.float32
        np.testing.assert_allclose(
            got, want, **TOL, err_msg=f"{name}: key {key} after step {index + 1} differs from MXNet 1.9.1"
        )


@pytest.fixture(params=STORE_TYPES)
def store_type(request) -> str:
    return request.param


def test_reference_is_mxnet_1_9_1() -> None:
    assert REFERENCE["mxnet_version"] == "1.9.1"
    assert set(SCENARIOS) == {
        "sgd_plain",
        "sgd_momentum_wd",
        "sgd_rescale_clip_momentum",
        "adam_default_lr",
        "adam_all_params",
        "sgd_multi_device_momentum",
        "adam_two_keys_interleaved",
    }


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_optimizer_matches_mxnet(store_type: str, name: str) -> None:
    scenario = SCENARIOS[name]
    with open_store(store_type) as kv:
        init_store(kv, scenario)
        for index, step in enumerate(scenario["steps"]):
            push_step(kv, step)
            check_weights(kv, scenario, index, name)

        updater = kv.updater
        for key in scenario["keys"]:
            want_state = scenario["state_after"][str(key)]
            got_state = updater.states.get(key, {})
            assert sorted(got_state) == sorted(want_state), f"{name}: state names of key {key}"
            for state_name, values in want_state.items():
                np.testing.assert_allclose(
                    got_state[state_name],
                    f32(values),
                    **TOL,
                    err_msg=f"{name}: optimizer state {state_name!r} of key {key} differs from MXNet 1.9.1",
                )
            assert updater.counts[key] == scenario["update_counts"][str(key)]


@pytest.mark.parametrize("dump_optimizer", [False, True], ids=["states-only", "dump-optimizer"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_saved_states_resume_like_uninterrupted_mxnet(
    store_type: str, name: str, dump_optimizer: bool, tmp_path: Path
) -> None:
    """save_optimizer_states -> fresh store -> load_optimizer_states -> remaining steps.

    kvcli keeps per-key step counts in the file even without ``dump_optimizer``, so Adam
    resumes exactly. (MXNet 1.9.1 pickles only the state arrays in that case and restarts
    Adam's bias correction at t=1; the reference records that under ``mxnet_resume``.)
    """
    scenario = SCENARIOS[name]
    steps = scenario["steps"]
    split = scenario["mxnet_resume"]["split_after_step"]
    fname = tmp_path / "states.npz"
    with open_store(store_type) as kv:
        init_store(kv, scenario)
        for step in steps[:split]:
            push_step(kv, step)
        kv.save_optimizer_states(fname, dump_optimizer=dump_optimizer)
        weights = {str(k): kv.pull(k) for k in scenario["keys"]}

    with open_store(store_type) as kv:
        init_store(kv, scenario, weights)
        kv.load_optimizer_states(fname)
        for index in range(split, len(steps)):
            push_step(kv, steps[index])
            check_weights(kv, scenario, index, f"{name} (resumed after step {split})")
