"""Aggregated updates (lists of indices, weights, gradients and states in one
``update_multi_precision`` call, as MXNet's test_multilamb makes them) give MXNet 1.9.1's
recorded results (tests/data/make_mxnet_aggregated_update_reference.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.errors import UpdaterError

from .conftest import state_arrays

DATA = json.loads((Path(__file__).resolve().parent.parent / "data" / "mxnet_aggregated_update_reference.json").read_text())


def _values(shape: list[int], offset: float) -> np.ndarray:
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + offset) * 0.9).reshape(shape)


def test_reference_is_from_mxnet_191() -> None:
    assert DATA["mxnet_version"] == "1.9.1" and len(DATA["cases"]) == 3


@pytest.mark.parametrize("case", DATA["cases"], ids=[c["name"] for c in DATA["cases"]])
def test_list_update_matches_mxnet(case: dict[str, Any]) -> None:
    dtype, shapes, want = case["dtype"], DATA["shapes"], case["mxnet"]
    opt = mx.optimizer.create(case["optimizer"], **case["kwargs"])
    weights = [mx.nd.array(_values(s, i), dtype=dtype) for i, s in enumerate(shapes)]
    states = [opt.create_state_multi_precision(i, w) for i, w in enumerate(weights)]
    for step in range(DATA["steps"]):
        grads = [mx.nd.array(_values(s, 10 + 3 * step + i), dtype=dtype) for i, s in enumerate(shapes)]
        opt.update_multi_precision(list(range(len(shapes))), weights, grads, states)
    tol = 1e-3 if dtype == "float16" else 1e-5
    assert opt.num_update == want["num_update"]
    for got, expected in zip(weights, want["weights"]):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got.asnumpy().astype(np.float64), expected, rtol=tol, atol=tol)
    for got_state, expected_state in zip(states, want["states"]):
        leaves = state_arrays(got_state)
        assert len(leaves) == len(expected_state)
        for got, expected in zip(leaves, expected_state):
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_lists_of_different_lengths_are_refused() -> None:
    opt = mx.optimizer.create("lamb")
    w = [mx.nd.ones((2,)), mx.nd.ones((2,))]
    states = [opt.create_state_multi_precision(i, x) for i, x in enumerate(w)]
    with pytest.raises(UpdaterError, match="2 indices but 2 weights, 1 gradients"):
        opt.update_multi_precision([0, 1], w, [mx.nd.ones((2,))], states)
