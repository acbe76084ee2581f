"""Every optimizer against MXNet 1.9.1 on random hyper-parameters, shapes and dtypes (float32,
float64, float16 alone and under multi_precision) with edge values, bit for bit
(tests/data/make_mxnet_optimizer_differential.py): weights after each update, the final state,
the update count, and MXNet's refusals. Where kvcli's numbers may differ, the scope table
(kvcli/mx/scope_table.py, ``mxnet.optimizer``'s ``tolerances``) says by how much and why."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx.scope_table import TABLE, Tolerance

DATA = json.loads((Path(__file__).parents[1] / "data" / "mxnet_optimizer_differential.json").read_text())
CASES = DATA["cases"]
TOLERANCES = next(m for m in TABLE if m.mxnet == "mxnet.optimizer").tolerances


def _decode(record: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(record["hex"]), dtype=record["dtype"]).reshape(record["shape"]).copy()


def _tolerance(case: dict[str, Any]) -> Tolerance | None:
    """The table's tolerance for this optimizer and dtype (``Adam/float16``, then ``Adam``)."""
    name = type(mx.optimizer.create(case["optimizer"])).__name__
    mp = "/mp" if case["kwargs"].get("multi_precision") else ""
    for key in (f"{name}/{case['dtype']}{mp}", f"{name}/{case['dtype']}", name):
        if key in TOLERANCES:
            return TOLERANCES[key]
    return None


def _same(got: np.ndarray, want: np.ndarray, tolerance: Tolerance | None, where: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, where
    if tolerance is None:  # bit for bit; every NaN is a NaN (MXNet's payloads are its C library's)
        nan = np.isnan(want) if want.dtype.kind == "f" else np.zeros(want.shape, bool)
        assert np.array_equal(np.isnan(got), nan), where
        assert got[~nan].tobytes() == want[~nan].tobytes(), \
            f"{where}: {np.count_nonzero(got[~nan] != want[~nan])} of {want.size} values differ: {got} != {want}"
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tolerance.rtol,
                                   atol=tolerance.atol, equal_nan=True, err_msg=where)


def _leaves(state: Any) -> list[Any]:
    if state is None:
        return [None]
    if isinstance(state, (tuple, list)):
        return [leaf for item in state for leaf in _leaves(item)]
    return [np.asarray(state.asnumpy() if hasattr(state, "asnumpy") else state)]


def test_recorded_from_mxnet_191_for_every_optimizer() -> None:
    assert DATA["mxnet_version"] == "1.9.1"
    names = {c["optimizer"] for c in CASES}
    registry = mx.optimizer.Optimizer.opt_registry
    registered = {n for n, cls in registry.items() if cls.__module__.startswith("kvcli")}
    # SGLD's noise is kvcli's generator's; ccsgd is sgd's alias
    assert registered - names == {"sgld", "ccsgd"}
    assert {c["dtype"] for c in CASES} == {"float32", "float64", "float16"}
    assert any(c["kwargs"].get("multi_precision") for c in CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c['optimizer']}-{i}" for i, c in enumerate(CASES)])
def test_optimizer_matches_mxnet_bit_for_bit(index: int) -> None:
    case = CASES[index]
    dtype = case["dtype"]
    kwargs = dict(case["kwargs"])
    schedule = kwargs.pop("lr_scheduler", None)
    if schedule is not None:
        kwargs["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(step=schedule["step"], factor=schedule["factor"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = mx.optimizer.create(case["optimizer"], **kwargs)
    updater = mx.optimizer.get_updater(opt)
    weight = mx.nd.array(_decode(case["weight"]), dtype=dtype)
    grads = [mx.nd.array(_decode(g), dtype=dtype) for g in case["grads"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "error" in case:  # MXNet refuses these settings at the first update: so does kvcli
            before = weight.asnumpy().copy()
            with pytest.raises(mx.base.MXNetError):
                updater(0, grads[0], weight)
            assert weight.asnumpy().tobytes() == before.tobytes()  # and the weight is kept
            return
        tolerance = _tolerance(case)
        for step, (g, want) in enumerate(zip(grads, case["after"])):
            updater(0, g, weight)
            _same(weight.asnumpy(), _decode(want), tolerance, f"{case['optimizer']} {case['kwargs']} step {step + 1}")
    leaves = _leaves(updater.states[0])
    assert len(leaves) == len(case["state"]), "the state's layout"
    for got, want in zip(leaves, case["state"]):
        if want is None:
            assert got is None
        else:
            _same(got, _decode(want), tolerance, "the final state")
    assert opt.num_update == case["num_update"]
