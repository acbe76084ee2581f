"""A gradient whose shape is not the weight's, given to ``get_updater(opt)``: refused with an
``MXNetError`` where MXNet 1.9.1's update operator refuses it, and broadcast to the same
weight where MXNet's Python optimizers broadcast it (adagrad, adadelta, adamax, nadam,
dcasgd); recorded by tests/data/make_mxnet_updater_shapes_reference.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "mxnet_updater_shapes_reference.json"
CASES = json.loads(REFERENCE.read_text())["cases"]
KINDS = (mx.base.MXNetError, ValueError, TypeError, RuntimeError)


def _id(case: dict[str, Any]) -> str:
    extra = ",".join(f"{k}={v}" for k, v in case["kwargs"].items())
    return f"{case['optimizer']}({extra})-{case['grad_shape']}-{case['weight_shape']}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_gradient_shape_against_mxnet(case: dict[str, Any]) -> None:
    updater = mx.optimizer.get_updater(mx.optimizer.create(case["optimizer"], learning_rate=0.1, **case["kwargs"]))
    weight_shape, grad_shape = tuple(case["weight_shape"]), tuple(case["grad_shape"])
    weight = mx.nd.array(np.arange(np.prod(weight_shape)).reshape(weight_shape) / 7 + 0.5)
    grad = mx.nd.array(np.arange(np.prod(grad_shape)).reshape(grad_shape) / 3 - 0.25)
    if case["raises"] is None:
        updater(0, grad, weight)
        np.testing.assert_allclose(weight.asnumpy(), np.array(case["weight"], np.float32), rtol=1e-6, atol=1e-7)
        return
    with pytest.raises(Exception) as caught:
        updater(0, grad, weight)
    # what a program's except clause for MXNet's error catches, kvcli's error is too
    assert set(case["raises"]) <= {k.__name__ for k in KINDS if isinstance(caught.value, k)}
