"""CSR arrays (kvcli.mx.ndarray.sparse.CSRNDArray) against MXNet 1.9.1's recorded behaviour
(tests/data/make_mxnet_csr_reference.py), and optimizers on CSR weights and gradients."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.errors import CSRError, SparseUnsupportedError, ValueTypeError

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" / "mxnet_csr_reference.json").read_text())
DENSE, OTHER = np.array(DATA["dense"], np.float32), np.array(DATA["other"], np.float32)


def assert_like_mxnet(got: Any, want: dict[str, Any], tol: float = 0.0) -> None:
    """Same storage type, shape, dtype and values; a CSR result stores the same (row, column,
    value) entries (MXNet's ``.data`` may run past ``indptr[-1]`` with garbage, and its
    columns may be out of order within a row after arithmetic: both are ignored)."""
    assert got.stype == want["stype"] and np.dtype(got.dtype).name == want["dtype"]
    if want["stype"] != "csr":
        np.testing.assert_allclose(got.asnumpy(), want["dense"], rtol=tol, atol=tol)
        return
    assert list(got.shape) == want["shape"] and got.indptr.asnumpy().tolist() == want["indptr"]
    nnz = want["indptr"][-1]
    rows = np.repeat(np.arange(want["shape"][0]), np.diff(want["indptr"]))

    def entries(indices: list[int], data: list[float]) -> list[tuple[int, int, float]]:
        return sorted(zip(rows.tolist(), indices[:nnz], data[:nnz]))

    mine = entries(got.indices.asnumpy().tolist(), got.data.asnumpy().astype(np.float64).tolist())
    theirs = entries(want["indices"], want["data"])
    assert [(r, c) for r, c, _ in mine] == [(r, c) for r, c, _ in theirs]
    np.testing.assert_allclose([v for *_, v in mine], [v for *_, v in theirs], rtol=tol, atol=tol)
    got.check_format()
    if want["stype"] == "csr" and len(want["indices"]) == nnz:  # no garbage: the exact arrays
        assert got.indices.asnumpy().tolist() == want["indices"]


def test_reference_is_mxnet_191() -> None:
    assert DATA["mxnet_version"] == "1.9.1" and len(DATA["optimizers"]) == 8


def test_tostype_and_back() -> None:
    x = mx.nd.array(DENSE).tostype("csr")
    assert type(x).__name__ == "CSRNDArray" and x.indices.dtype == np.int64 and x.indptr.dtype == np.int64
    assert_like_mxnet(x, DATA["tostype"])
    assert_like_mxnet(x.tostype("default"), DATA["back"])
    np.testing.assert_array_equal(x.asnumpy(), DENSE)
    assert x.tostype("csr") is not x and x.tostype("csr").asnumpy().tolist() == DENSE.tolist()


def test_csr_matrix_forms() -> None:
    arrays = ([1.0, 2.0, 3.0], [1, 0, 3], [0, 1, 1, 3])
    assert_like_mxnet(mx.nd.sparse.csr_matrix(arrays, shape=(3, 4)), DATA["from_arrays"])
    assert_like_mxnet(mx.nd.sparse.csr_matrix(arrays), DATA["from_arrays_no_shape"])
    assert_like_mxnet(mx.nd.sparse.csr_matrix((2, 5)), DATA["from_shape"])
    assert_like_mxnet(mx.nd.sparse.csr_matrix(DENSE.astype(np.float64)), DATA["from_dense_float64"])
    assert_like_mxnet(mx.nd.sparse.zeros("csr", (2, 3)), DATA["zeros"])
    assert_like_mxnet(mx.nd.zeros((2, 3), stype="csr"), DATA["zeros"])
    copy = mx.nd.sparse.csr_matrix(mx.nd.array(DENSE).tostype("csr"), ctx=mx.cpu(1))
    assert copy.context == mx.cpu(1)
    assert_like_mxnet(copy, DATA["tostype"])
    assert_like_mxnet(mx.nd.sparse.array(copy), DATA["tostype"])


def test_coordinates_sum_repeats_as_scipy_does() -> None:
    # MXNet hands (data, (row, col)) to scipy, whose conversion sums repeated coordinates
    x = mx.nd.sparse.csr_matrix(([1.0, 2.0, 5.0], ([1, 0, 1], [2, 1, 2])), shape=(2, 3))
    assert x.indptr.asnumpy().tolist() == [0, 1, 2] and x.indices.asnumpy().tolist() == [1, 2]
    np.testing.assert_array_equal(x.asnumpy(), [[0, 2, 0], [0, 0, 6]])


@pytest.mark.parametrize("rows", ["1", "0:2", "1:3", "-1"])
def test_row_slices(rows: str) -> None:
    x = mx.nd.array(DENSE).tostype("csr")
    index: Any = int(rows) if ":" not in rows else slice(*(int(p) for p in rows.split(":")))
    assert_like_mxnet(x[index], DATA["rows"][rows])


def test_arithmetic() -> None:
    x, y = mx.nd.array(DENSE).tostype("csr"), mx.nd.array(OTHER).tostype("csr")
    assert_like_mxnet(x + y, DATA["add"])
    assert_like_mxnet(x - y, DATA["sub"])
    assert_like_mxnet(x * y, DATA["mul"])
    assert_like_mxnet(x * 2, DATA["mul_scalar"])
    assert_like_mxnet(x / 4, DATA["div_scalar"])
    assert_like_mxnet(-x, DATA["neg"])
    assert_like_mxnet(x + mx.nd.ones((3, 4)), DATA["add_dense"])


def test_copyto_and_assignment() -> None:
    x = mx.nd.array(DENSE).tostype("csr")
    dense = mx.nd.zeros((3, 4))
    x.copyto(dense)
    np.testing.assert_array_equal(dense.asnumpy(), DENSE)
    target = mx.nd.zeros((3, 4), stype="csr")
    mx.nd.array(OTHER).copyto(target)
    assert target.indptr.asnumpy().tolist() == [0, 2, 2, 4]
    np.testing.assert_array_equal(target.asnumpy(), OTHER)
    target[:] = x
    assert_like_mxnet(target, DATA["tostype"])
    with pytest.raises(SparseUnsupportedError, match="shape"):
        x.copyto(mx.nd.zeros((2, 2)))


def test_conversions_mxnet_refuses_are_refused() -> None:
    assert "not supported" in DATA["errors"]["csr_to_row_sparse"]
    assert "not supported" in DATA["errors"]["row_sparse_to_csr"]
    with pytest.raises(SparseUnsupportedError, match="from csr to row_sparse is not supported"):
        mx.nd.array(DENSE).tostype("csr").tostype("row_sparse")
    with pytest.raises(SparseUnsupportedError, match="from row_sparse to csr is not supported"):
        mx.nd.array(DENSE).tostype("row_sparse").tostype("csr")
    with pytest.raises(SparseUnsupportedError, match="invalid storage type 'coo'"):
        mx.nd.array(DENSE).tostype("coo")


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ((([1.0, 2.0], [2, 0], [0, 2, 2])), "columns of row 0 are not sorted"),
        ((([1.0, 2.0], [1, 1], [0, 2, 2])), "columns of row 0 are repeated"),
        ((([1.0, 2.0], [0, 5], [0, 1, 2])), "column 5 is out of range"),
        ((([1.0, 2.0], [0, 1], [0, 2, 1])), "never decrease"),
        ((([1.0], [0, 1], [0, 1, 2])), "1 values but indices has 2"),
        ((([1.0, 2.0], [0, 1], [0, 2])), "indptr has 2 entries but 2 rows need 3"),
    ],
)
def test_malformed_arrays_are_refused_when_made(arg: Any, message: str) -> None:
    # MXNet accepts them and computes with them wrongly (check_format finds them later)
    with pytest.raises(CSRError, match=message):
        mx.nd.sparse.csr_matrix(arg, shape=(2, 3))


@pytest.mark.parametrize("case", DATA["optimizers"], ids=[f"{c['name']}-{c['w_stype']}" for c in DATA["optimizers"]])
def test_optimizer_on_csr_matches_mxnet_fallback(case: dict[str, Any]) -> None:
    opt = mx.optimizer.create(case["optimizer"], **case["kwargs"])
    weight = mx.nd.array(DATA["optimizer_weight"]).tostype(case["w_stype"])
    state = opt.create_state_multi_precision(0, weight)
    for grad in DATA["optimizer_grads"]:
        opt.update_multi_precision(0, weight, mx.nd.array(grad).tostype("csr"), state)
    want = case["mxnet"]
    assert_like_mxnet(weight, want["weight"], tol=1e-6)
    leaves = [] if state is None else list(state) if isinstance(state, tuple) else [state]
    assert len(leaves) == len(want["state"])
    for got, expected in zip(leaves, want["state"]):
        np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-6, atol=1e-7)


def test_updater_on_a_csr_weight() -> None:
    # get_updater, as a training loop calls it, goes through the same fallback
    case = DATA["optimizers"][0]
    opt = mx.optimizer.create(case["optimizer"], **case["kwargs"])
    updater = mx.optimizer.get_updater(opt)
    weight = mx.nd.array(DATA["optimizer_weight"]).tostype("csr")
    for grad in DATA["optimizer_grads"]:
        updater(0, mx.nd.array(grad).tostype("csr"), weight)
    assert_like_mxnet(weight, case["mxnet"]["weight"], tol=1e-6)


@pytest.mark.parametrize("store_type", ["local", "device"])
def test_stores_refuse_csr_values(store_type: str) -> None:
    # MXNet 1.9.1 refuses a csr push; kvcli refuses init too rather than densify silently
    kv = mx.kv.create(store_type)
    x = mx.nd.array(DENSE).tostype("csr")
    with pytest.raises(ValueTypeError, match=r"key 0: a csr array cannot be stored .*tostype\('default'\)"):
        kv.init(0, x)
    kv.init(1, mx.nd.ones((3, 4)))
    with pytest.raises(ValueTypeError, match="key 1: a csr array cannot be stored"):
        kv.push(1, [x, x])
    out = mx.nd.zeros((3, 4))
    kv.pull(1, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 1.0)
