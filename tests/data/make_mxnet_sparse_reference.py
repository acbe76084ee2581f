"""Record MXNet 1.9.1's row-sparse KVStore behaviour into mxnet_sparse_reference.json.

Run with a Python that has mxnet 1.9.1 (never kvcli's own venv):

    $MXNET_PYTHON tests/data/make_mxnet_sparse_reference.py

Every input (arrays, row ids) is written next to MXNet's output, so tests/sparse replays the
same cases on kvcli without needing MXNet or its random numbers. The cases follow the sparse
parts of MXNet's tests/python/unittest/test_kvstore.py (test_kvstore_custom.py has none) plus
the edge cases kvcli must match or deliberately refuse.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).with_name("mxnet_sparse_reference.json")
SHAPE = (4, 4)
KEYS = [5, 7, 11]
STR_KEYS = ["b", "c", "d"]
DEVICES = 4
rng = np.random.RandomState(91)


def rsp(data, indices, shape=SHAPE, ctx=None):
    return mx.nd.sparse.row_sparse_array(
        (mx.nd.array(np.asarray(data, np.float32)), mx.nd.array(indices, dtype="int64")), shape=shape, ctx=ctx
    )


def dump_rsp(x):
    return {"indices": x.indices.asnumpy().tolist(), "data": x.data.asnumpy().tolist()}


def dump_value(x):
    return dump_rsp(x) if x.stype == "row_sparse" else {"dense": x.asnumpy().tolist()}


def random_rsp(rows):
    indices = np.sort(rng.choice(SHAPE[0], rows, replace=False))
    data = rng.standard_normal((rows, SHAPE[1])).astype(np.float32) * np.float32(10.0) ** rng.randint(-3, 4, (rows, 1))
    return {"indices": indices.tolist(), "data": data.astype(np.float32).tolist()}


def from_case(v, ctx=None):
    return rsp(v["data"], v["indices"], ctx=ctx)


def raises(fn):
    try:
        fn()
    except mx.base.MXNetError as error:
        lines = [line for line in str(error).splitlines() if "Check failed" in line or "Error" in line]
        return lines[-1].strip() if lines else "MXNetError"
    return None


def init_kv(name, stype, str_keys=False):
    kv = mx.kv.create(name)
    first, rest = ("a", STR_KEYS) if str_keys else (3, KEYS)
    kv.init(first, mx.nd.zeros(SHAPE, stype=stype))
    kv.init(rest, [mx.nd.zeros(SHAPE, stype=stype)] * len(rest))
    return kv


def record(name: str) -> dict:
    cases: dict = {}
    devs = [mx.Context("cpu", i) for i in range(DEVICES)]

    # -- row-sparse pushes to dense keys (test_single_kv_pair / list / aggregator) ------
    kv = init_kv(name, "default")
    kv.push(3, mx.nd.ones(SHAPE).tostype("row_sparse"))
    out = mx.nd.empty(SHAPE)
    kv.pull(3, out=out)
    kv.push(KEYS, [mx.nd.ones(SHAPE).tostype("row_sparse") * 4] * len(KEYS))
    outs = [mx.nd.empty(SHAPE) for _ in KEYS]
    kv.pull(KEYS, out=outs)
    cases["push_rsp_to_dense"] = {"single": out.asnumpy().tolist(), "list": [o.asnumpy().tolist() for o in outs]}

    kv = init_kv(name, "default", str_keys=True)
    kv.push("a", [mx.nd.ones(SHAPE, d).tostype("row_sparse") for d in devs])
    outs = [mx.nd.empty(SHAPE, d) for d in devs]
    kv.pull("a", out=outs)
    kv.push(STR_KEYS, [[mx.nd.ones(SHAPE, d).tostype("row_sparse") * 2.0 for d in devs]] * len(STR_KEYS))
    louts = [[mx.nd.empty(SHAPE, d) for d in devs] for _ in STR_KEYS]
    kv.pull(STR_KEYS, out=louts)
    cases["aggregate_rsp_to_dense"] = {
        "single": [o.asnumpy().tolist() for o in outs],
        "list": [[o.asnumpy().tolist() for o in row] for row in louts],
    }

    # -- the updater sees a row-sparse input (test_updater with row_sparse) ---------------
    seen = []

    def updater(key, recv, local):
        seen.append({
            "recv": type(recv).__name__, "recv_stype": recv.stype, "local": type(local).__name__,
            "local_stype": local.stype, "recv_value": dump_value(recv),
        })
        local += recv

    for stored_stype in ("default", "row_sparse"):
        seen.clear()
        kv = init_kv(name, stored_stype)
        kv._set_updater(updater)
        g1 = rsp([[1, 1, 1, 1]], [0], ctx=devs[0])
        g2 = rsp([[2, 2, 2, 2], [3, 3, 3, 3]], [0, 2], ctx=devs[1])
        kv.push(3, [g1, g2])
        kv.push(3, [g1, mx.nd.ones(SHAPE, devs[1])])  # mixed storage types
        kv.push(3, mx.nd.ones(SHAPE))  # dense only
        for _ in range(4):
            kv.push(KEYS, [[mx.nd.ones(SHAPE, d).tostype("row_sparse") for d in devs]] * len(KEYS))
        if stored_stype == "default":
            pulled = mx.nd.empty(SHAPE)
            kv.pull(3, out=pulled)
            listed = [mx.nd.empty(SHAPE) for _ in KEYS]
            kv.pull(KEYS, out=listed)
        else:
            pulled = mx.nd.sparse.zeros("row_sparse", SHAPE)
            kv.pull(3, out=pulled, ignore_sparse=False)
            listed = [mx.nd.sparse.zeros("row_sparse", SHAPE) for _ in KEYS]
            kv.pull(KEYS, out=listed, ignore_sparse=False)
        cases[f"updater_{stored_stype}_key"] = {
            "seen": seen[:3],
            "key3": pulled.asnumpy().tolist(),
            "keys": [o.asnumpy().tolist() for o in listed],
        }

    # -- row_sparse_pull (test_row_sparse_pull) --------------------------------------------
    kv = init_kv(name, "row_sparse", str_keys=True)
    kv.init("e", mx.nd.ones(SHAPE).tostype("row_sparse"))
    pulls = []
    for count in (1, 4):
        row_ids = [rng.randint(SHAPE[0], size=SHAPE[0]).reshape(2, 2) for _ in range(count)]
        vals = [mx.nd.zeros(SHAPE).tostype("row_sparse") for _ in range(count)]
        ids = [mx.nd.array(r).reshape((2, 2)) for r in row_ids]
        kv.row_sparse_pull("e", out=vals[0] if count == 1 else vals, row_ids=ids[0] if count == 1 else ids)
        pulls.append({"row_ids": [r.tolist() for r in row_ids], "outs": [dump_rsp(v) for v in vals]})
    cases["row_sparse_pull"] = pulls

    # -- test_sparse_aggregator: 4 devices push random row-sparse values -------------------
    agg = []
    for sparse_pull in (False, True):
        kv = init_kv(name, "row_sparse", str_keys=True)
        single = [random_rsp(rng.randint(1, SHAPE[0] + 1)) for _ in range(DEVICES)]
        vals = [from_case(v, devs[i]) for i, v in enumerate(single)]
        kv.push("a", vals)
        if sparse_pull:
            kv.row_sparse_pull("a", out=vals, row_ids=[mx.nd.array(np.arange(SHAPE[0]))] * DEVICES)
        else:
            kv.pull("a", out=vals, ignore_sparse=False)
        single_out = [dump_rsp(v) for v in vals]
        listed = [random_rsp(rng.randint(1, SHAPE[0] + 1)) for _ in range(DEVICES)]
        lvals = [[from_case(v, devs[i]) for i, v in enumerate(listed)] for _ in STR_KEYS]
        kv.push(STR_KEYS, lvals)
        if sparse_pull:
            kv.row_sparse_pull(STR_KEYS, out=lvals, row_ids=[[mx.nd.array(np.arange(SHAPE[0]))] * DEVICES] * len(STR_KEYS))
        else:
            kv.pull(STR_KEYS, out=lvals, ignore_sparse=False)
        agg.append({
            "sparse_pull": sparse_pull, "single_in": single, "single_out": single_out,
            "list_in": listed, "list_out": [[dump_rsp(v) for v in row] for row in lvals],
        })
    cases["sparse_aggregator"] = agg

    # -- test_invalid_pull ---------------------------------------------------------------
    kv = init_kv(name, "default")
    rsp_out = (mx.nd.ones(SHAPE) * 2).tostype("row_sparse")
    kv.pull(3, out=rsp_out)
    rsp_outs = [(mx.nd.ones(SHAPE) * 2).tostype("row_sparse") for _ in KEYS]
    kv.pull(KEYS, out=rsp_outs)
    cases["invalid_pull"] = {
        "ignored_single": rsp_out.asnumpy().tolist(),
        "ignored_list": [o.asnumpy().tolist() for o in rsp_outs],
        "dense_out_single": raises(lambda: kv.row_sparse_pull(3, out=mx.nd.ones(SHAPE) * 2, row_ids=mx.nd.array([1]))),
        "dense_out_list": raises(lambda: kv.row_sparse_pull(
            KEYS, out=[mx.nd.ones(SHAPE) * 2] * len(KEYS), row_ids=[mx.nd.array([1])] * len(KEYS))),
        "dense_key": raises(lambda: kv.row_sparse_pull(
            3, out=mx.nd.sparse.zeros("row_sparse", SHAPE), row_ids=mx.nd.array([1]))),
    }

    # -- semantics and edge cases -----------------------------------------------------------
    kv = mx.kv.create(name)
    stored = {"indices": [1, 3], "data": [[1, 2, 3, 4], [5, 6, 7, 8]]}
    kv.init("w", from_case(stored))
    edge: dict = {"stored": stored}
    for label, ids in (("unsorted_repeated", [3, 0, 3, 1]), ("absent_rows", [0, 2]), ("empty", [])):
        o = mx.nd.sparse.zeros("row_sparse", SHAPE)
        kv.row_sparse_pull("w", out=o, row_ids=mx.nd.array(ids, dtype="int64"))
        edge[label] = {"row_ids": ids, "out": dump_rsp(o)}
    dense = mx.nd.ones(SHAPE) * 7
    kv.pull("w", out=dense)
    edge["pull_into_dense"] = dense.asnumpy().tolist()
    r = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.pull("w", out=r)
    edge["pull_into_rsp_ignored"] = dump_rsp(r)
    kv.pull("w", out=r, ignore_sparse=False)
    edge["pull_into_rsp"] = dump_rsp(r)
    g = [{"indices": [0], "data": [[1, 1, 1, 1]]}, {"indices": [0, 2], "data": [[2, 2, 2, 2], [3, 3, 3, 3]]}]
    kv.push("w", [from_case(g[0], devs[0]), from_case(g[1], devs[1])])
    o = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.row_sparse_pull("w", out=o, row_ids=mx.nd.array(np.arange(4)))
    edge["push_replaces"] = {"grads": g, "out": dump_rsp(o)}
    edge["push_wrong_shape"] = raises(lambda: (kv.push("w", mx.nd.sparse.zeros("row_sparse", (5, 4))), mx.nd.waitall()))
    edge["pull_wrong_shape_out"] = raises(lambda: (kv.row_sparse_pull(
        "w", out=mx.nd.sparse.zeros("row_sparse", (5, 4)), row_ids=mx.nd.array([1])), mx.nd.waitall()))
    o = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.row_sparse_pull("w", out=o, row_ids=mx.nd.array([7], dtype="int64"))
    edge["out_of_range_row_id"] = dump_rsp(o)  # MXNet: accepted, garbage row id kept
    cases["edges"] = edge

    # -- the row-wise sum of many devices, bit for bit ------------------------------------
    kv = mx.kv.create(name)
    kv.init("s", mx.nd.sparse.zeros("row_sparse", SHAPE))
    grads = [random_rsp(rng.randint(1, SHAPE[0] + 1)) for _ in range(DEVICES)]
    kv.push("s", [from_case(v, devs[i]) for i, v in enumerate(grads)])
    o = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.row_sparse_pull("s", out=o, row_ids=mx.nd.array(np.arange(SHAPE[0])))
    cases["row_sum"] = {"grads": grads, "out": dump_rsp(o)}
    return cases


def conversions() -> dict:
    dense = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 0], [2, 2, 2]], np.float32)
    x = mx.nd.array(dense).tostype("row_sparse")
    a = rsp([[1, 2, 3], [4, 5, 6]], [0, 2], shape=(4, 3))
    b = rsp([[1, 1, 1], [1, 1, 1]], [1, 2], shape=(4, 3))
    z = mx.nd.zeros((4, 3), stype="row_sparse")
    return {
        "tostype": {"dense": dense.tolist(), "out": dump_rsp(x), "back": x.tostype("default").asnumpy().tolist()},
        "zeros": {"indices": z.indices.asnumpy().tolist(), "data_shape": list(z.data.shape), "dtype": str(np.dtype(z.dtype))},
        "sum": dump_rsp(a + b),
        "difference": dump_rsp(a - b),
        "scaled": {"stype": (a * 2).stype, **dump_rsp(a * 2)},
        "minus_scalar": {"stype": (a - 1).stype, "dense": (a - 1).asnumpy().tolist()},
        "plus_dense": {"stype": (a + mx.nd.ones((4, 3))).stype, "dense": (a + mx.nd.ones((4, 3))).asnumpy().tolist()},
        "implied_shape": list(mx.nd.sparse.row_sparse_array((mx.nd.ones((2, 3)), mx.nd.array([0, 2], dtype="int64"))).shape),
        "dtype_numpy64": str(np.dtype(mx.nd.sparse.row_sparse_array((np.ones((1, 3)), [0]), shape=(4, 3)).dtype)),
        "dtype_list": str(np.dtype(mx.nd.sparse.row_sparse_array(([[1, 2, 3]], [0]), shape=(4, 3)).dtype)),
        "indices_dtype": str(np.dtype(a.indices.dtype)),
        "copyto_dense": (lambda o: (a.copyto(o), o.asnumpy().tolist())[1])(mx.nd.zeros((4, 3))),
    }


def main() -> None:
    reference = {
        "mxnet": mx.__version__,
        "shape": list(SHAPE),
        "keys": KEYS,
        "str_keys": STR_KEYS,
        "devices": DEVICES,
        "stores": {name: record(name) for name in ("local", "device")},
        "conversions": conversions(),
    }
    OUT.write_text(json.dumps(reference, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
