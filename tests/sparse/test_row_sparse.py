"""kvcli.arrays.sparse (the numpy core) and kvcli.mx.ndarray.sparse (the MXNet layer)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kvcli
import kvcli.mx as mx
import kvcli.mx.ndarray as nd
from kvcli.errors import DTypeMismatchError, SparseUnsupportedError, KeyTypeError, RowSparseError, ShapeMismatchError
from kvcli.arrays.summation import sum_into
from kvcli.arrays.sparse import RowSparse, check_row_ids, merge, sum_rows

from .conftest import assert_rsp


# ---------------------------------------------------------------------- the core
def test_valid_value_and_conversions() -> None:
    value = RowSparse([[1, 2], [3, 4]], [0, 3], (5, 2))
    assert value.indices.dtype == np.int64 and value.shape == (5, 2) and value.data.shape == (2, 2)
    np.testing.assert_array_equal(value.to_dense(), [[1, 2], [0, 0], [0, 0], [3, 4], [0, 0]])
    back = RowSparse.from_dense(value.to_dense())
    assert back == value
    empty = RowSparse.zeros((1_000_000, 64))
    assert empty.nbytes == 0 and empty.data.shape == (0, 64)
    assert RowSparse([1.0, 2.0], [1, 2], (4,)).to_dense().tolist() == [0, 1, 2, 0]  # 1-D


@pytest.mark.parametrize(
    ("indices", "match"),
    [([3, 1], "not sorted"), ([1, 1], "repeated"), ([1, 7], "row 7 is out of range"), ([-1, 2], "row -1"),
     ([0.5, 1], "whole numbers"), ([[0, 1]], "1-D")],
)
def test_malformed_indices_are_refused(indices: Any, match: str) -> None:
    with pytest.raises(RowSparseError, match=match):
        RowSparse(np.ones((2, 3)), indices, (4, 3))


def test_data_that_does_not_fit_is_refused() -> None:
    with pytest.raises(ShapeMismatchError, match=r"need data of shape \(3, 3\)"):
        RowSparse(np.ones((2, 3)), [0, 1, 2], (4, 3))
    with pytest.raises(ShapeMismatchError, match=r"need data of shape \(2, 5\)"):
        RowSparse(np.ones((2, 3)), [0, 1], (4, 5))
    with pytest.raises(ShapeMismatchError, match="at least one dimension"):
        RowSparse.zeros(())


def test_rows_lists_every_requested_row() -> None:
    value = RowSparse([[1, 2], [3, 4]], [1, 3], (6, 2))
    got = value.rows(check_row_ids([5, 3, 3, 0], 6, "test"))
    assert got.indices.tolist() == [0, 3, 5]
    np.testing.assert_array_equal(got.data, [[0, 0], [3, 4], [0, 0]])
    with pytest.raises(RowSparseError, match="row id 6 is out of range for 6 rows"):
        check_row_ids([6], 6, "test")


def test_row_sum_is_bit_for_bit_the_dense_sum() -> None:
    rng = np.random.default_rng(3)
    shape = (50, 7)
    values = []
    for _ in range(5):
        rows = np.sort(rng.choice(shape[0], rng.integers(1, 30), replace=False))
        data = (rng.standard_normal((len(rows), 7)) * 10.0 ** rng.integers(-6, 7, (len(rows), 1))).astype(np.float32)
        data[0, 0] = -0.0  # -0.0 + 0.0 is +0.0: missing rows must count as zeros
        values.append(RowSparse(data, rows, shape))
    summed = sum_rows(values)
    dense = sum_into(np.empty(shape, np.float32), [v.to_dense() for v in values])
    assert summed.indices.tolist() == sorted(set().union(*(v.indices.tolist() for v in values)))
    assert summed.to_dense().tobytes() == dense.tobytes()
    assert summed.data.tobytes() == dense[summed.indices].tobytes()


def test_merge_of_mixed_and_dense_values() -> None:
    a = RowSparse([[1.0, 1.0]], [0], (3, 2))
    mixed = merge([a, np.ones((3, 2))])
    assert isinstance(mixed, RowSparse) and mixed.indices.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(mixed.to_dense(), [[2, 2], [1, 1], [1, 1]])
    dense = merge([np.ones((3, 2)), np.ones((3, 2))])
    assert isinstance(dense, np.ndarray) and (dense == 2).all()


def test_numpy_operations_stay_sparse_or_refuse() -> None:
    a = RowSparse(np.ones((1, 2), np.float32), [1], (3, 2))
    b = RowSparse(np.full((1, 2), 2, np.float32), [2], (3, 2))
    np.add(a, b * 3, out=a)  # kvcli's scale-add updater does exactly this
    assert a.indices.tolist() == [1, 2] and a.data.tolist() == [[1, 1], [6, 6]]
    dense = np.zeros((3, 2), np.float32)
    dense += a
    np.testing.assert_array_equal(dense, a.to_dense())
    with pytest.raises(RowSparseError, match="numpy sqrt is not defined on row-sparse values"):
        np.sqrt(a)
    with pytest.raises(DTypeMismatchError):
        a += RowSparse(np.ones((1, 2), np.float64), [0], (3, 2))


# ---------------------------------------------------------------------- nd.sparse
def test_conversions_match_mxnet(reference: dict[str, Any]) -> None:
    conv = reference["conversions"]
    x = nd.array(np.asarray(conv["tostype"]["dense"], np.float32)).tostype("row_sparse")
    assert_rsp(x, conv["tostype"]["out"], (4, 3))
    np.testing.assert_array_equal(x.tostype("default").asnumpy(), conv["tostype"]["back"])
    z = nd.zeros((4, 3), stype="row_sparse")
    assert z.indices.asnumpy().tolist() == conv["zeros"]["indices"]
    assert list(z.data.shape) == conv["zeros"]["data_shape"] and np.dtype(z.dtype).name == conv["zeros"]["dtype"]
    a = nd.sparse.row_sparse_array((nd.array([[1, 2, 3], [4, 5, 6]]), nd.array([0, 2])), shape=(4, 3))
    b = nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [1, 2]), shape=(4, 3))
    assert_rsp(a + b, conv["sum"], (4, 3))
    assert_rsp(a - b, conv["difference"], (4, 3))
    assert (a * 2).stype == conv["scaled"]["stype"]
    assert_rsp(a * 2, conv["scaled"], (4, 3))
    for result, key in ((a - 1, "minus_scalar"), (a + nd.ones((4, 3)), "plus_dense")):
        assert result.stype == conv[key]["stype"]
        np.testing.assert_array_equal(result.asnumpy(), conv[key]["dense"])
    implied = nd.sparse.row_sparse_array((nd.ones((2, 3)), nd.array([0, 2], dtype="int64")))
    assert list(implied.shape) == conv["implied_shape"]
    assert np.dtype(nd.sparse.row_sparse_array((np.ones((1, 3)), [0]), shape=(4, 3)).dtype).name == conv["dtype_numpy64"]
    assert np.dtype(nd.sparse.row_sparse_array(([[1, 2, 3]], [0]), shape=(4, 3)).dtype).name == conv["dtype_list"]
    assert np.dtype(a.indices.dtype).name == conv["indices_dtype"]
    out = nd.zeros((4, 3))
    assert a.copyto(out) is out
    np.testing.assert_array_equal(out.asnumpy(), conv["copyto_dense"])


def test_row_sparse_ndarray_api() -> None:
    a = mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [0, 2]), shape=(4, 3), ctx=mx.cpu(1))
    assert (a.stype, a.shape, a.dtype, a.context) == ("row_sparse", (4, 3), np.float32, mx.cpu(1))
    assert mx.nd.ones((2, 2)).stype == "default"
    moved = a.copyto(mx.gpu(0))
    assert moved.context == mx.gpu(0) and moved.stype == "row_sparse" and moved is not a
    into = mx.nd.sparse.zeros("row_sparse", (4, 3))
    a.copyto(into)
    assert into.indices.asnumpy().tolist() == [0, 2]
    dense_into = mx.nd.sparse.zeros("row_sparse", (4, 3))
    assert mx.nd.array([[0, 0, 0], [1, 2, 3], [0, 0, 0], [0, 0, 0]]).copyto(dense_into) is dense_into
    assert dense_into.indices.asnumpy().tolist() == [1] and dense_into.data.asnumpy().tolist() == [[1, 2, 3]]
    a += a
    assert a.data.asnumpy().tolist() == [[2, 2, 2], [2, 2, 2]]
    assert a[:] is a and a.astype("float64").dtype == np.float64
    with pytest.raises(SparseUnsupportedError, match="only x"):
        a[1]
    with pytest.raises(SparseUnsupportedError, match="from row_sparse to csr is not supported"):  # as MXNet
        a.tostype("csr")
    with pytest.raises(ValueError, match="unknown storage type 'foo'"):
        mx.nd.zeros((2, 2), stype="foo")
    assert mx.nd.sparse is mx.ndarray.sparse


# ---------------------------------------------------------------------- stores
def test_builtin_updaters_on_a_row_sparse_key(store_type: str) -> None:
    with kvcli.create(store_type) as kv:
        kv.init("e", RowSparse(np.ones((1, 2), np.float32), [1], (4, 2)))
        kv.set_updater("scale-add:2")
        kv.push("e", [RowSparse(np.ones((1, 2), np.float32), [3], (4, 2))] * 2)
        value = kv.pull("e")
        assert isinstance(value, RowSparse) and value.indices.tolist() == [1, 3]
        np.testing.assert_array_equal(value.data, [[1, 1], [4, 4]])


def test_pull_without_out_and_view(store_type: str) -> None:
    with kvcli.create(store_type) as kv:
        kv.init(1, RowSparse(np.arange(4, dtype=np.float32).reshape(2, 2), [0, 2], (3, 2)))
        assert kv.info(1).stype == "row_sparse"
        np.testing.assert_array_equal(kv.view(1), [[0, 1], [0, 0], [2, 3]])
        rows = kv.row_sparse_pull(1, row_ids=[2])
        assert rows.indices.tolist() == [2] and rows.data.tolist() == [[2, 3]]


def test_reinit_changes_storage_type(store_type: str) -> None:
    with kvcli.create(store_type) as kv:
        kv.init("k", np.ones((3, 2), np.float32))
        kv.init("k", RowSparse.zeros((3, 2)))
        assert kv.info("k").stype == "row_sparse"
        kv.init("k", np.full((3, 2), 5, np.float32))
        assert kv.info("k").stype == "default" and (kv.pull("k") == 5).all()
        kv.delete("k")
        assert not kv.has("k")


def test_bad_pushes_change_nothing(store_type: str) -> None:
    with kvcli.create(store_type) as kv:
        kv.init("e", RowSparse(np.ones((1, 2), np.float32), [1], (4, 2)))
        good = RowSparse(np.ones((1, 2), np.float32), [0], (4, 2))
        with pytest.raises(ShapeMismatchError, match=r"value 1 of 2.*shape \(5, 2\)"):
            kv.push("e", [good, RowSparse.zeros((5, 2))])
        with pytest.raises(DTypeMismatchError, match="dtype float64"):
            kv.push("e", [good, RowSparse(np.ones((1, 2)), [0], (4, 2))])
        assert kv.pull("e").indices.tolist() == [1]


def test_a_session_refuses_row_sparse_values(tmp_path: Any) -> None:
    from kvcli.session import Session

    session = Session("sparse", home=tmp_path)
    with pytest.raises(KeyTypeError, match="a session stores dense values, not row-sparse ones"):
        session.init(["e"], [mx.nd.zeros((3, 2), stype="row_sparse")])
    assert session.keys() == []


@pytest.mark.parametrize("store_type", ["local", "device"])
def test_a_row_sparse_pull_back_of_a_sparse_push_lists_the_rows_pushed(store_type: str) -> None:
    # Gluon's sparse-gradient loop: push row-sparse gradients to a dense key (no updater),
    # pull them back into row-sparse arrays. MXNet's key then holds the row-sparse sum, so
    # a row pushed with zeros (a padding row) is listed; a lazy optimizer updates it after.
    kv = kvcli.create(store_type)
    kv.init(0, np.ones((4, 2), np.float32))
    grad = RowSparse(np.array([[0, 0], [1, 1]], np.float32), [1, 2], (4, 2))
    kv.push(0, [grad, grad])
    out = RowSparse.zeros((4, 2))
    kv.pull(0, out=out, ignore_sparse=False)
    assert out.indices.tolist() == [1, 2] and out.data.tolist() == [[0, 0], [2, 2]]
    kv.push(0, np.array([[0, 0], [0, 0], [3, 3], [0, 0]], np.float32))  # a dense push: non-zero rows again
    kv.pull(0, out=out, ignore_sparse=False)
    assert out.indices.tolist() == [2] and out.data.tolist() == [[3, 3]]
    kv.push(0, [grad, grad])
    kv.init(0, np.zeros((4, 2), np.float32))  # re-init forgets the pushed rows
    kv.pull(0, out=out, ignore_sparse=False)
    assert out.indices.tolist() == []
    kv.close()
