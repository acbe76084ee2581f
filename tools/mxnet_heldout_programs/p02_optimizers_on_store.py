"""Each optimizer set on a store (update on the kvstore), with rescale_grad, clip_gradient
and wd, several steps of pushes from two devices.
LBSGD differs on purpose: MXNet keeps the first pushed gradient of a macro-batch by reference,
and a store reuses its merge buffer for the next push, so MXNet adds the second gradient to
itself; kvcli adds the two gradients (docs/kvstore.md).
"""
# DELIBERATE: lbsgd  -- LBSGD's first accumulated gradient aliases MXNet's merge buffer
import numpy as np
import mxnet as mx

shape = (3, 4)
ctxs = [mx.cpu(0), mx.cpu(1)]
w0 = (np.arange(12, dtype=np.float32).reshape(shape) - 5) / 7


def grad(step, k):
    return (np.arange(12, dtype=np.float32).reshape(shape) * (step + 1) - 3 * k - 4) / 11


configs = [
    ("sgd", dict(learning_rate=0.1)),
    ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5)),
    ("sgd", dict(learning_rate=0.1, momentum=0.9, clip_gradient=0.3)),
    ("nag", dict(learning_rate=0.05, momentum=0.8, wd=0.001, clip_gradient=1.0)),
    ("adam", dict(learning_rate=0.01, wd=0.01, rescale_grad=0.25)),
    ("adam", dict(learning_rate=0.01, beta1=0.5, beta2=0.9, epsilon=1e-6, clip_gradient=0.5)),
    ("adagrad", dict(learning_rate=0.1, wd=0.01, eps=1e-5)),
    ("rmsprop", dict(learning_rate=0.01, gamma1=0.8, wd=0.001)),
    ("rmsprop", dict(learning_rate=0.01, centered=True, clip_weights=0.5)),
    ("adadelta", dict(rho=0.9, epsilon=1e-4, wd=0.01)),
    ("adamax", dict(learning_rate=0.02, clip_gradient=0.7)),
    ("nadam", dict(learning_rate=0.01, wd=0.001)),
    ("ftrl", dict(learning_rate=0.1, lamda1=0.01, beta=1.0)),
    ("signum", dict(learning_rate=0.01, momentum=0.9, wd_lh=0.01)),
    ("ftml", dict(learning_rate=0.01, beta1=0.6, wd=0.01)),
    ("dcasgd", dict(learning_rate=0.1, lamda=0.04)),
    ("lbsgd", dict(learning_rate=0.1, momentum=0.9, warmup_epochs=2, batch_scale=2, updates_per_epoch=2)),
]

for kvtype in ("local", "device"):
    for name, kw in configs:
        kv = mx.kv.create(kvtype)
        kv.set_optimizer(mx.optimizer.create(name, **kw))
        kv.init(0, mx.nd.array(w0))
        kv.init(1, mx.nd.zeros((4,)))
        outs = [mx.nd.zeros(shape, ctx=c) for c in ctxs]
        bouts = [mx.nd.zeros((4,), ctx=c) for c in ctxs]
        for step in range(5):
            kv.push(0, [mx.nd.array(grad(step, k), ctx=c) for k, c in enumerate(ctxs)])
            kv.pull(0, out=outs)
            kv.pushpull(1, [mx.nd.array(grad(step, k)[0], ctx=c) for k, c in enumerate(ctxs)],
                        out=bouts)
        print(kvtype, name, sorted(kw.items()))
        print(name, " w", outs[1].asnumpy().tolist())
        print(name, " b", bouts[0].asnumpy().tolist())
