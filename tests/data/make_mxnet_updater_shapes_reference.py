"""Record which gradient shapes MXNet 1.9.1's ``get_updater(opt)(index, grad, weight)``
refuses into mxnet_updater_shapes_reference.json.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv):

    $MXNET_PYTHON tests/data/make_mxnet_updater_shapes_reference.py

For every optimizer below and pairs of gradient and weight shapes (equal ones as controls,
broadcastable and other ones), the record is the classes the error is an instance of (or
null when MXNet updates), and the updated weight when it does.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).with_name("mxnet_updater_shapes_reference.json")
OPTIMIZERS = [
    ("sgd", {}), ("sgd", {"momentum": 0.9}), ("nag", {"momentum": 0.9}), ("adam", {}), ("adagrad", {}),
    ("rmsprop", {}), ("rmsprop", {"centered": True}), ("adadelta", {}), ("adamax", {}), ("nadam", {}),
    ("ftrl", {}), ("signum", {"momentum": 0.9}), ("ftml", {}), ("lamb", {}), ("lars", {"momentum": 0.9}),
    ("dcasgd", {}),
]
SHAPES = [((3,), (3,)), ((1,), (3,)), ((2,), (3,)), ((1, 3), (2, 3)), ((2, 1), (2, 3)), ((3, 2), (2, 3)),
          ((6,), (2, 3)), ((2, 3), (2, 3))]
KINDS = (mx.base.MXNetError, ValueError, TypeError, RuntimeError)


def main() -> None:
    cases = []
    for name, kwargs in OPTIMIZERS:
        for grad_shape, weight_shape in SHAPES:
            updater = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **kwargs))
            weight = mx.nd.array(np.arange(np.prod(weight_shape)).reshape(weight_shape) / 7 + 0.5)
            grad = mx.nd.array(np.arange(np.prod(grad_shape)).reshape(grad_shape) / 3 - 0.25)
            case = {"optimizer": name, "kwargs": kwargs, "grad_shape": grad_shape, "weight_shape": weight_shape}
            try:
                updater(0, grad, weight)
                mx.nd.waitall()
                case["raises"], case["weight"] = None, weight.asnumpy().tolist()
            except Exception as error:  # noqa: BLE001 - we record whatever MXNet raises
                case["raises"] = [k.__name__ for k in KINDS if isinstance(error, k)]
            cases.append(case)
    OUT.write_text(json.dumps({"mxnet": mx.__version__, "cases": cases}, indent=0) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases, {sum(c['raises'] is not None for c in cases)} refused)")


if __name__ == "__main__":
    main()
