"""Write ``mxnet_state_objects_reference.json``: what MXNet 1.9.1's ``Updater.states`` holds,
and what MXNet code that reads or changes it sees (the program of
``tests/optim/state_object_programs.py``: through ``get_updater``, after changing the states,
after ``set_states``, and as ``kv._updater`` of a local store), for every optimizer MXNet
registers but contrib's GroupAdaGrad: with random settings (seeded; the samplers of
``make_mxnet_optimizer_differential.py``), float32 weights (with and without momentum where
an optimizer has it) and float16 ones under ``multi_precision``. SGLD's noise is MXNet's
generator's, so only its layouts are compared. ``tests/optim/test_state_objects.py`` runs the
same program on kvcli.mx and compares, bit for bit.

Run with MXNet's own interpreter (kvcli never imports MXNet), from anywhere::

    $MXNET_PYTHON tests/data/make_mxnet_state_objects_reference.py
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import program_module  # noqa: E402
from make_mxnet_optimizer_differential import SAMPLERS, _common  # noqa: E402  (the same random settings)

OUT = HERE / "mxnet_state_objects_reference.json"
PROGRAMS = HERE.parent / "optim" / "state_object_programs.py"
SEED = 38
#: Optimizers whose update MXNet's Updater aggregates (lists of indices in one call).
AGGREGATING = ("sgd", "lars", "lamb")
WITH_MOMENTUM = ("sgd", "nag", "signum", "lars", "lbsgd", "ccsgd")


def _case(programs, rng: np.random.Generator, name: str, dtype: str, momentum: float | None) -> dict:
    sampler, lr_range, _ = SAMPLERS.get(name, (lambda r: {}, (1e-3, 0.5), True))
    kwargs = {**_common(rng, lr_range), **sampler(rng)}
    kwargs.pop("lr_scheduler", None)  # set_states makes a new optimizer: its schedule would start afresh
    if momentum is not None:
        kwargs["momentum"] = momentum
    if dtype == "float16":
        kwargs["multi_precision"] = True
    if name == "lbsgd":  # a macro-batch on a store that pushes from devices: a deliberate difference
        kwargs["batch_scale"] = 1
    if name == "signum" and not momentum:  # MXNet's signsgd_update refuses wd_lh (test_differential has it)
        kwargs.pop("wd_lh", None)
    shape = programs.SHAPE
    case = {"optimizer": name, "kwargs": kwargs, "dtype": dtype, "noisy": name == "sgld",
            "as_list": name in AGGREGATING and bool(rng.random() < 0.5),
            "weights": [programs.to_hex(rng.normal(size=shape).astype(dtype)) for _ in range(2)],
            "grads": [[programs.to_hex(rng.normal(size=shape).astype(dtype)) for _ in range(2)] for _ in range(4)]}
    return {**case, "mxnet": programs.run(mx, case)}


def main() -> None:
    warnings.simplefilter("ignore")
    programs = program_module.load(PROGRAMS)
    rng = np.random.default_rng(SEED)
    cases = []
    for name in [*SAMPLERS, "sgld", "ccsgd"]:
        momenta = [0.0, round(float(rng.uniform(0.5, 0.95)), 4)] if name in WITH_MOMENTUM else [None]
        for momentum in momenta:
            cases.append(_case(programs, rng, name, "float32", momentum))
        if SAMPLERS.get(name, (None, None, True))[2]:  # MXNet 1.9.1's multi-precision LBSGD swaps its arrays
            cases.append(_case(programs, rng, name, "float16", momenta[-1]))
    OUT.write_text(json.dumps({"mxnet_version": mx.__version__, "seed": SEED, "cases": cases},
                              indent=0, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
