"""Optimizers on row-sparse weights, as MXNet's test_optimizer.py drives them
(``w_stype='row_sparse'``): MXNet 1.9.1's recorded results (make_mxnet_row_sparse_weight_reference.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.errors import UpdaterError

from .conftest import state_arrays

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "mxnet_row_sparse_weight_reference.json"
DATA = json.loads(REFERENCE.read_text())


def test_reference_is_from_mxnet_191() -> None:
    assert DATA["mxnet_version"] == "1.9.1" and len(DATA["cases"]) == 9


@pytest.mark.parametrize("case", DATA["cases"], ids=[c["name"] for c in DATA["cases"]])
def test_update_of_a_full_row_sparse_weight_matches_mxnet(case: dict[str, Any]) -> None:
    dtype, shape, want = case["dtype"], tuple(DATA["shape"]), case["mxnet"]
    opt = mx.optimizer.create(case["optimizer"], **case["kwargs"])
    weight = mx.nd.array(DATA["weight"], dtype=dtype).tostype("row_sparse")
    state = opt.create_state_multi_precision(0, weight)
    for rows, data in DATA["grads"]:
        grad = mx.nd.sparse.row_sparse_array((np.array(data, dtype=dtype), rows), shape=shape)
        opt.update_multi_precision(0, weight, grad, state)
    assert weight.stype == want["stype"] and weight.dtype == np.dtype(dtype)
    assert weight.indices.asnumpy().tolist() == want["indices"]
    tol = 1e-3 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(weight.asnumpy().astype(np.float64), want["weight"], rtol=tol, atol=tol)
    got_state = state_arrays(state)
    assert len(got_state) == len(want["state"])
    for got, expected in zip(got_state, want["state"]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)  # float32 state, master included
    if case["kwargs"].get("multi_precision"):
        assert any(s.dtype == np.float32 and s.shape == shape for s in got_state)


def test_a_row_sparse_weight_without_every_row_is_refused_as_in_mxnet() -> None:
    assert "all rows" in DATA["partial_rows"]["error"]
    shape = tuple(DATA["shape"])
    weight = mx.nd.sparse.row_sparse_array((np.ones((1, 3), "float32"), [1]), shape=shape)
    grad = mx.nd.sparse.row_sparse_array((np.ones((1, 3), "float32"), [1]), shape=shape)
    with pytest.raises(UpdaterError, match="must hold every row: it has 1 of 4"):
        mx.optimizer.SGD(learning_rate=0.1).update(0, weight, grad, None)
    np.testing.assert_array_equal(weight.asnumpy()[1], np.ones(3))
