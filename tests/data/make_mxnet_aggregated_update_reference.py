"""Record MXNet 1.9.1's aggregated optimizer updates -- ``update_multi_precision`` given
lists of indices, weights, gradients and states, as MXNet's test_multilamb does -- into
mxnet_aggregated_update_reference.json.

Run with a Python that has mxnet 1.9.1 (never kvcli's own venv), from the repository root:

    $MXNET_PYTHON tests/data/make_mxnet_aggregated_update_reference.py

tests/optim/test_aggregated_updates.py replays the cases on kvcli.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).with_name("mxnet_aggregated_update_reference.json")
SHAPES = [(3, 2), (4,), (2, 2, 2)]
STEPS = 2


def values(shape, offset: float) -> list:
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + offset) * 0.9).reshape(shape).tolist()


#: (name, optimizer, keyword arguments, dtype)
CASES = [
    ("lamb_f32", "lamb", {"learning_rate": 0.01, "wd": 0.03, "clip_gradient": 0.5}, "float32"),
    ("lamb_no_bias_correction_f32", "lamb", {"learning_rate": 0.02, "bias_correction": False, "rescale_grad": 0.8},
     "float32"),
    ("lamb_mp_f16", "lamb", {"learning_rate": 0.01, "wd": 0.05, "multi_precision": True}, "float16"),
]


def leaves(state):
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [x for s in state for x in leaves(s)]
    return [state.asnumpy().astype(np.float64).tolist()]


def record(opt_name: str, kwargs: dict, dtype: str) -> dict:
    opt = mx.optimizer.create(opt_name, **kwargs)
    weights = [mx.nd.array(values(s, i), dtype=dtype) for i, s in enumerate(SHAPES)]
    states = [opt.create_state_multi_precision(i, w) for i, w in enumerate(weights)]
    for step in range(STEPS):
        grads = [mx.nd.array(values(s, 10 + 3 * step + i), dtype=dtype) for i, s in enumerate(SHAPES)]
        opt.update_multi_precision(list(range(len(SHAPES))), weights, grads, states)
    mx.nd.waitall()
    return {"weights": [w.asnumpy().astype(np.float64).tolist() for w in weights],
            "states": [leaves(s) for s in states], "num_update": opt.num_update}


def main() -> None:
    out = {"mxnet_version": mx.__version__, "shapes": [list(s) for s in SHAPES], "steps": STEPS,
           "cases": [{"name": n, "optimizer": o, "kwargs": k, "dtype": d, "mxnet": record(o, k, d)}
                     for n, o, k, d in CASES]}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"recorded {len(CASES)} cases into {OUT.name}")


if __name__ == "__main__":
    main()
