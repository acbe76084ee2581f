"""Record what MXNet 1.9.1 computes when an optimizer's state is kept or started afresh
between two pushes, into mxnet_updater_state_reference.json.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv):

    $MXNET_PYTHON tests/data/make_mxnet_updater_state_reference.py

For each case (an optimizer with random settings, a random weight and two random
gradients) on a ``local`` KVStore:

* ``kept``: ``set_optimizer`` once, then push the two gradients (one training run: the
  optimizer's state carries from the first push to the second);
* ``fresh``: ``set_optimizer``, push the first gradient, ``set_optimizer`` with a new
  optimizer object of the same settings (MXNet drops the state), push the second;
* ``changed``: as ``fresh``, the second optimizer being another case's settings.

``kvcli set-updater`` with the same spec again must give ``kept`` (tests/cli/test_set_updater_state.py);
with another spec, ``changed``. The kvcli spec of each optimizer is recorded beside
MXNet's arguments. Float32 values are written as Python floats (they read back to the same
float32 bits).
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).with_name("mxnet_updater_state_reference.json")
RNG = np.random.default_rng(35)
SHAPE = (2, 3)


def settings() -> list[tuple[str, dict, str]]:
    """(MXNet optimizer name, its arguments, the same as a kvcli spec), random numbers."""
    found = []
    for _ in range(3):
        lr = float(np.float32(RNG.uniform(0.01, 0.5)))
        momentum = float(np.float32(RNG.uniform(0.5, 0.95)))
        wd = float(np.float32(RNG.choice([0.0, RNG.uniform(0.0, 0.01)])))
        found.append(("sgd", {"learning_rate": lr, "momentum": momentum, "wd": wd},
                      f"sgd:lr={lr!r},momentum={momentum!r},wd={wd!r}"))
    for _ in range(2):
        lr = float(np.float32(RNG.uniform(0.001, 0.1)))
        beta1 = float(np.float32(RNG.uniform(0.8, 0.95)))
        found.append(("adam", {"learning_rate": lr, "beta1": beta1}, f"adam:lr={lr!r},beta1={beta1!r}"))
    # the example: w = 1, gradients 1 and 1, sgd lr 0.1 momentum 0.9
    found.append(("sgd", {"learning_rate": 0.1, "momentum": 0.9}, "sgd:lr=0.1,momentum=0.9"))
    return found


def run(first: tuple[str, dict, str], second: tuple[str, dict, str] | None, weight: np.ndarray,
        grads: list[np.ndarray]) -> list:
    """The weight after pushing ``grads`` with optimizer ``first``; ``second`` (when given)
    is set between the two pushes."""
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.array(weight))
    kv.set_optimizer(mx.optimizer.create(first[0], **first[1]))
    kv.push(3, mx.nd.array(grads[0]))
    if second is not None:
        kv.set_optimizer(mx.optimizer.create(second[0], **second[1]))
    kv.push(3, mx.nd.array(grads[1]))
    out = mx.nd.zeros(SHAPE)
    kv.pull(3, out=out)
    return out.asnumpy().astype(np.float32).tolist()


def main() -> None:
    cases = []
    table = settings()
    for index, first in enumerate(table):
        if index == len(table) - 1:  # the numbers
            weight = np.ones(SHAPE, np.float32)
            grads = [np.ones(SHAPE, np.float32)] * 2
        else:
            weight = RNG.standard_normal(SHAPE).astype(np.float32)
            grads = [RNG.standard_normal(SHAPE).astype(np.float32) for _ in range(2)]
        other = table[(index + 1) % len(table)]
        cases.append({
            "spec": first[2], "mxnet": [first[0], first[1]], "other_spec": other[2],
            "weight": weight.tolist(), "grads": [g.tolist() for g in grads],
            "kept": run(first, None, weight, grads),
            "fresh": run(first, first, weight, grads),
            "changed": run(first, other, weight, grads),
        })
    OUT.write_text(json.dumps({"mxnet": mx.__version__, "shape": list(SHAPE), "cases": cases}, indent=1) + "\n")


if __name__ == "__main__":
    main()
