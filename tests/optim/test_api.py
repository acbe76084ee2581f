"""MXNet 1.9.1's Optimizer API: the base class, register / create, Updater, user subclasses
in kv.set_optimizer on local and device stores, multipliers and counts."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import kvcli
import kvcli.updaters
import kvcli.mx as mx
from kvcli.errors import OptimizerStateError, UpdaterError
from kvcli.optim.registry import registered


@mx.optimizer.register
class HalfStep(mx.optimizer.Optimizer):
    """A user optimizer written as for MXNet: NDArray state, ``weight[:] += ...``."""

    def __init__(self, decay=0.5, **kwargs):
        super().__init__(**kwargs)
        self.decay = decay

    def create_state(self, index, weight):
        return mx.nd.zeros(weight.shape, weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr = self._get_lr(index)
        state[:] = self.decay * state + grad
        weight[:] -= lr * state


def expected_half_step(w0: np.ndarray, grads: list[np.ndarray], lr: float, decay: float) -> np.ndarray:
    w, s = w0.astype(np.float32).copy(), np.zeros_like(w0, np.float32)
    for g in grads:
        s = np.float32(decay) * s + g
        w = w - np.float32(lr) * s
    return w


def test_base_class_constructor_and_learning_rate() -> None:
    opt = mx.optimizer.Optimizer(learning_rate=0.1)
    assert opt.learning_rate == 0.1 and opt.lr == 0.1 and opt.wd == 0.0 and opt.rescale_grad == 1.0
    assert mx.optimizer.Optimizer().learning_rate == 0.01
    opt.set_learning_rate(0.2)
    assert opt.learning_rate == 0.2
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduled = mx.optimizer.SGD(learning_rate=0.4, lr_scheduler=sched)
    assert sched.base_lr == 0.4  # MXNet: the optimizer's rate wins
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer has already been defined"):
        scheduled.set_learning_rate(0.1)
    with pytest.raises(UpdaterError, match="does not implement update"):
        opt.update(0, np.ones(1), np.ones(1), None)
    with pytest.raises(UpdaterError, match="must not be negative"):
        mx.optimizer.SGD(learning_rate=-0.1)


def test_update_count_num_update_and_begin_num_update() -> None:
    opt = mx.optimizer.SGD(begin_num_update=3)
    opt._update_count(0)
    opt._update_count([0, 1])
    assert opt._index_update_count == {0: 5, 1: 4} and opt.num_update == 5


def test_lr_and_wd_multipliers() -> None:
    opt = mx.optimizer.SGD(learning_rate=0.1, wd=0.2, param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "bn_gamma"})
    assert opt._get_wd(0) == pytest.approx(0.2) and opt._get_wd(1) == 0.0 and opt._get_wd(2) == pytest.approx(0.2)
    opt.set_lr_mult({0: 3.0, "fc_bias": 0.5})
    assert opt._get_lr(0) == pytest.approx(0.3) and opt._get_lr(1) == pytest.approx(0.05) and opt._get_lr(2) == 0.1
    opt.set_wd_mult({2: 0.0})
    assert opt._get_wd(2) == 0.0
    lars = mx.optimizer.LARS(wd=0.2, param_idx2name={0: "fc_weight", 1: "bn_gamma"})
    assert lars._get_wd(1) == 0.0  # LARS decays only *_weight


def test_register_and_create() -> None:
    assert registered()["halfstep"] is HalfStep
    assert mx.optimizer.Optimizer.opt_registry["halfstep"] is HalfStep
    opt = mx.optimizer.create("HalfStep", learning_rate=0.3, decay=0.25)
    assert isinstance(opt, HalfStep) and opt.decay == 0.25
    assert isinstance(mx.optimizer.Optimizer.create_optimizer("nag", momentum=0.9), mx.optimizer.NAG)
    with pytest.raises(UpdaterError, match="unknown optimizer 'nope'"):
        mx.optimizer.create("nope")
    with pytest.raises(UpdaterError, match="sgd has no parameter 'speed'"):
        mx.optimizer.create("sgd", speed=1)


@pytest.mark.parametrize("store_type", ["local", "device"])
def test_user_subclass_in_set_optimizer(store_type: str) -> None:
    w0 = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    grads = [np.full((2, 3), v, np.float32) for v in (1.0, -0.5, 2.0)]
    with kvcli.create(store_type) as kv:
        kv.init("w", w0)
        kv.set_optimizer(HalfStep(learning_rate=0.1, decay=0.5))
        for g in grads:
            kv.push("w", g)
        np.testing.assert_allclose(kv.pull("w"), expected_half_step(w0, grads, 0.1, 0.5), rtol=1e-6)
        assert kv.updater.counts == {"w": 3}
        assert kv.updater_spec == "halfstep:lr=0.1"
        again = kvcli.updaters.parse_updater(kv.updater_spec + ",decay=0.25")
        assert isinstance(again, HalfStep) and (again.lr, again.decay) == (0.1, 0.25)


def test_user_subclass_multi_device_push_on_device_store() -> None:
    with kvcli.create("device") as kv:
        kv.init(0, np.zeros(4, np.float32))
        kv.set_optimizer(HalfStep(learning_rate=1.0))
        kv.push(0, [np.ones(4, np.float32), np.ones(4, np.float32)])  # summed, then updated once
        np.testing.assert_allclose(kv.pull(0), -2.0)


def test_optimizers_pickle_for_dist_servers() -> None:
    """dist_sync ships the optimizer to Ray servers with cloudpickle (and copy.copy)."""
    cloudpickle = pytest.importorskip("ray.cloudpickle", reason="Ray is not installed: pip install 'kvcli[dist]' to run it")
    for opt in (HalfStep(learning_rate=0.1), mx.optimizer.create("lamb", wd=0.1),
                mx.optimizer.SGD(momentum=0.9, lr_scheduler=mx.lr_scheduler.CosineScheduler(10, base_lr=0.1))):
        w = np.ones(3, np.float32)
        opt(0, np.ones(3, np.float32), w)
        clone = cloudpickle.loads(cloudpickle.dumps(opt))
        w2 = w.copy()
        opt(0, np.ones(3, np.float32), w)
        clone(0, np.ones(3, np.float32), w2)
        np.testing.assert_array_equal(w, w2)
        assert pickle.loads(pickle.dumps(mx.optimizer.create("adam"))).spec == "adam"


def test_shallow_copy_with_loaded_share_keeps_the_original() -> None:
    import copy

    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    w = np.ones(3, np.float32)
    opt(0, np.ones(3, np.float32), w)
    state = opt.state_dict()
    shipped = copy.copy(opt)
    shipped.load_state_dict({"states": {}, "counts": {}})
    assert 0 in opt.states and opt.counts == {0: 1}
    assert shipped.states == {} and shipped.counts == {}
    np.testing.assert_array_equal(opt.states[0]["momentum"], state["states"][0]["momentum"])


def test_updater_get_and_set_states_round_trip() -> None:
    opt = mx.optimizer.Adam(learning_rate=0.01)
    updater = mx.optimizer.get_updater(opt)
    w = np.ones((2, 2), np.float32)
    for _ in range(3):
        updater(0, np.full((2, 2), 0.5, np.float32), w)
    blob = updater.get_states(dump_optimizer=True)
    assert b"pickle" not in blob[:0] and isinstance(blob, bytes)
    fresh = mx.optimizer.get_updater(mx.optimizer.SGD())
    fresh.set_states(blob)  # the bytes name adam: the updater's optimizer becomes one
    assert isinstance(fresh.optimizer, mx.optimizer.Adam) and fresh.optimizer.lr == 0.01
    w2 = w.copy()
    updater(0, np.full((2, 2), 0.5, np.float32), w)
    fresh(0, np.full((2, 2), 0.5, np.float32), w2)
    np.testing.assert_array_equal(w, w2)
    assert fresh.sync_state_context((1, [2]), mx.cpu(0)) == (1, [2])
    plain = mx.optimizer.get_updater(mx.optimizer.SGD())
    with pytest.raises(OptimizerStateError, match="hold adam state but the optimizer is sgd"):
        plain.set_states(updater.get_states())


def test_state_from_other_settings_is_refused_and_nothing_changes() -> None:
    sgd = mx.optimizer.SGD(momentum=0.9)
    w = np.ones(2, np.float32)
    sgd(0, np.ones(2, np.float32), w)
    plain = mx.optimizer.SGD()
    plain(1, np.ones(2, np.float32), w)
    before = plain.state_dict()
    with pytest.raises(OptimizerStateError, match=r"holds \['momentum'\] but sgd keeps no arrays"):
        plain.load_state_dict(sgd.state_dict())
    assert plain.state_dict()["counts"] == before["counts"]


def test_multi_precision_keeps_a_float32_master_copy() -> None:
    opt = mx.optimizer.create("adam", learning_rate=0.01, multi_precision=True)
    w = np.ones(3, np.float16)
    opt(0, np.full(3, 1e-3, np.float16), w)
    assert set(opt.states[0]) == {"weight32", "mean", "var"}
    assert opt.states[0]["weight32"].dtype == np.float32 and w.dtype == np.float16
    np.testing.assert_allclose(w, opt.states[0]["weight32"].astype(np.float16))


class PySGD(mx.optimizer.Optimizer):
    """SGD with momentum written the way MXNet's own tests write a reference optimizer."""

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return mx.nd.zeros(weight.shape, weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        state[:] = self.momentum * state - lr * wd * weight - lr * (self.rescale_grad * grad)
        weight[:] += state


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_builtins_take_ndarrays_like_mxnets_compare_optimizer(dtype: str) -> None:
    """MXNet's test_optimizer.py drives two optimizers with NDArrays through
    create_state_multi_precision / update_multi_precision and compares weights and states."""
    kwargs = {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "rescale_grad": 0.5}
    ours, reference = mx.optimizer.SGD(multi_precision=dtype == "float16", **kwargs), PySGD(**kwargs)
    w1 = mx.nd.array(np.linspace(-1, 1, 6).reshape(2, 3), dtype=dtype)
    w2 = mx.nd.array(w1.asnumpy().astype(np.float32))
    s1 = ours.create_state_multi_precision(0, w1)
    s2 = reference.create_state_multi_precision(0, w2)
    for step in range(4):
        g = np.sin(np.arange(6) + step).reshape(2, 3).astype(dtype)
        ours.update_multi_precision(0, w1, mx.nd.array(g, dtype=dtype), s1)
        reference.update_multi_precision(0, w2, mx.nd.array(g.astype(np.float32)), s2)
    momentum = s1[0] if dtype == "float16" else s1
    assert isinstance(momentum, mx.nd.NDArray)
    np.testing.assert_allclose(momentum.asnumpy(), s2.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w1.asnumpy().astype(np.float32), w2.asnumpy(), rtol=1e-3 if dtype == "float16" else 1e-6)
