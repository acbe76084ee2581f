"""KVStore usage beyond the basics: str and int keys in separate stores, lists of keys with one
value each, row_sparse_pull with a list of row_ids for a list of outputs, the store's
attributes, 2-bit compression with small and large thresholds and negative gradients, int and
float16 values, pushes of sums and overwrites, and an updater set with set_updater."""
import numpy as np
import mxnet as mx

nd = mx.nd


def show(tag, arrs):
    if not isinstance(arrs, (list, tuple)):
        arrs = [arrs]
    print(tag, [(str(a.dtype), a.shape, a.asnumpy().tolist()) for a in arrs])


for kvtype in ("local", "device"):
    kv = mx.kv.create(kvtype)
    print(kvtype, "type", kv.type, "rank", kv.rank, "num_workers", kv.num_workers)
    keys = ["w%d" % i for i in range(4)]
    kv.init(keys, [nd.ones((2, 2)) * i for i in range(4)])
    kv.push(keys[1:3], [nd.ones((2, 2)) * 10, nd.ones((2, 2)) * -1])
    outs = [nd.zeros((2, 2)) for _ in keys]
    kv.pull(keys, out=outs)
    show(kvtype + " str list", outs)
    # the same key twice in one push: MXNet sums both
    kv.push(["w0", "w0"], [nd.ones((2, 2)), nd.ones((2, 2)) * 2])
    o = nd.zeros((2, 2))
    kv.pull("w0", out=o)
    show(kvtype + " dup key push", o)
    # one key into several outputs
    o2 = [nd.zeros((2, 2), ctx=mx.cpu(i)) for i in range(3)]
    kv.pull("w3", out=o2)
    show(kvtype + " pull many", o2)

    # float16 and int values
    kvi = mx.kv.create(kvtype)
    kvi.init(0, nd.array([[1, 2], [3, 4]], dtype="float16") / 3)
    kvi.push(0, [nd.array([[0.1, 0.2], [0.3, 0.4]], dtype="float16", ctx=mx.cpu(i)) for i in range(3)])
    o = nd.zeros((2, 2), dtype="float16")
    kvi.pull(0, out=o)
    show(kvtype + " f16 sum", o)
    kvi.init(1, nd.array([1, 2, 3], dtype="int64"))
    kvi.push(1, [nd.array([2 ** 33, -1, 5], dtype="int64")] * 2)
    o = nd.zeros((3,), dtype="int64")
    kvi.pull(1, out=o)
    show(kvtype + " i64 sum", o)
    kvi.init(2, nd.array([250, 3], dtype="uint8"))
    kvi.push(2, [nd.array([200, 3], dtype="uint8")] * 2)
    o = nd.zeros((2,), dtype="uint8")
    kvi.pull(2, out=o)
    show(kvtype + " u8 wrap", o)

    # row_sparse_pull: a list of outputs with a list of row ids, and one row_ids for all
    kvr = mx.kv.create(kvtype)
    table = nd.array(np.arange(30, dtype=np.float32).reshape(10, 3) / 4)
    kvr.init("emb", table.tostype("row_sparse"))
    outs = [nd.sparse.zeros("row_sparse", (10, 3), ctx=mx.cpu(i)) for i in range(3)]
    kvr.row_sparse_pull("emb", out=outs, row_ids=[nd.array([9, 0]), nd.array([3, 3, 3]), nd.array([], dtype="int64")])
    for i, out in enumerate(outs):
        print(kvtype, "rsp", i, out.indices.asnumpy().tolist(), out.data.asnumpy().tolist())
    outs = [nd.sparse.zeros("row_sparse", (10, 3)) for _ in range(2)]
    kvr.row_sparse_pull("emb", out=outs, row_ids=nd.array([4, 1, 8], dtype="int64"))
    for i, out in enumerate(outs):
        print(kvtype, "rsp shared ids", i, out.indices.asnumpy().tolist(), out.data.asnumpy().tolist())
    kvr.init(["e1", "e2"], [table.tostype("row_sparse"), (table * 2).tostype("row_sparse")])
    o1, o2 = nd.sparse.zeros("row_sparse", (10, 3)), nd.sparse.zeros("row_sparse", (10, 3))
    kvr.row_sparse_pull(["e1", "e2"], out=[o1, o2], row_ids=[nd.array([2]), nd.array([7, 5])])
    print(kvtype, "rsp keys", o1.indices.asnumpy().tolist(), o1.data.asnumpy().tolist(),
          o2.indices.asnumpy().tolist(), o2.data.asnumpy().tolist())
    # a dense pull of a row-sparse key
    od = nd.zeros((10, 3))
    kvr.push("emb", nd.sparse.row_sparse_array((np.ones((2, 3), dtype=np.float32), np.array([1, 8])), shape=(10, 3)))
    kvr.row_sparse_pull("emb", out=outs[0], row_ids=nd.array(np.arange(10)))
    print(kvtype, "rsp after push", outs[0].indices.asnumpy().tolist(), outs[0].data.asnumpy().tolist())

    # set_updater with a custom function
    kvu = mx.kv.create(kvtype)

    def update(key, grad, weight):
        weight[:] = weight * 0.5 - grad * 0.25 + key

    kvu._set_updater(update)
    kvu.init([3, 4], [nd.ones((3,)), nd.ones((3,)) * 2])
    for step in range(3):
        kvu.push([3, 4], [[nd.array([step, 1, -1], ctx=mx.cpu(i)) for i in range(2)], nd.array([0.5, 0.5, 0.5])])
    outs = [nd.zeros((3,)), nd.zeros((3,))]
    kvu.pull([3, 4], out=outs)
    show(kvtype + " set_updater", outs)

# the order a custom updater sees keys in, and what it gets as a str key
seen = []


def record(key, grad, weight):
    seen.append((key, grad.asnumpy().tolist()))
    weight[:] += grad


for kvtype in ("local", "device"):
    kv = mx.kv.create(kvtype)
    kv.init([5, 2, 9], [nd.zeros((2,))] * 3)
    del seen[:]
    kv._set_updater(record)
    kv.push([9, 2, 5, 2], [nd.ones((2,)) * 9, nd.ones((2,)) * 2, [nd.ones((2,)) * 5, nd.ones((2,)) * 50],
                           nd.ones((2,)) * 20])
    print(kvtype, "int key order", seen)
    o = [nd.zeros((2,)) for _ in range(3)]
    kv.pull([2, 5, 9], out=o)
    show(kvtype + " after dup push", o)
    kvs = mx.kv.create(kvtype)
    kvs.init(["b", "a", "c"], [nd.zeros((2,))] * 3)
    del seen[:]
    kvs._set_updater(record)
    kvs.push(["c", "a", "b", "a"], [nd.ones((2,)) * 3, nd.ones((2,)) * 1, nd.ones((2,)) * 2, nd.ones((2,)) * 10])
    print(kvtype, "str key order", seen)
    # pushpull with a key listed twice: the values are summed, every output gets the sum
    kv2 = mx.kv.create(kvtype)
    kv2.init([1, 3], [nd.zeros((2,))] * 2)
    vals = [nd.ones((2,)), nd.ones((2,)) * 2, nd.ones((2,)) * 4]
    kv2.pushpull([1, 3, 1], vals)
    show(kvtype + " pushpull dup", vals)
    outs = [nd.zeros((2,)) for _ in range(3)]
    kv2.pushpull([3, 1, 3], vals, out=outs)
    show(kvtype + " pushpull dup out", outs)
    # with an optimizer: one update with the sum
    kv3 = mx.kv.create(kvtype)
    kv3.set_optimizer(mx.optimizer.Adam(learning_rate=0.1))
    kv3.init([4, 6], [nd.ones((2,)), nd.ones((2,))])
    for step in range(3):
        kv3.push([4, 6, 4], [nd.ones((2,)) * 0.5, nd.ones((2,)) * (step - 1), nd.ones((2,)) * -2])
    o = [nd.zeros((2,)), nd.zeros((2,)), nd.zeros((2,))]
    kv3.pull([4, 4, 6], out=o)
    show(kvtype + " adam dup", o)

# 2-bit compression: thresholds around the gradients' size, residuals over several steps
def g(step, k):
    return (((np.arange(8) * (step + 1 + 2 * k)) % 9 - 4) / 8).astype(np.float32)


for threshold in (0.05, 0.25, 0.5, 1.0, 10.0):
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": threshold})
    kv.init("x", nd.zeros((8,)))
    outs = [nd.zeros((8,), ctx=mx.cpu(i)) for i in range(2)]
    for step in range(6):
        kv.push("x", [nd.array(g(step, k), ctx=mx.cpu(k)) for k in range(2)])
        kv.pull("x", out=outs)
        print("2bit", threshold, step, outs[1].asnumpy().tolist())
    # compression on a float16 value
    kv.init("h", nd.zeros((8,), dtype="float16"))
    kv.push("h", [nd.array(g(0, k), dtype="float16", ctx=mx.cpu(k)) for k in range(2)])
    oh = nd.zeros((8,), dtype="float16")
    kv.pull("h", out=oh)
    print("2bit f16", threshold, oh.asnumpy().tolist())
