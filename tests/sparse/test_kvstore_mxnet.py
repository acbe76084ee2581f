"""The sparse parts of MXNet 1.9.1's test_kvstore.py, on kvcli's local and device stores,
against the numbers real MXNet produced (tests/data/mxnet_sparse_reference.json).

(test_kvstore_custom.py has no row-sparse cases.)
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.errors import RowSparseError, ShapeMismatchError, StoreError

from .conftest import assert_rsp, rsp

SHAPE = (4, 4)
KEYS = [5, 7, 11]
STR_KEYS = ["b", "c", "d"]
DEVS = [mx.Context("cpu", i) for i in range(4)]


def init_kv(kv: Any, stype: str, str_keys: bool = False) -> Any:
    first, rest = ("a", STR_KEYS) if str_keys else (3, KEYS)
    kv.init(first, mx.nd.zeros(SHAPE, stype=stype))
    kv.init(rest, [mx.nd.zeros(shape=SHAPE, stype=stype)] * len(rest))
    return kv


def test_push_row_sparse_to_dense_keys(make_kv: Any, ref: dict[str, Any]) -> None:
    kv = init_kv(make_kv(), "default")
    kv.push(3, mx.nd.ones(SHAPE).tostype("row_sparse"))
    out = mx.nd.empty(SHAPE)
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), ref["push_rsp_to_dense"]["single"])
    kv.push(KEYS, [mx.nd.ones(SHAPE).tostype("row_sparse") * 4] * len(KEYS))
    outs = [mx.nd.empty(SHAPE) for _ in KEYS]
    kv.pull(KEYS, out=outs)
    np.testing.assert_array_equal([o.asnumpy() for o in outs], ref["push_rsp_to_dense"]["list"])


def test_aggregate_row_sparse_from_four_devices(make_kv: Any, ref: dict[str, Any]) -> None:
    kv = init_kv(make_kv(), "default", str_keys=True)
    kv.push("a", [mx.nd.ones(SHAPE, d).tostype("row_sparse") for d in DEVS])
    outs = [mx.nd.empty(SHAPE, d) for d in DEVS]
    kv.pull("a", out=outs)
    np.testing.assert_array_equal([o.asnumpy() for o in outs], ref["aggregate_rsp_to_dense"]["single"])
    kv.push(STR_KEYS, [[mx.nd.ones(SHAPE, d).tostype("row_sparse") * 2.0 for d in DEVS]] * len(STR_KEYS))
    louts = [[mx.nd.empty(SHAPE, d) for d in DEVS] for _ in STR_KEYS]
    kv.pull(STR_KEYS, out=louts)
    np.testing.assert_array_equal(
        [[o.asnumpy() for o in row] for row in louts], ref["aggregate_rsp_to_dense"]["list"]
    )


@pytest.mark.parametrize("stored_stype", ["default", "row_sparse"])
def test_updater_sees_row_sparse_input(make_kv: Any, ref: dict[str, Any], stored_stype: str) -> None:
    expected = ref[f"updater_{stored_stype}_key"]
    seen: list[dict[str, Any]] = []

    def updater(key: Any, recv: Any, local: Any) -> None:
        value = (
            {"indices": recv.indices.asnumpy().tolist(), "data": recv.data.asnumpy().tolist()}
            if recv.stype == "row_sparse" else {"dense": recv.asnumpy().tolist()}
        )
        seen.append({
            "recv": type(recv).__name__, "recv_stype": recv.stype, "local": type(local).__name__,
            "local_stype": local.stype, "recv_value": value,
        })
        local += recv

    kv = init_kv(make_kv(), stored_stype)
    kv._set_updater(updater)
    g1 = mx.nd.sparse.row_sparse_array((np.ones((1, 4), np.float32), [0]), shape=SHAPE, ctx=DEVS[0])
    g2 = mx.nd.sparse.row_sparse_array((np.array([[2] * 4, [3] * 4], np.float32), [0, 2]), shape=SHAPE, ctx=DEVS[1])
    kv.push(3, [g1, g2])
    kv.push(3, [g1, mx.nd.ones(SHAPE, DEVS[1])])
    kv.push(3, mx.nd.ones(SHAPE))
    for _ in range(4):
        kv.push(KEYS, [[mx.nd.ones(SHAPE, d).tostype("row_sparse") for d in DEVS]] * len(KEYS))
    assert seen[:3] == expected["seen"]
    if stored_stype == "default":
        pulled, listed = mx.nd.empty(SHAPE), [mx.nd.empty(SHAPE) for _ in KEYS]
        kv.pull(3, out=pulled)
        kv.pull(KEYS, out=listed)
    else:
        pulled = mx.nd.sparse.zeros("row_sparse", SHAPE)
        listed = [mx.nd.sparse.zeros("row_sparse", SHAPE) for _ in KEYS]
        kv.pull(3, out=pulled, ignore_sparse=False)
        kv.pull(KEYS, out=listed, ignore_sparse=False)
    np.testing.assert_array_equal(pulled.asnumpy(), expected["key3"])
    np.testing.assert_array_equal([o.asnumpy() for o in listed], expected["keys"])


def test_row_sparse_pull_one_and_four_outputs(make_kv: Any, ref: dict[str, Any]) -> None:
    kv = init_kv(make_kv(), "row_sparse", str_keys=True)
    kv.init("e", mx.nd.ones(SHAPE).tostype("row_sparse"))
    for case in ref["row_sparse_pull"]:
        count = len(case["row_ids"])
        vals = [mx.nd.zeros(SHAPE).tostype("row_sparse") for _ in range(count)]
        ids = [mx.nd.array(r).reshape((2, 2)) for r in case["row_ids"]]  # float ids, as MXNet's test
        kv.row_sparse_pull("e", out=vals[0] if count == 1 else vals, row_ids=ids[0] if count == 1 else ids)
        for val, expected in zip(vals, case["outs"]):
            assert_rsp(val, expected, SHAPE)


@pytest.mark.parametrize("case_index", [0, 1], ids=["pull-ignore_sparse-False", "row_sparse_pull"])
def test_sparse_aggregator(make_kv: Any, ref: dict[str, Any], case_index: int) -> None:
    case = ref["sparse_aggregator"][case_index]
    kv = init_kv(make_kv(), "row_sparse", str_keys=True)
    all_rows = mx.nd.array(np.arange(SHAPE[0]))
    vals = [rsp(v, SHAPE).copyto(DEVS[i]) for i, v in enumerate(case["single_in"])]
    kv.push("a", vals)
    if case["sparse_pull"]:
        kv.row_sparse_pull("a", out=vals, row_ids=[all_rows] * len(vals))
    else:
        kv.pull("a", out=vals, ignore_sparse=False)
    for val, expected in zip(vals, case["single_out"]):
        assert_rsp(val, expected, SHAPE)
    assert all(v.context == d for v, d in zip(vals, DEVS))
    lvals = [[rsp(v, SHAPE).copyto(DEVS[i]) for i, v in enumerate(case["list_in"])] for _ in STR_KEYS]
    kv.push(STR_KEYS, lvals)
    if case["sparse_pull"]:
        kv.row_sparse_pull(STR_KEYS, out=lvals, row_ids=[[all_rows] * 4] * len(STR_KEYS))
    else:
        kv.pull(STR_KEYS, out=lvals, ignore_sparse=False)
    for row, expected_row in zip(lvals, case["list_out"]):
        for val, expected in zip(row, expected_row):
            assert_rsp(val, expected, SHAPE)


def test_invalid_pull(make_kv: Any, ref: dict[str, Any]) -> None:
    expected = ref["invalid_pull"]
    kv = init_kv(make_kv(), "default")
    rsp_out = (mx.nd.ones(SHAPE) * 2).tostype("row_sparse")
    with pytest.warns(UserWarning, match="skipped 1 row-sparse output"):
        kv.pull(3, out=rsp_out)  # ignored, as in MXNet
    np.testing.assert_array_equal(rsp_out.asnumpy(), expected["ignored_single"])
    rsp_outs = [(mx.nd.ones(SHAPE) * 2).tostype("row_sparse") for _ in KEYS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kv.pull(KEYS, out=rsp_outs)
    np.testing.assert_array_equal([o.asnumpy() for o in rsp_outs], expected["ignored_list"])
    # MXNet raises for each of these (recorded: its messages); kvcli raises one clear error
    assert "Expected row_sparse storage type" in expected["dense_out_single"]
    dense = mx.nd.ones(SHAPE) * 2
    with pytest.raises(RowSparseError, match=r"row_sparse_pull of key 3: the output is dense"):
        kv.row_sparse_pull(3, out=dense, row_ids=mx.nd.array([1]))
    assert expected["dense_out_list"] is not None
    with pytest.raises(RowSparseError, match="the output is dense"):
        kv.row_sparse_pull(KEYS, out=[mx.nd.ones(SHAPE) * 2] * 3, row_ids=[mx.nd.array([1])] * 3)
    assert "PullRowSparse expects row_sparse src" in expected["dense_key"]
    with pytest.raises(RowSparseError, match="the key holds a dense value"):
        kv.row_sparse_pull(3, out=mx.nd.sparse.zeros("row_sparse", SHAPE), row_ids=mx.nd.array([1]))
    np.testing.assert_array_equal(dense.asnumpy(), 2 * np.ones(SHAPE))
    # check_invalid_key_types: a str key on an int-keyed store is refused here too
    with pytest.raises(StoreError):
        kv.row_sparse_pull("b", out=rsp_out, row_ids=mx.nd.array([1]))
    with pytest.raises(StoreError):
        kv.row_sparse_pull(STR_KEYS, out=rsp_outs, row_ids=[mx.nd.array([1])] * 3)
    np.testing.assert_array_equal(rsp_out.asnumpy(), expected["ignored_single"])


def test_edges(make_kv: Any, ref: dict[str, Any]) -> None:
    edge = ref["edges"]
    kv = make_kv()
    kv.init("w", rsp(edge["stored"], SHAPE))
    for label in ("unsorted_repeated", "absent_rows", "empty"):
        out = mx.nd.sparse.zeros("row_sparse", SHAPE)
        kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array(edge[label]["row_ids"], dtype="int64"))
        assert_rsp(out, edge[label]["out"], SHAPE)
    dense = mx.nd.ones(SHAPE) * 7
    kv.pull("w", out=dense)
    np.testing.assert_array_equal(dense.asnumpy(), edge["pull_into_dense"])
    out = mx.nd.sparse.zeros("row_sparse", SHAPE)
    with pytest.warns(UserWarning):
        kv.pull("w", out=out)
    assert_rsp(out, edge["pull_into_rsp_ignored"], SHAPE)
    kv.pull("w", out=out, ignore_sparse=False)
    assert_rsp(out, edge["pull_into_rsp"], SHAPE)
    grads = edge["push_replaces"]["grads"]
    kv.push("w", [rsp(grads[0], SHAPE, DEVS[0]), rsp(grads[1], SHAPE, DEVS[1])])
    out = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array(np.arange(4)))
    assert_rsp(out, edge["push_replaces"]["out"], SHAPE)


def test_wrong_shapes_and_row_ids_are_refused(make_kv: Any, ref: dict[str, Any]) -> None:
    edge = ref["edges"]
    kv = make_kv()
    kv.init("w", rsp(edge["stored"], SHAPE))
    before = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.row_sparse_pull("w", out=before, row_ids=np.arange(4))
    # MXNet's local store refuses both; its device store accepts them (recorded: None)
    with pytest.raises(ShapeMismatchError, match=r"push of key 'w': shape \(5, 4\)"):
        kv.push("w", mx.nd.sparse.zeros("row_sparse", (5, 4)))
    out = mx.nd.sparse.zeros("row_sparse", (5, 4))
    with pytest.raises(ShapeMismatchError, match=r"row_sparse_pull of key 'w': shape \(5, 4\)"):
        kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array([1]))
    # MXNet keeps an out-of-range id as a garbage row (recorded); kvcli refuses it
    assert edge["out_of_range_row_id"]["indices"] in ([7], [])
    good = mx.nd.sparse.zeros("row_sparse", SHAPE)
    outs = [good, mx.nd.sparse.zeros("row_sparse", SHAPE)]
    for bad, match in (([7], "row id 7 is out of range for 4 rows"), ([-1], "row id -1 is out of range"),
                       ([0.5], "whole numbers")):
        with pytest.raises(RowSparseError, match=match):
            kv.row_sparse_pull("w", out=outs, row_ids=[mx.nd.array([0]), mx.nd.array(bad)])
    with pytest.raises(Exception, match="needs row_ids"):
        kv.row_sparse_pull("w", out=good)
    assert good.indices.asnumpy().tolist() == [] and outs[1].indices.asnumpy().tolist() == []
    after = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.row_sparse_pull("w", out=after, row_ids=np.arange(4))
    np.testing.assert_array_equal(after.asnumpy(), before.asnumpy())


def test_row_wise_sum_matches_mxnet_and_dense_sum(make_kv: Any, ref: dict[str, Any]) -> None:
    from kvcli.arrays.summation import sum_into

    case = ref["row_sum"]
    kv = make_kv()
    kv.init("s", mx.nd.sparse.zeros("row_sparse", SHAPE))
    grads = [rsp(g, SHAPE, DEVS[i]) for i, g in enumerate(case["grads"])]
    kv.push("s", grads)
    out = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.row_sparse_pull("s", out=out, row_ids=np.arange(4))
    assert out.indices.asnumpy().tolist() == case["out"]["indices"]
    np.testing.assert_array_equal(out.data.asnumpy(), np.asarray(case["out"]["data"], np.float32))  # bit for bit
    dense = [g.asnumpy() for g in grads]
    np.testing.assert_array_equal(out.asnumpy(), sum_into(np.empty(SHAPE, np.float32), dense))
