"""Record MXNet 1.9.1's CSR arrays (``stype='csr'``) into mxnet_csr_reference.json: how
dense arrays become CSR and back, ``csr_matrix``'s forms, row slicing, arithmetic, the
conversions MXNet refuses, and optimizers on CSR weights and gradients (MXNet has no CSR
optimizer kernel: its storage fallback computes on dense copies and stores the non-zero
values again, which MXNet's own test_optimizer.py::test_sgd checks).

Run with a Python that has mxnet 1.9.1 (never kvcli's own venv), from the repository root:

    /path/to/mxnet-1.9.1/python tests/data/make_mxnet_csr_reference.py

Inputs are written next to MXNet's outputs; tests/sparse/test_csr.py replays them on kvcli.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).with_name("mxnet_csr_reference.json")
DENSE = [[0.0, 1.5, 0.0, -2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.25, 0.0]]
OTHER = [[1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [0.0, 4.0, -0.25, 0.0]]
rng = np.random.RandomState(5)
#: An optimizer case: a full weight (every element non-zero) and gradients with zeros.
WEIGHT = rng.uniform(0.1, 1.0, (3, 4)).astype(np.float32) * np.where(rng.uniform(size=(3, 4)) < 0.5, -1, 1)
GRADS = [(rng.normal(size=(3, 4)) * (rng.uniform(size=(3, 4)) < 0.5)).astype(np.float32) for _ in range(2)]
OPTIMIZERS = [
    ("sgd_momentum", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.03, "clip_gradient": 0.4,
                             "rescale_grad": 0.8}),
    ("sgd", "sgd", {"learning_rate": 0.1, "wd": 0.05, "rescale_grad": 0.14}),
    ("nag", "nag", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.03}),
    ("adam", "adam", {"learning_rate": 0.05, "wd": 0.01}),
]


def dump(x) -> dict:
    if x.stype == "csr":
        return {"stype": "csr", "data": x.data.asnumpy().astype(np.float64).tolist(),
                "indices": x.indices.asnumpy().tolist(), "indptr": x.indptr.asnumpy().tolist(),
                "shape": list(x.shape), "dtype": np.dtype(x.dtype).name}
    return {"stype": x.stype, "dense": x.asnumpy().astype(np.float64).tolist(), "dtype": np.dtype(x.dtype).name}


def error_of(fn) -> str | None:
    try:
        fn()
        mx.nd.waitall()
    except (mx.base.MXNetError, ValueError, TypeError, NotImplementedError) as error:
        lines = [ln for ln in str(error).splitlines() if "Check failed" in ln or "not supported" in ln]
        return (lines or [str(error).splitlines()[0]])[0].strip()[:200]
    return None


def leaves(state) -> list:
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [x for s in state for x in leaves(s)]
    return [state.asnumpy().astype(np.float64).tolist()]


def optimizer_case(name: str, kwargs: dict, w_stype: str) -> dict:
    opt = mx.optimizer.create(name, **kwargs)
    weight = mx.nd.array(WEIGHT).tostype(w_stype)
    state = opt.create_state_multi_precision(0, weight)
    for grad in GRADS:
        opt.update_multi_precision(0, weight, mx.nd.array(grad).tostype("csr"), state)
    mx.nd.waitall()
    return {"weight": dump(weight), "state": leaves(state)}


def main() -> None:
    x = mx.nd.array(DENSE).tostype("csr")
    y = mx.nd.array(OTHER).tostype("csr")
    out = {
        "mxnet_version": mx.__version__, "dense": DENSE, "other": OTHER,
        "tostype": dump(x),
        "back": dump(x.tostype("default")),
        "from_arrays": dump(mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [1, 0, 3], [0, 1, 1, 3]), shape=(3, 4))),
        "from_arrays_no_shape": dump(mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [1, 0, 3], [0, 1, 1, 3]))),
        "from_shape": dump(mx.nd.sparse.csr_matrix((2, 5))),
        "from_dense_float64": dump(mx.nd.sparse.csr_matrix(np.array(DENSE))),
        "zeros": dump(mx.nd.sparse.zeros("csr", (2, 3))),
        "rows": {"1": dump(x[1]), "0:2": dump(x[0:2]), "1:3": dump(x[1:3]), "-1": dump(x[-1])},
        "add": dump(x + y), "sub": dump(x - y), "mul_scalar": dump(x * 2), "div_scalar": dump(x / 4),
        "mul": dump(x * y), "add_dense": dump(x + mx.nd.ones((3, 4))), "neg": dump(-x),
        "errors": {
            "csr_to_row_sparse": error_of(lambda: x.tostype("row_sparse")),
            "row_sparse_to_csr": error_of(lambda: mx.nd.array(DENSE).tostype("row_sparse").tostype("csr")),
        },
        "optimizer_weight": WEIGHT.astype(np.float64).tolist(),
        "optimizer_grads": [g.astype(np.float64).tolist() for g in GRADS],
        "optimizers": [{"name": case, "optimizer": name, "kwargs": kwargs, "w_stype": w_stype,
                        "mxnet": optimizer_case(name, kwargs, w_stype)}
                       for case, name, kwargs in OPTIMIZERS for w_stype in ("csr", "default")],
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"recorded {len(out['optimizers'])} optimizer cases into {OUT.name}")


if __name__ == "__main__":
    main()
