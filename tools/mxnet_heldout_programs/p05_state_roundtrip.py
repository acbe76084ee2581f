"""Checkpointing optimizer state: save/load on a store, get_states/set_states on an updater,
resuming gives the same weights as an uninterrupted run.

kvcli's state files and get_states() keep the step counts, so Adam and Nadam resume exactly;
MXNet's keep only the arrays (without dump_optimizer) and restart the bias correction.
"""
# DELIBERATE: adam plain resumed -- kvcli's state files keep step counts (docs/kvstore.md)
# DELIBERATE: adam set_states same -- kvcli's get_states() keeps step counts (docs/kvstore.md)
# DELIBERATE: nadam plain resumed -- kvcli's state files keep step counts (docs/kvstore.md)
# DELIBERATE: nadam set_states same -- kvcli's get_states() keeps step counts (docs/kvstore.md)
import os
import tempfile
import numpy as np
import mxnet as mx

shape = (2, 4)
w0 = (np.arange(8, dtype=np.float32).reshape(shape) - 3) / 9


def g(step, k=0):
    return (((np.arange(8) * (step + 3) + k) % 7 - 3) / 5).astype(np.float32).reshape(shape)


tmp = tempfile.mkdtemp()
for name, kw in [("sgd", dict(momentum=0.9)), ("adam", dict()), ("rmsprop", dict(centered=True)),
                 ("adagrad", dict()), ("nag", dict(momentum=0.5)), ("adadelta", dict()),
                 ("ftrl", dict()), ("adamax", dict()), ("nadam", dict())]:
    # uninterrupted: 6 steps
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.create(name, learning_rate=0.1, **kw))
    kv.init([0, 1], [mx.nd.array(w0), mx.nd.array(w0 * 2)])
    for step in range(6):
        kv.push([0, 1], [[mx.nd.array(g(step, k), ctx=mx.cpu(k)) for k in range(2)],
                         mx.nd.array(g(step + 1))])
    full = [mx.nd.zeros(shape), mx.nd.zeros(shape)]
    kv.pull([0, 1], out=full)

    # 3 steps, save, new store, load, 3 more steps
    for dump in (False, True):
        kv = mx.kv.create("local")
        kv.set_optimizer(mx.optimizer.create(name, learning_rate=0.1, **kw))
        kv.init([0, 1], [mx.nd.array(w0), mx.nd.array(w0 * 2)])
        for step in range(3):
            kv.push([0, 1], [[mx.nd.array(g(step, k), ctx=mx.cpu(k)) for k in range(2)],
                             mx.nd.array(g(step + 1))])
        mid = [mx.nd.zeros(shape), mx.nd.zeros(shape)]
        kv.pull([0, 1], out=mid)
        fname = os.path.join(tmp, "%s_%d.states" % (name, dump))
        kv.save_optimizer_states(fname, dump_optimizer=dump)
        kv2 = mx.kv.create("local")
        kv2.set_optimizer(mx.optimizer.create(name, learning_rate=0.1, **kw))
        kv2.init([0, 1], mid)
        kv2.load_optimizer_states(fname)
        for step in range(3, 6):
            kv2.push([0, 1], [[mx.nd.array(g(step, k), ctx=mx.cpu(k)) for k in range(2)],
                              mx.nd.array(g(step + 1))])
        res = [mx.nd.zeros(shape), mx.nd.zeros(shape)]
        kv2.pull([0, 1], out=res)
        print(name, "dump" if dump else "plain", "resumed == full:",
              [bool((r.asnumpy() == f.asnumpy()).all()) for r, f in zip(res, full)])
    print(name, "full", [f.asnumpy().tolist() for f in full])

    # updater get_states / set_states round trip
    opt = mx.optimizer.create(name, learning_rate=0.1, **kw)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(w0), mx.nd.array(w0 + 1)]
    for step in range(3):
        for i, w in enumerate(ws):
            upd(i, mx.nd.array(g(step, i)), w)
    blob = upd.get_states(dump_optimizer=False)
    upd2 = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **kw))
    upd2.set_states(blob)
    ws2 = [w.copy() for w in ws]
    for step in range(3, 5):
        for i in range(2):
            upd(i, mx.nd.array(g(step, i)), ws[i])
            upd2(i, mx.nd.array(g(step, i)), ws2[i])
    print(name, "updater", ws[0].asnumpy().tolist(), ws[1].asnumpy().tolist())
    print(name, "set_states same:", [bool((a.asnumpy() == b.asnumpy()).all()) for a, b in zip(ws, ws2)],
          sorted(upd2.states.keys()))
