"""Data-parallel pushes of lists on 'local' and 'device' stores: int and str keys, pull into
several outputs, pushpull (in place and into out=), broadcast, lists of keys."""
import numpy as np
import mxnet as mx

shape = (2, 3)
ctxs = [mx.cpu(i) for i in range(4)]


def show(tag, arrs):
    if not isinstance(arrs, (list, tuple)):
        arrs = [arrs]
    print(tag, [a.asnumpy().tolist() for a in arrs])


for kvtype in ("local", "device"):
    kv = mx.kv.create(kvtype)
    print("type", kv.type, "rank", kv.rank, "workers", kv.num_workers)
    base = np.arange(6, dtype=np.float32).reshape(shape) / 7
    kv.init(3, mx.nd.array(base))
    kv.init(4, mx.nd.array(base * 2))
    kv.init([5, 7], [mx.nd.ones(shape), mx.nd.zeros(shape)])

    # each device pushes its own gradient; the store sums them
    grads = [mx.nd.array(base * (k + 1), ctx=c) for k, c in enumerate(ctxs)]
    kv.push(3, grads)
    outs = [mx.nd.zeros(shape, ctx=c) for c in ctxs]
    kv.pull(3, out=outs)
    show(kvtype + " pull 3", outs)
    print("ctx", [str(o.context) for o in outs])

    kv.push(4, [g * 0.5 for g in grads])
    out = mx.nd.zeros(shape)
    kv.pull(4, out=out)
    show(kvtype + " pull w", out)

    # lists of keys with a list of values per key
    kv.push([5, 7], [[mx.nd.ones(shape, ctx=c) * 3 for c in ctxs[:2]],
                     [mx.nd.ones(shape, ctx=c) / 3 for c in ctxs[:3]]])
    o5 = [mx.nd.zeros(shape, ctx=c) for c in ctxs[:2]]
    o7 = [mx.nd.zeros(shape, ctx=c) for c in ctxs[:3]]
    kv.pull([5, 7], out=[o5, o7])
    show(kvtype + " pull 5", o5)
    show(kvtype + " pull 7", o7)

    # pushpull in place (allreduce) and into separate outputs
    vals = [mx.nd.array(base + k, ctx=c) for k, c in enumerate(ctxs)]
    kv.pushpull(3, vals)
    show(kvtype + " pushpull inplace", vals)
    outs = [mx.nd.zeros(shape, ctx=c) for c in ctxs]
    kv.pushpull(4, [mx.nd.array(base - k, ctx=c) for k, c in enumerate(ctxs)], out=outs)
    show(kvtype + " pushpull out", outs)

    # broadcast a fresh key to every device
    outs = [mx.nd.zeros(shape, ctx=c) for c in ctxs]
    kv.broadcast(11, mx.nd.array(base * 3), out=outs)
    show(kvtype + " broadcast", outs)
    outs = [mx.nd.zeros(shape, ctx=c) for c in ctxs[:2]]
    kv.broadcast(12, mx.nd.array(base + 0.25), out=outs)
    show(kvtype + " broadcast str", outs)
    o = mx.nd.zeros(shape)
    kv.pull(11, out=o)
    show(kvtype + " pull after broadcast", o)

    # float64 and int32 values
    kv.init(20, mx.nd.array(base, dtype="float64"))
    kv.push(20, [mx.nd.array(base / 3, dtype="float64", ctx=c) for c in ctxs])
    o = mx.nd.zeros(shape, dtype="float64")
    kv.pull(20, out=o)
    print(kvtype, "f64", o.dtype, o.asnumpy().tolist())
    kv.init(21, mx.nd.array(np.arange(6).reshape(shape), dtype="int32"))
    kv.push(21, [mx.nd.array(np.arange(6).reshape(shape) * (k + 1), dtype="int32", ctx=c)
                 for k, c in enumerate(ctxs)])
    o = mx.nd.zeros(shape, dtype="int32")
    kv.pull(21, out=o)
    print(kvtype, "i32", o.dtype, o.asnumpy().tolist())

    # a second store with str keys only (a store takes one kind of key)
    kvs = mx.kv.create(kvtype)
    kvs.init(["fc1_weight", "fc1_bias"], [mx.nd.array(base), mx.nd.zeros((3,))])
    kvs.push(["fc1_weight", "fc1_bias"], [[mx.nd.array(base * (k + 2), ctx=c) for k, c in enumerate(ctxs)],
                                          [mx.nd.ones((3,), ctx=c) / 9 for c in ctxs]])
    ow = [mx.nd.zeros(shape, ctx=c) for c in ctxs]
    ob = [mx.nd.zeros((3,), ctx=c) for c in ctxs]
    kvs.pull(["fc1_weight", "fc1_bias"], out=[ow, ob])
    show(kvtype + " str pull", ow + ob)
    kvs.pushpull("fc1_bias", [mx.nd.ones((3,), ctx=c) * (k - 1.5) for k, c in enumerate(ctxs)])
    kvs.pull("fc1_bias", out=ob)
    show(kvtype + " str pushpull", ob)
