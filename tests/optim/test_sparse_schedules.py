"""Row-sparse (lazy) updates, learning-rate schedules and SGLD's noise against MXNet 1.9.1."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kvcli.errors import UpdaterError
import kvcli.mx as mx
from kvcli.mx import lr_scheduler
from kvcli.mx import optimizer as mxopt
from kvcli.optim.lr_scheduler import parse_schedule
from tests.optim.conftest import REFERENCE, RowSparse, flatten_state

TOL = {"rtol": 1e-6, "atol": 1e-7}
SPARSE = {f"{s['optimizer']}-{i}": s for i, s in enumerate(REFERENCE["sparse"])}
SCHEDULES = {f"{s['type']}-{i}": s for i, s in enumerate(REFERENCE["schedulers"])}
KINDS = {
    "factor": lr_scheduler.FactorScheduler, "multifactor": lr_scheduler.MultiFactorScheduler,
    "poly": lr_scheduler.PolyScheduler, "cosine": lr_scheduler.CosineScheduler,
}


@pytest.mark.parametrize("name", sorted(SPARSE))
def test_row_sparse_gradients_match_mxnet(name: str) -> None:
    scenario = SPARSE[name]
    updater = mxopt.get_updater(mxopt.create(scenario["optimizer"], **scenario["kwargs"]))
    weight = np.array(scenario["init"], np.float32)
    for index, step in enumerate(scenario["steps"]):
        grad = RowSparse(np.array(step["indices"], np.int64), np.array(step["data"], np.float32),
                         tuple(scenario["shape"]))
        updater(0, grad, weight)
        np.testing.assert_allclose(weight, np.array(scenario["expected"][index], np.float32), **TOL,
                                   err_msg=f"{name} ({scenario['kwargs']}) after step {index + 1}")
    got_leaves = flatten_state(updater.states[0])
    assert len(got_leaves) == len(scenario["final_state"]), f"{name}: state layout"
    for got, want in zip(got_leaves, scenario["final_state"]):
        if want is None:
            assert got is None, f"{name}: state should hold None"
        else:
            np.testing.assert_allclose(got, np.array(want, np.float32), **TOL, err_msg=f"{name}: final state")


def test_lazy_update_leaves_unlisted_rows_and_their_momentum() -> None:
    opt = mxopt.SGD(learning_rate=0.1, momentum=0.9, wd=0.1)
    updater = mxopt.get_updater(opt)
    weight = np.ones((4, 2), np.float32)
    updater(0, RowSparse(np.array([1, 3]), np.ones((2, 2), np.float32), (4, 2)), weight)
    np.testing.assert_array_equal(weight[[0, 2]], 1.0)
    np.testing.assert_array_equal(updater.states[0][[0, 2]], 0.0)
    assert (weight[[1, 3]] != 1.0).all()


def test_sparse_adagrad_refuses_weight_decay_like_mxnet() -> None:
    updater = mxopt.get_updater(mxopt.create("adagrad", wd=0.01))
    weight = np.ones((3, 2), np.float32)
    with pytest.raises(UpdaterError, match="use wd=0"):
        updater(0, RowSparse(np.array([1]), np.ones((1, 2), np.float32), (3, 2)), weight)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_match_mxnet_step_by_step(name: str) -> None:
    recorded = SCHEDULES[name]
    schedule = KINDS[recorded["type"]](**recorded["kwargs"])
    got = [schedule(t) for t in recorded["num_update"]]
    np.testing.assert_allclose(got, recorded["lr"], rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_spec_strings_round_trip(name: str) -> None:
    recorded = SCHEDULES[name]
    schedule = KINDS[recorded["type"]](**recorded["kwargs"])
    again = parse_schedule(schedule.spec)
    assert again.spec == schedule.spec
    np.testing.assert_allclose([again(t) for t in recorded["num_update"]], recorded["lr"], rtol=1e-12)


@pytest.mark.parametrize(
    "text, message",
    [
        ("linear:step=3", "unknown schedule 'linear'"),
        ("factor:factor=0.5", "needs step=N"),
        ("factor:step=3:speed=2", "has no argument 'speed'"),
        ("factor:step=three", "not a int"),
        ("cosine:max_update=10:warmup_mode=cubic", "linear or constant"),
        ("factor:step=0", "greater or equal than 1"),
        ("factor:step=2:factor=2", "no more than 1"),
    ],
)
def test_bad_schedules(text: str, message: str) -> None:
    with pytest.raises(UpdaterError, match=message):
        parse_schedule(text)


def test_schedule_position_survives_state_dict() -> None:
    first = lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    values = [first(t) for t in range(8)]
    second = lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    second.load_state_dict(first.state_dict())
    assert second(8) == first(8) and values[-1] == 0.125


@pytest.mark.parametrize("label", sorted(REFERENCE["sgld"]))
def test_sgld_deterministic_part_and_noise_match_mxnet(label: str) -> None:
    """MXNet's SGLD output minus kvcli's deterministic step is N(0, sqrt(lr)) noise; kvcli's
    own output has the same statistics."""
    recorded = REFERENCE["sgld"][label]
    kwargs, lr = recorded["kwargs"], recorded["kwargs"]["learning_rate"]
    init = np.array(recorded["init_rows"], np.float32)
    grad = np.array(recorded["grad_rows"], np.float32)
    # kvcli with the noise switched off: lr -> the deterministic step only.
    opt = mxopt.create("sgld", **kwargs)
    g = grad * np.float32(opt.rescale_grad)
    if opt.clip_gradient is not None:
        g = np.clip(g, -opt.clip_gradient, opt.clip_gradient)
    state = np.random.get_state()
    np.random.seed(0)
    weight = init.copy()
    mxopt.get_updater(opt)(0, grad, weight)
    np.random.set_state(state)
    deterministic = init - np.float32(lr / 2) * (g + np.float32(opt.wd) * init)
    mine = weight - deterministic
    theirs = np.array(recorded["after_rows"], np.float32) - deterministic
    for noise, who in ((mine, "kvcli"), (theirs, "MXNet")):
        n = noise.size
        assert abs(noise.mean()) < 4 * math.sqrt(lr) / math.sqrt(n), who
        assert abs(noise.std() - math.sqrt(lr)) < 0.2 * math.sqrt(lr), who
    # The whole recorded weight: its first two moments match N(deterministic, lr) too.
    n = int(np.prod(recorded["shape"]))
    mean = recorded["after_sum"] / n
    assert math.isfinite(mean) and recorded["after_sq_sum"] / n > lr


def test_sgld_noise_is_mx_random_so_mx_random_seed_repeats_it() -> None:
    """As in MXNet (whose test_sgld seeds mx.random before each of two optimizers), the noise
    is mx.random.normal(0, sqrt(lr)) drawn for the weight: numpy's global seed plays no part."""
    results = []
    for numpy_seed in (1, 2):
        np.random.seed(numpy_seed)
        opt = mxopt.create("sgld", learning_rate=0.04, wd=0.1)
        weight, grad = mx.nd.ones((50, 4)), mx.nd.full((50, 4), 0.5)
        mx.random.seed(7)
        opt.update(0, weight, grad, None)
        results.append(weight.asnumpy())
    mx.random.seed(7)
    noise = mx.random.normal(0, 0.2, shape=(50, 4)).asnumpy()
    expected = np.float32(1) - np.float32(0.02) * (np.float32(0.5) + np.float32(0.1)) + noise
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_allclose(results[0], expected, rtol=1e-6, atol=1e-7)
