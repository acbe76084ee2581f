"""Write ``mxnet_optimizers_reference.json``: every optimizer MXNet 1.9.1 registers, its
multi-precision and lazy (row-sparse) updates, and the learning-rate schedules, as numbers
recorded from real MXNet 1.9.1.

Run with MXNet's own interpreter (kvcli never imports MXNet)::

    $MXNET_PYTHON tests/data/make_mxnet_optimizer_reference.py

Dense scenarios drive MXNet as a KVStore user does::

    kv = mx.kv.create('local'); kv.init(key, w0); kv.set_optimizer(mx.optimizer.create(name, **kw))
    for each step: kv.push(key, grad); kv.pull(key, out=w)

Row-sparse scenarios call ``mx.optimizer.get_updater(opt)(key, grad_rsp, weight)`` with a dense
weight and a ``row_sparse`` gradient (the store's dense value meeting a sparse push).
Inputs are deterministic (sin/cos formulas, no RNG) and written into the JSON.
``final_state`` is the updater's state of each key, flattened in MXNet's tuple order
(``None`` entries kept as ``null``), so kvcli's state layout is checked too.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).with_name("mxnet_optimizers_reference.json")
STEPS = 6


def weight0(shape, phase=0.0):
    n = int(np.prod(shape))
    base = np.linspace(-1.0, 1.0, n) + 0.25 * np.cos(np.arange(n) * 0.9 + phase)
    return base.reshape(shape).astype(np.float32)


def grad(shape, t, amplitude=1.0, phase=0.0):
    idx = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return (amplitude * np.sin(0.7 * idx + 1.3 * t + phase) + 0.05).astype(np.float32)


def tolist(array):
    return np.asarray(array).astype(np.float64).tolist()


def flatten_state(state):
    if state is None:
        return [None]
    if isinstance(state, (tuple, list)):
        out = []
        for item in state:
            out.extend(flatten_state(item))
        return out
    return [tolist(state.asnumpy())]


FS = {"step": 3, "factor": 0.5}
# name -> list of (label, kwargs); "lr_scheduler" is built from a dict (type + args).
DENSE = {
    "sgd": [
        ("plain", {"learning_rate": 0.1}),
        ("momentum_wd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
        ("momentum_rescale_clip", {"learning_rate": 0.1, "momentum": 0.9, "rescale_grad": 0.5, "clip_gradient": 0.3}),
        ("wd_clip", {"learning_rate": 0.05, "wd": 0.1, "clip_gradient": 0.4}),
        ("schedule_factor", {"learning_rate": 0.1, "momentum": 0.5, "lr_scheduler": {"type": "factor", **FS}}),
        ("begin_num_update_multifactor", {"learning_rate": 0.2, "begin_num_update": 2,
                                          "lr_scheduler": {"type": "multifactor", "step": [3, 5], "factor": 0.1}}),
    ],
    "nag": [
        ("plain", {"learning_rate": 0.1}),
        ("momentum_wd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
        ("momentum_rescale_clip", {"learning_rate": 0.1, "momentum": 0.8, "rescale_grad": 0.5, "clip_gradient": 0.3}),
    ],
    "signum": [
        ("default", {"learning_rate": 0.01}),
        ("signsgd_wd", {"learning_rate": 0.01, "momentum": 0.0, "wd": 0.05, "rescale_grad": 0.5}),
        ("all", {"learning_rate": 0.02, "momentum": 0.8, "wd": 0.01, "wd_lh": 0.1, "rescale_grad": 0.5,
                 "clip_gradient": 0.3}),
    ],
    "ftml": [
        ("default", {"learning_rate": 0.05}),
        ("betas_wd", {"learning_rate": 0.05, "beta1": 0.7, "beta2": 0.99, "epsilon": 1e-6, "wd": 0.01}),
        ("rescale_clip", {"learning_rate": 0.05, "rescale_grad": 0.5, "clip_gradient": 0.3}),
    ],
    "lars": [
        ("momentum", {"learning_rate": 0.1, "momentum": 0.9}),
        ("eta_eps_wd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "eta": 0.01, "eps": 1e-6}),
        ("no_momentum_rescale_clip", {"learning_rate": 0.1, "rescale_grad": 0.5, "clip_gradient": 0.3, "eta": 0.1}),
        ("schedule_correction", {"learning_rate": 0.1, "momentum": 0.9, "eta": 0.1,
                                 "lr_scheduler": {"type": "factor", "step": 2, "factor": 0.5}}),
        ("bias_name", {"learning_rate": 0.1, "momentum": 0.9, "param_idx2name": {0: "fc_bias"}}),
    ],
    "lamb": [
        ("default", {"learning_rate": 0.01}),
        ("betas_wd", {"learning_rate": 0.01, "wd": 0.01, "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-5}),
        ("bounds_rescale_clip", {"learning_rate": 0.01, "bias_correction": False, "lower_bound": 0.1,
                                 "upper_bound": 0.5, "rescale_grad": 0.5, "clip_gradient": 0.3}),
    ],
    "adam": [
        ("default", {"learning_rate": 0.01}),
        ("all", {"learning_rate": 0.01, "wd": 0.01, "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-6,
                 "rescale_grad": 0.25, "clip_gradient": 0.5}),
        ("wd", {"learning_rate": 0.05, "wd": 0.1}),
        ("schedule_cosine", {"learning_rate": 0.05,
                             "lr_scheduler": {"type": "cosine", "max_update": 5, "final_lr": 0.01,
                                              "warmup_steps": 2, "warmup_begin_lr": 0.001}}),
    ],
    "adagrad": [
        ("default", {"learning_rate": 0.1}),
        ("eps_wd", {"learning_rate": 0.1, "eps": 1e-5, "wd": 0.01}),
        ("rescale_clip", {"learning_rate": 0.1, "rescale_grad": 0.5, "clip_gradient": 0.3}),
    ],
    "rmsprop": [
        ("default", {"learning_rate": 0.01}),
        ("gamma_wd_clipweights", {"learning_rate": 0.01, "gamma1": 0.8, "wd": 0.01, "epsilon": 1e-6,
                                  "clip_weights": 0.9}),
        ("centered", {"learning_rate": 0.01, "centered": True}),
        ("centered_all", {"learning_rate": 0.01, "centered": True, "gamma1": 0.8, "gamma2": 0.7,
                          "rescale_grad": 0.5, "clip_gradient": 0.3, "clip_weights": 1.0, "wd": 0.01}),
    ],
    "adadelta": [
        ("default", {}),
        ("rho_eps_wd", {"rho": 0.8, "epsilon": 1e-4, "wd": 0.01}),
        ("rescale_clip", {"rescale_grad": 0.5, "clip_gradient": 0.3}),
    ],
    "ftrl": [
        ("default", {}),
        ("all", {"lamda1": 0.05, "learning_rate": 0.2, "beta": 2.0, "wd": 0.01}),
        ("rescale_clip", {"rescale_grad": 0.5, "clip_gradient": 0.3}),
    ],
    "adamax": [
        ("default", {}),
        ("betas_wd", {"learning_rate": 0.01, "beta1": 0.8, "beta2": 0.99, "wd": 0.01}),
        ("rescale_clip", {"rescale_grad": 0.5, "clip_gradient": 0.3}),
    ],
    "nadam": [
        ("default", {}),
        ("all", {"learning_rate": 0.01, "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-6, "schedule_decay": 0.01,
                 "wd": 0.01}),
        ("rescale_clip", {"rescale_grad": 0.5, "clip_gradient": 0.3}),
    ],
    "dcasgd": [
        ("plain", {"learning_rate": 0.1}),
        # MXNet 1.9.1's DCASGD with momentum > 0 fails on every multi-element weight
        # (``if mom:`` on an NDArray raises, and the KVStore leaves the weight unchanged),
        # so only momentum 0 is recorded.
        ("lamda_wd", {"learning_rate": 0.1, "lamda": 0.1, "wd": 0.01}),
        ("rescale_clip", {"learning_rate": 0.1, "rescale_grad": 0.5, "clip_gradient": 0.3}),
    ],
    # MXNet's own Test optimizer (its KVStore tests use it): w += rescale_grad * g; lr and wd unused
    "test": [
        ("plain", {}),
        ("rescale", {"rescale_grad": 2.0}),
        ("lr_wd_clip_ignored", {"learning_rate": 0.5, "wd": 0.1, "clip_gradient": 0.3, "rescale_grad": 0.25}),
    ],
    "lbsgd": [
        ("momentum", {"learning_rate": 0.1, "momentum": 0.9}),
        ("power2_batch2", {"learning_rate": 0.1, "warmup_strategy": "power2", "batch_scale": 2,
                           "warmup_epochs": 1, "updates_per_epoch": 4, "wd": 0.01, "momentum": 0.5}),
        ("lars", {"learning_rate": 0.1, "warmup_strategy": "lars", "momentum": 0.5}),
        ("sqrt_batch3", {"learning_rate": 0.1, "warmup_strategy": "sqrt", "batch_scale": 3, "warmup_epochs": 2,
                         "updates_per_epoch": 2, "rescale_grad": 0.5, "clip_gradient": 0.3}),
    ],
}
# multi_precision: float16 weights and gradients, float32 master copy.
MULTI_PRECISION = {
    "sgd": [{"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}, {"learning_rate": 0.1}],
    "nag": [{"learning_rate": 0.1, "momentum": 0.9}],
    "lars": [{"learning_rate": 0.1, "momentum": 0.9}],
    "lbsgd": [{"learning_rate": 0.1, "momentum": 0.9}],
    "lamb": [{"learning_rate": 0.01, "wd": 0.01}],
    "adam": [{"learning_rate": 0.01, "wd": 0.01}],
    "signum": [{"learning_rate": 0.01}],
    "ftml": [{"learning_rate": 0.05}],
    "adagrad": [{"learning_rate": 0.1}],
    "rmsprop": [{"learning_rate": 0.01, "centered": True}],
    "adadelta": [{}],
    "ftrl": [{}],
    "adamax": [{}],
    "nadam": [{}],
    "dcasgd": [{"learning_rate": 0.1}],
    "test": [{"rescale_grad": 2.0}],
}
# Row-sparse gradients on a dense (5, 3) weight; rows per step.
SPARSE_ROWS = [[0, 2], [1, 2, 4], [3], [0, 4], [2], [0, 1, 2, 3, 4]]
SPARSE = {
    "sgd": [{"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "lazy_update": True},
            {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "lazy_update": False},
            {"learning_rate": 0.1, "wd": 0.1, "lazy_update": True},
            {"learning_rate": 0.1, "wd": 0.1, "lazy_update": False, "clip_gradient": 0.3}],
    "adam": [{"learning_rate": 0.01, "wd": 0.01, "lazy_update": True},
             {"learning_rate": 0.01, "wd": 0.01, "lazy_update": False, "clip_gradient": 0.3}],
    "ftrl": [{"lamda1": 0.05, "wd": 0.01, "clip_gradient": 0.3}],
    "adagrad": [{"learning_rate": 0.1, "clip_gradient": 0.3}],
    "lars": [{"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "eta": 0.1, "lazy_update": True}],
    "rmsprop": [{"learning_rate": 0.01}],
    "nag": [{"learning_rate": 0.1, "momentum": 0.9}],
    "test": [{"rescale_grad": 2.0}],
}
SCHEDULERS = [
    ("factor", {"step": 3, "factor": 0.5, "base_lr": 1.0}),
    ("factor", {"step": 2, "factor": 0.5, "stop_factor_lr": 0.1, "base_lr": 1.0, "warmup_steps": 4,
                "warmup_begin_lr": 0.1, "warmup_mode": "linear"}),
    ("multifactor", {"step": [5, 10, 15], "factor": 0.3, "base_lr": 0.5, "warmup_steps": 3,
                     "warmup_begin_lr": 0.05, "warmup_mode": "constant"}),
    ("poly", {"max_update": 20, "base_lr": 1.0, "pwr": 2, "final_lr": 0.01, "warmup_steps": 5,
              "warmup_begin_lr": 0.1}),
    ("poly", {"max_update": 12, "base_lr": 0.3, "pwr": 1}),
    ("cosine", {"max_update": 20, "base_lr": 1.0, "final_lr": 0.1, "warmup_steps": 5, "warmup_begin_lr": 0.2}),
    ("cosine", {"max_update": 10, "base_lr": 0.5}),
]
SCHEDULER_CLASSES = {
    "factor": mx.lr_scheduler.FactorScheduler,
    "multifactor": mx.lr_scheduler.MultiFactorScheduler,
    "poly": mx.lr_scheduler.PolyScheduler,
    "cosine": mx.lr_scheduler.CosineScheduler,
}


def build(name, kwargs):
    kwargs = dict(kwargs)
    sched = kwargs.pop("lr_scheduler", None)
    if sched is not None:
        sched = dict(sched)
        kwargs["lr_scheduler"] = SCHEDULER_CLASSES[sched.pop("type")](**sched)
    return mx.optimizer.create(name, **kwargs)


def json_kwargs(kwargs):
    out = dict(kwargs)
    if "param_idx2name" in out:
        out["param_idx2name"] = {str(k): v for k, v in out["param_idx2name"].items()}
    return out


def dense_scenario(name, label, kwargs, dtype="float32", keys=(0,)):
    shapes = {0: (3, 4), 1: (5,)}
    opt = build(name, kwargs)
    kv = mx.kv.create("local")
    init = {}
    for key in keys:
        w = weight0(shapes[key], phase=key).astype(dtype)
        init[str(key)] = tolist(w)
        kv.init(key, mx.nd.array(w, dtype=dtype))
    kv.set_optimizer(opt)
    steps, expected = [], []
    for t in range(STEPS):
        key = keys[t % len(keys)]
        g = grad(shapes[key], t, amplitude=1.0, phase=key).astype(dtype)
        kv.push(key, mx.nd.array(g, dtype=dtype))
        steps.append({"key": key, "grad": tolist(g)})
        row = {}
        for k in keys:
            out = mx.nd.zeros(shapes[k], dtype=dtype)
            kv.pull(k, out=out)
            row[str(k)] = tolist(out.asnumpy())
        expected.append(row)
    updater = kv._updater
    return {
        "optimizer": name, "label": label, "kwargs": json_kwargs(kwargs), "dtype": dtype,
        "keys": list(keys), "init": init, "steps": steps, "expected": expected,
        "final_state": {str(k): flatten_state(updater.states[k]) for k in keys},
        "update_counts": {str(k): updater.optimizer._index_update_count.get(k, 0) for k in keys},  # Test counts none
        "num_update": updater.optimizer.num_update,
    }


def sparse_scenario(name, kwargs):
    shape = (5, 3)
    opt = build(name, kwargs)
    updater = mx.optimizer.get_updater(opt)
    w = mx.nd.array(weight0(shape))
    init = tolist(w.asnumpy())
    steps, expected = [], []
    for t, rows in enumerate(SPARSE_ROWS):
        data = grad((len(rows), shape[1]), t)
        g = mx.nd.sparse.row_sparse_array((data, np.array(rows, dtype=np.int64)), shape=shape)
        updater(0, g, w)
        steps.append({"indices": rows, "data": tolist(data)})
        expected.append(tolist(w.asnumpy()))
    return {
        "optimizer": name, "kwargs": kwargs, "shape": list(shape), "init": init, "steps": steps,
        "expected": expected, "final_state": flatten_state(updater.states[0]),
    }


def sgld_statistics():
    """One SGLD step on a large weight: what MXNet returns (deterministic part + noise)."""
    shape = (100, 200)
    out = {}
    for label, kwargs in (("lr", {"learning_rate": 0.01}),
                          ("all", {"learning_rate": 0.04, "wd": 0.1, "rescale_grad": 0.5, "clip_gradient": 0.3})):
        mx.random.seed(7)
        opt = build("sgld", kwargs)
        updater = mx.optimizer.get_updater(opt)
        w0 = weight0(shape)
        g = grad(shape, 0)
        w = mx.nd.array(w0)
        updater(0, mx.nd.array(g), w)
        after = w.asnumpy()
        # Stored as summary numbers plus the first rows, so the JSON stays small.
        out[label] = {"kwargs": kwargs, "shape": list(shape), "rows": 4,
                      "init_rows": tolist(w0[:4]), "grad_rows": tolist(g[:4]), "after_rows": tolist(after[:4]),
                      "after_sum": float(after.astype(np.float64).sum()),
                      "after_sq_sum": float((after.astype(np.float64) ** 2).sum())}
    return out


def schedulers():
    out = []
    for kind, kwargs in SCHEDULERS:
        sched = SCHEDULER_CLASSES[kind](**kwargs)
        values = [float(sched(t)) for t in range(0, 31)]
        out.append({"type": kind, "kwargs": kwargs, "num_update": list(range(0, 31)), "lr": values})
    return out


def main():
    dense = []
    for name, cases in DENSE.items():
        for label, kwargs in cases:
            dense.append(dense_scenario(name, label, kwargs))
    # Global optimizer state (Nadam's m_schedule, LARS's last lr) crosses keys: two keys interleaved.
    for name in ("nadam", "lars", "sgd", "adam"):
        kwargs = {"learning_rate": 0.05, "momentum": 0.9} if name in ("lars", "sgd") else {"learning_rate": 0.01}
        dense.append(dense_scenario(name, "two_keys", kwargs, keys=(0, 1)))
    mp = []
    for name, cases in MULTI_PRECISION.items():
        for index, kwargs in enumerate(cases):
            kwargs = dict(kwargs, multi_precision=True)
            mp.append(dense_scenario(name, f"mp{index}", kwargs, dtype="float16"))
    sparse = [sparse_scenario(name, kwargs) for name, cases in SPARSE.items() for kwargs in cases]
    reference = {
        "mxnet_version": mx.__version__,
        "numpy_version": np.__version__,
        "generator": "tests/data/make_mxnet_optimizer_reference.py",
        "registered": sorted(mx.optimizer.Optimizer.opt_registry),
        "dense": dense,
        "multi_precision": mp,
        "sparse": sparse,
        "sgld": sgld_statistics(),
        "schedulers": schedulers(),
    }
    OUT.write_text(json.dumps(reference, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}: {len(dense)} dense, {len(mp)} multi-precision, {len(sparse)} sparse scenarios")


if __name__ == "__main__":
    main()
