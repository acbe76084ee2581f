"""Record how MXNet 1.9.1's optimizers update *row-sparse weights* (as MXNet's own
test_optimizer.py does with ``w_stype='row_sparse'``), into mxnet_row_sparse_weight_reference.json.

Run with a Python that has mxnet 1.9.1 (never kvcli's own venv), from the repository root:

    $MXNET_PYTHON tests/data/make_mxnet_row_sparse_weight_reference.py

Each case: an optimizer and its arguments, a weight holding every row (MXNet refuses others)
of a dtype, row-sparse gradients for a few steps, and MXNet's weight (stype, row indices,
values) and flattened state after them. One more case records the refusal of a weight that
lacks rows. tests/optim/test_row_sparse_weights.py replays the cases on kvcli.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).with_name("mxnet_row_sparse_weight_reference.json")
SHAPE = (4, 3)
WEIGHT = (np.arange(12).reshape(SHAPE) / 8.0 - 0.6).tolist()
#: Per step: (row indices, row data) of the gradient.
GRADS = [
    ([1, 3], [[0.5, -0.25, 1.5], [-2.0, 0.75, 0.1]]),
    ([0, 1], [[0.3, 0.2, -0.1], [1.0, -1.0, 0.5]]),
]

#: (name, optimizer, keyword arguments, weight dtype)
CASES = [
    ("sgd_momentum_f32", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}, "float32"),
    ("sgd_momentum_mp_f16", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "multi_precision": True},
     "float16"),
    ("adam_lazy_f32", "adam", {"learning_rate": 0.01, "clip_gradient": 0.4, "wd": 0.03}, "float32"),
    ("adam_not_lazy_mp_f16", "adam", {"learning_rate": 0.01, "lazy_update": False, "clip_gradient": 0.4,
                                      "multi_precision": True}, "float16"),
    ("adam_lazy_mp_f16", "adam", {"learning_rate": 0.01, "rescale_grad": 0.5, "multi_precision": True}, "float16"),
    ("adagrad_f32", "adagrad", {"learning_rate": 0.1, "wd": 0.0}, "float32"),
    ("ftrl_lazy_f32", "ftrl", {"learning_rate": 0.1, "lamda1": 0.01, "wd": 0.01, "clip_gradient": 0.6}, "float32"),
    # no sparse NAG kernel: MXNet's dense fallback computes into a temporary, so the momentum
    # sees the old weight (its in-place dense kernel, and the multi-precision one, the new)
    ("nag_momentum_f32", "nag", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.1}, "float32"),
    ("nag_momentum_mp_f16", "nag", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.1, "multi_precision": True},
     "float16"),
]


def leaves(state):
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [x for s in state for x in leaves(s)]
    return [state.asnumpy().tolist()]


def record(opt_name: str, kwargs: dict, dtype: str) -> dict:
    opt = mx.optimizer.create(opt_name, **kwargs)
    weight = mx.nd.array(WEIGHT, dtype=dtype).tostype("row_sparse")
    state = opt.create_state_multi_precision(0, weight)
    for rows, data in GRADS:
        grad = mx.nd.sparse.row_sparse_array((np.array(data, dtype=dtype), rows), shape=SHAPE)
        opt.update_multi_precision(0, weight, grad, state)
    mx.nd.waitall()
    return {"stype": weight.stype, "indices": weight.indices.asnumpy().tolist(),
            "weight": weight.asnumpy().astype(np.float64).tolist(), "state": leaves(state)}


def partial_rows() -> dict:
    opt = mx.optimizer.create("sgd", learning_rate=0.1)
    weight = mx.nd.sparse.row_sparse_array((np.ones((1, 3), "float32"), [1]), shape=SHAPE)
    grad = mx.nd.sparse.row_sparse_array((np.ones((1, 3), "float32"), [1]), shape=SHAPE)
    try:
        opt.update(0, weight, grad, None)
        mx.nd.waitall()
    except mx.base.MXNetError as error:
        checks = [ln for ln in str(error).splitlines() if "Check failed" in ln]
        return {"error": (checks or [type(error).__name__])[0].strip()[:240]}
    return {"error": None}


def main() -> None:
    out = {"mxnet_version": mx.__version__, "shape": list(SHAPE), "weight": WEIGHT, "grads": GRADS,
           "cases": [{"name": n, "optimizer": o, "kwargs": k, "dtype": d, "mxnet": record(o, k, d)}
                     for n, o, k, d in CASES],
           "partial_rows": partial_rows()}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"recorded {len(CASES)} cases into {OUT.name}")


if __name__ == "__main__":
    main()
