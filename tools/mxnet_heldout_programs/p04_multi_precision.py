"""float16 weights with multi_precision optimizers: through get_updater and on a store."""
import numpy as np
import mxnet as mx

w0 = ((np.arange(10) - 4) / 7).astype(np.float16).reshape(2, 5)


def g(step):
    return (((np.arange(10) * (step + 2)) % 9 - 4) / 13).astype(np.float16).reshape(2, 5)


for name, kw in [("sgd", dict(momentum=0.9)), ("sgd", dict()), ("nag", dict(momentum=0.7)),
                 ("adam", dict()), ("signum", dict(momentum=0.9)), ("ftml", dict()),
                 ("lamb", dict()), ("lars", dict(momentum=0.9))]:
    for mp in (True, False):
        opt = mx.optimizer.create(name, learning_rate=0.05, wd=0.01, multi_precision=mp, **kw)
        upd = mx.optimizer.get_updater(opt)
        w = mx.nd.array(w0, dtype="float16")
        for step in range(6):
            upd(0, mx.nd.array(g(step), dtype="float16"), w)
        st = upd.states[0]
        print("upd", name, mp, w.dtype, w.asnumpy().tolist())
        print("  state", type(st).__name__, len(st) if isinstance(st, (tuple, list)) else "")

    kv = mx.kv.create("device")
    kv.set_optimizer(mx.optimizer.create(name, learning_rate=0.05, multi_precision=True, **kw))
    kv.init(3, mx.nd.array(w0, dtype="float16"))
    outs = [mx.nd.zeros((2, 5), dtype="float16", ctx=mx.cpu(k)) for k in range(2)]
    for step in range(4):
        kv.push(3, [mx.nd.array(g(step + k), dtype="float16", ctx=mx.cpu(k)) for k in range(2)])
        kv.pull(3, out=outs)
    print("kv", name, outs[0].asnumpy().tolist())

# float16 weight without multi_precision warns in MXNet; values still update
opt = mx.optimizer.SGD(learning_rate=0.5, multi_precision=True)
w = mx.nd.array(np.arange(4) / 3, dtype="float32")
upd = mx.optimizer.get_updater(opt)
upd(1, mx.nd.ones((4,)) / 7, w)
print("fp32 weight with multi_precision", w.asnumpy().tolist())
