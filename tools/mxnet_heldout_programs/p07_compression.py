"""2-bit gradient compression over several pushes (residuals carried between pushes)."""
import numpy as np
import mxnet as mx

shape = (3, 5)


def g(step, k):
    return ((((np.arange(15) * (step + 2 + k)) % 11) - 5) / 6).astype(np.float32).reshape(shape)



def caught(error):
    """Which of the classes a program would catch the error is an instance of."""
    kinds = (mx.base.MXNetError, ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError,
             AssertionError, OSError, Exception)
    return "caught=%s" % [k.__name__ for k in kinds if isinstance(error, k)]


kv = mx.kv.create("local")
try:
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    print("local compression accepted")
except Exception as e:
    print("local compression refused", caught(e))
for params in ({"type": "1bit"}, {"threshold": 0.5}, {"type": "2bit", "threshold": -1}):
    kv = mx.kv.create("device")
    try:
        kv.set_gradient_compression(params)
        print("device accepted", sorted(params.items()))
    except Exception as e:
        print("device refused", sorted(params.items()), caught(e))

for kvtype in ("device",):
    for threshold in (0.5, 0.3, 2.0):
        kv = mx.kv.create(kvtype)
        kv.set_gradient_compression({"type": "2bit", "threshold": threshold})
        kv.init(0, mx.nd.zeros(shape))
        kv.init(1, mx.nd.ones(shape))
        out = [mx.nd.zeros(shape, ctx=mx.cpu(k)) for k in range(3)]
        for step in range(5):
            kv.push(0, [mx.nd.array(g(step, k), ctx=mx.cpu(k)) for k in range(3)])
            kv.pull(0, out=out)
            print(kvtype, threshold, "step", step, out[2].asnumpy().tolist())
        kv.pushpull(1, [mx.nd.array(g(0, k), ctx=mx.cpu(k)) for k in range(2)], out=out[:2])
        print(kvtype, threshold, "pushpull", out[0].asnumpy().tolist())
        # with an optimizer on the store
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.5))
        kv.init(2, mx.nd.ones(shape))
        for step in range(3):
            kv.push(2, [mx.nd.array(g(step, k), ctx=mx.cpu(k)) for k in range(2)])
        kv.pull(2, out=out[0])
        print(kvtype, threshold, "sgd", out[0].asnumpy().tolist())
