"""An embedding table on a store: row_sparse_pull with duplicate and unsorted row ids,
several outputs, row-sparse pushes with lazy optimizers."""
import numpy as np
import mxnet as mx

rows, cols = 8, 3
table = (np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) - 7) / 6


def rsp(data_rows, scale, ctx=mx.cpu(0)):
    data = np.array([[(r + 1) * scale, -scale, r / 3.0] for r in data_rows], dtype=np.float32)
    return mx.nd.sparse.row_sparse_array((data, np.array(data_rows, dtype=np.int64)), shape=(rows, cols), ctx=ctx)


def show(tag, out):
    print(tag, out.stype, out.indices.asnumpy().tolist(), out.data.asnumpy().tolist())


for kvtype in ("local", "device"):
    kv = mx.kv.create(kvtype)
    kv.init("embed", mx.nd.array(table).tostype("row_sparse"))
    out = mx.nd.sparse.zeros("row_sparse", (rows, cols))
    kv.row_sparse_pull("embed", out=out, row_ids=mx.nd.array([5, 1, 5, 1, 3], dtype="int64"))
    show(kvtype + " dup ids", out)
    outs = [mx.nd.sparse.zeros("row_sparse", (rows, cols), ctx=mx.cpu(k)) for k in range(2)]
    kv.row_sparse_pull("embed", out=outs, row_ids=[mx.nd.array([0, 0, 7], dtype="int64"),
                                                   mx.nd.array([6, 2, 4, 2], dtype="int64")])
    show(kvtype + " out0", outs[0])
    show(kvtype + " out1", outs[1])
    # float32 row ids (MXNet's default dtype of nd.array)
    kv.row_sparse_pull("embed", out=out, row_ids=mx.nd.array([2, 2, 0]))
    show(kvtype + " float ids", out)

    # pushes without optimizer replace the value with the sum
    kv.push("embed", [rsp([1, 3], 0.5, mx.cpu(0)), rsp([3, 6], 0.25, mx.cpu(1))])
    kv.row_sparse_pull("embed", out=out, row_ids=mx.nd.array(np.arange(rows), dtype="int64"))
    show(kvtype + " after push", out)

    for name, kw in [("sgd", dict(momentum=0.9, lazy_update=True)), ("sgd", dict(lazy_update=False, wd=0.1)),
                     ("adam", dict(lazy_update=True)), ("adagrad", dict()), ("ftrl", dict()),
                     ("nag", dict(momentum=0.5))]:
        kv = mx.kv.create(kvtype)
        kv.set_optimizer(mx.optimizer.create(name, learning_rate=0.1, **kw))
        kv.init(9, mx.nd.array(table).tostype("row_sparse"))
        for step in range(3):
            kv.push(9, [rsp([step, 4], 0.5 + step, mx.cpu(0)), rsp([4, 7 - step], 0.25, mx.cpu(1))])
        out = mx.nd.sparse.zeros("row_sparse", (rows, cols))
        kv.row_sparse_pull(9, out=out, row_ids=mx.nd.array([7, 6, 5, 4, 3, 2, 1, 0, 4], dtype="int64"))
        show(kvtype + " " + name + " " + str(sorted(kw.items())), out)
