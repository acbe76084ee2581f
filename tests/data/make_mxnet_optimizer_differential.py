"""Write ``mxnet_optimizer_differential.json``: every optimizer MXNet 1.9.1 registers (but
SGLD, whose noise is drawn from MXNet's generator, and contrib's GroupAdaGrad), each with
random hyper-parameters (seeded) on random weights of several shapes and dtypes (float32,
float64, float16 alone and under ``multi_precision``), for three updates through
``mx.optimizer.get_updater`` (MXNet's ``Updater``: the path ``kv.set_optimizer`` takes), with
gradients that include edge values (zeros, negative zeros, tiny and large numbers, and in
some cases inf and NaN). Arrays are stored exactly (bytes as hex), so the test replays
them bit for bit: ``tests/optim/test_differential.py``, against the tolerances that
``kvcli/mx/scope_table.py`` states (and why).

The scenarios complement ``make_mxnet_optimizer_reference.py`` (hand-picked settings through
a KVStore, to 1e-6): here the settings are random and the comparison exact.

Run with MXNet's own interpreter (kvcli never imports MXNet)::

    $MXNET_PYTHON tests/data/make_mxnet_optimizer_differential.py
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).resolve().with_name("mxnet_optimizer_differential.json")
SEED = 33
CASES_PER_OPTIMIZER = 14
STEPS = 3
SHAPES = [(1,), (7,), (3, 4), (2, 3, 5), (64,), (4, 9)]


def _hex(array: np.ndarray) -> dict:
    array = np.ascontiguousarray(array)
    return {"dtype": str(array.dtype), "shape": list(array.shape), "hex": array.tobytes().hex()}


def _u(rng: np.random.Generator, low: float, high: float) -> float:
    return float(np.round(rng.uniform(low, high), 6))


def _log_u(rng: np.random.Generator, low: float, high: float) -> float:
    return float(np.format_float_positional(np.exp(rng.uniform(np.log(low), np.log(high))), precision=4,
                                            unique=False, fractional=False, trim="-"))


def _common(rng: np.random.Generator, lr: tuple[float, float]) -> dict:
    kwargs = {"learning_rate": _log_u(rng, *lr)}
    if rng.random() < 0.25:  # a schedule: the rate changes between the updates
        kwargs["lr_scheduler"] = {"type": "factor", "step": 1, "factor": _u(rng, 0.3, 0.9)}
    if rng.random() < 0.2:
        kwargs["begin_num_update"] = int(rng.integers(1, 5))
    if rng.random() < 0.6:
        kwargs["wd"] = _log_u(rng, 1e-4, 0.1)
    if rng.random() < 0.4:
        kwargs["rescale_grad"] = _u(rng, 0.1, 2.0)
    if rng.random() < 0.4:
        kwargs["clip_gradient"] = _u(rng, 0.05, 2.0)
    return kwargs


def _momentum(rng: np.random.Generator) -> float:
    return 0.0 if rng.random() < 0.3 else _u(rng, 0.5, 0.99)


def _betas(rng: np.random.Generator) -> dict:
    return {"beta1": _u(rng, 0.5, 0.95), "beta2": _u(rng, 0.9, 0.9999)}


#: name -> (sampler of its own arguments, learning-rate range, whether MXNet 1.9.1 runs it
#: under multi_precision without breaking: its mp LBSGD swaps master copy and momentum)
SAMPLERS = {
    "sgd": (lambda r: {"momentum": _momentum(r)}, (1e-3, 0.5), True),
    "nag": (lambda r: {"momentum": _momentum(r)}, (1e-3, 0.5), True),
    "signum": (lambda r: {"momentum": _momentum(r), "wd_lh": _log_u(r, 1e-4, 0.1) if r.random() < 0.5 else 0.0},
               (1e-4, 0.05), True),
    "lars": (lambda r: {"momentum": _momentum(r), "eta": _log_u(r, 1e-3, 0.5), "eps": _log_u(r, 1e-9, 1e-3)},
             (1e-3, 0.5), True),
    "lbsgd": (lambda r: {"momentum": _momentum(r), "warmup_strategy": str(r.choice(["linear", "power2", "sqrt", "lars"])),
                         "batch_scale": int(r.integers(1, 3)), "warmup_epochs": int(r.integers(1, 3)),
                         "updates_per_epoch": int(r.integers(1, 4))}, (1e-3, 0.5), False),
    "dcasgd": (lambda r: {"lamda": _log_u(r, 1e-3, 0.5)}, (1e-3, 0.5), True),  # momentum 0: see the reference
    "adam": (lambda r: {**_betas(r), "epsilon": _log_u(r, 1e-9, 1e-4)}, (1e-4, 0.1), True),
    "adamax": (lambda r: _betas(r), (1e-4, 0.1), True),
    "nadam": (lambda r: {**_betas(r), "epsilon": _log_u(r, 1e-9, 1e-4), "schedule_decay": _log_u(r, 1e-3, 0.01)},
              (1e-4, 0.1), True),
    "ftml": (lambda r: {**_betas(r), "epsilon": _log_u(r, 1e-9, 1e-4)}, (1e-4, 0.1), True),
    "lamb": (lambda r: {**_betas(r), "epsilon": _log_u(r, 1e-9, 1e-4), "bias_correction": bool(r.random() < 0.7),
                        **({"lower_bound": _u(r, 0.01, 0.5), "upper_bound": _u(r, 1.0, 5.0)} if r.random() < 0.3 else {})},
             (1e-4, 0.1), True),
    "adagrad": (lambda r: {"eps": _log_u(r, 1e-9, 1e-4)}, (1e-3, 0.5), True),
    "rmsprop": (lambda r: {"gamma1": _u(r, 0.5, 0.99), "gamma2": _u(r, 0.5, 0.99), "epsilon": _log_u(r, 1e-9, 1e-4),
                           "centered": bool(r.random() < 0.5),
                           **({"clip_weights": _u(r, 0.5, 3.0)} if r.random() < 0.3 else {})}, (1e-4, 0.05), True),
    "adadelta": (lambda r: {"rho": _u(r, 0.5, 0.99), "epsilon": _log_u(r, 1e-9, 1e-4)}, (0.5, 1.0), True),
    "ftrl": (lambda r: {"lamda1": _log_u(r, 1e-3, 0.1), "beta": _u(r, 0.5, 2.0)}, (1e-3, 0.5), True),
    "test": (lambda r: {}, (1e-3, 0.5), True),
}


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, edges: bool, wild: bool) -> np.ndarray:
    """Random values of ``shape``; with ``edges`` some become 0, -0.0, tiny, large; with ``wild``
    one becomes inf, -inf or NaN."""
    values = rng.normal(0.0, 1.0, size=shape) * rng.choice([0.01, 1.0, 10.0])
    flat = values.reshape(-1)
    if edges and flat.size > 1:
        picks = rng.choice(flat.size, size=min(flat.size, 4), replace=False)
        for i, v in zip(picks, [0.0, -0.0, 1e-30, -3e3]):
            flat[i] = v
    if wild and flat.size > 2:
        flat[int(rng.integers(0, flat.size))] = float(rng.choice([np.inf, -np.inf, np.nan]))
    return values.astype(dtype)


def build(kwargs: dict) -> dict:
    """The constructor's arguments: a recorded schedule becomes MXNet's FactorScheduler."""
    kwargs = dict(kwargs)
    schedule = kwargs.pop("lr_scheduler", None)
    if schedule is not None:
        kwargs["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(step=schedule["step"], factor=schedule["factor"])
    return kwargs


def _flatten(state) -> list:
    if state is None:
        return [None]
    if isinstance(state, (tuple, list)):
        return [leaf for item in state for leaf in _flatten(item)]
    return [_hex(state.asnumpy())]


def _case(rng: np.random.Generator, name: str, number: int) -> dict:
    sampler, lr_range, mp_ok = SAMPLERS[name]
    kwargs = {**_common(rng, lr_range), **sampler(rng)}
    shape = SHAPES[int(rng.integers(0, len(SHAPES)))]
    roll = rng.random()
    if roll < 0.55:
        dtype, mp = "float32", False
    elif roll < 0.7:
        dtype, mp = "float64", False
    elif roll < 0.85 and mp_ok:
        dtype, mp = "float16", True
    else:
        dtype, mp = "float16", False
    if mp:
        kwargs["multi_precision"] = True
    wild = number == CASES_PER_OPTIMIZER - 1  # the last case of each optimizer meets inf / NaN
    weight = _values(rng, shape, dtype, edges=False, wild=False)
    grads = [_values(rng, shape, dtype, edges=step == 1, wild=wild and step == 2) for step in range(STEPS)]
    case = {"optimizer": name, "kwargs": kwargs, "dtype": dtype, "weight": _hex(weight),
            "grads": [_hex(g) for g in grads]}
    opt = mx.optimizer.create(name, **build(kwargs))
    updater = mx.optimizer.get_updater(opt)
    w = mx.nd.array(weight, dtype=dtype)
    after = []
    try:
        for g in grads:
            updater(0, mx.nd.array(g, dtype=dtype), w)
            after.append(_hex(w.asnumpy()))
    except mx.base.MXNetError as error:  # MXNet refuses these settings: kvcli must refuse too
        return {**case, "error": str(error).splitlines()[0][:300]}
    return {**case, "after": after, "state": _flatten(updater.states[0]), "num_update": opt.num_update}


def main() -> None:
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(SEED)
    cases = [_case(rng, name, i) for name in SAMPLERS for i in range(CASES_PER_OPTIMIZER)]
    OUT.write_text(json.dumps({"mxnet_version": mx.__version__, "seed": SEED, "steps": STEPS, "cases": cases},
                              indent=0, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
