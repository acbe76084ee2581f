"""Every optimizer MXNet 1.9.1 registers, through kvcli's stores, against numbers recorded
from real MXNet (``tests/data/make_mxnet_optimizer_reference.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import kvcli
from kvcli.mx import optimizer as mxopt
from tests.optim.conftest import REFERENCE, flatten_state, kwargs_of

TOL = {"rtol": 1e-6, "atol": 1e-7}
DENSE = {f"{s['optimizer']}-{s['label']}": s for s in REFERENCE["dense"]}
MP = {f"{s['optimizer']}-{s['label']}": s for s in REFERENCE["multi_precision"]}
#: MXNet 1.9.1's multi-precision LBSGD swaps master copy and momentum (see LBSGD's docstring);
#: kvcli's is checked against MXNet's SGD on the same numbers instead.
MXNET_BROKEN_MP = {"lbsgd-mp0"}


def run(store_type: str, scenario: dict, name: str) -> None:
    dtype = np.dtype(scenario["dtype"])
    opt = mxopt.create(scenario["optimizer"], **kwargs_of(scenario))
    with kvcli.create(store_type) as kv:
        for key in scenario["keys"]:
            kv.init(key, np.array(scenario["init"][str(key)], dtype=dtype))
        kv.set_optimizer(opt)
        for index, step in enumerate(scenario["steps"]):
            kv.push(step["key"], np.array(step["grad"], dtype=dtype))
            for key in scenario["keys"]:
                got = kv.pull(key)
                want = np.array(scenario["expected"][index][str(key)], dtype=dtype)
                assert got.dtype == dtype
                tol = TOL if dtype == np.float32 else {"rtol": 1e-3, "atol": 1e-3}
                np.testing.assert_allclose(got, want, **tol, err_msg=f"{name}: key {key} after step {index + 1}")
        updater = kv.updater
        for key in scenario["keys"]:
            raw = updater._kv().states[key]
            got_leaves, want_leaves = flatten_state(raw), scenario["final_state"][str(key)]
            assert len(got_leaves) == len(want_leaves), f"{name}: state layout of key {key}"
            for got_leaf, want_leaf in zip(got_leaves, want_leaves):
                if want_leaf is None:
                    assert got_leaf is None, f"{name}: key {key} state should hold None"
                else:
                    np.testing.assert_allclose(got_leaf.astype(np.float32), np.array(want_leaf, np.float32), **TOL,
                                               err_msg=f"{name}: final state of key {key}")
            assert updater.counts.get(key, 0) == scenario["update_counts"][str(key)]  # Test counts none
        assert updater.num_update == scenario["num_update"]


def test_reference_covers_every_registered_optimizer() -> None:
    assert REFERENCE["mxnet_version"] == "1.9.1"
    # contrib's GroupAdaGrad is not part of kvcli.
    wanted = set(REFERENCE["registered"]) - {"groupadagrad"}
    assert wanted <= set(mxopt.Optimizer.opt_registry)
    recorded = {s["optimizer"] for s in REFERENCE["dense"]}
    assert wanted - {"ccsgd", "sgld"} <= recorded
    for name in wanted - {"ccsgd", "sgld"}:
        assert sum(s["optimizer"] == name for s in REFERENCE["dense"]) >= 3, name


@pytest.mark.parametrize("name", sorted(DENSE))
def test_dense_matches_mxnet(store_type: str, name: str) -> None:
    run(store_type, DENSE[name], name)


@pytest.mark.parametrize("name", sorted(set(MP) - MXNET_BROKEN_MP))
def test_multi_precision_matches_mxnet(store_type: str, name: str) -> None:
    run(store_type, MP[name], name)


def test_lbsgd_multi_precision_is_sgds() -> None:
    """Default LBSGD (batch_scale 1, warm-up reaching 1) is SGD: compare with MXNet's mp SGD."""
    sgd = MP["sgd-mp0"]
    scenario = dict(sgd, optimizer="lbsgd", kwargs={"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01,
                                                     "multi_precision": True})
    scenario["final_state"] = {k: v for k, v in sgd["final_state"].items()}
    run("local", scenario, "lbsgd-mp as sgd-mp")


def test_ccsgd_is_sgd() -> None:
    scenario = dict(DENSE["sgd-momentum_wd"], optimizer="ccsgd")
    run("local", scenario, "ccsgd")
