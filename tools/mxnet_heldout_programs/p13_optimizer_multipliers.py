"""Optimizer bookkeeping as training code uses it: lr_mult / wd_mult through set_lr_mult /
set_wd_mult with idx2name and param_dict, begin_num_update, num_update across keys, the
learning rate a scheduler gives after updates, clip_gradient / rescale_grad / wd, and
optimizer.update / create_state called directly."""
import numpy as np
import mxnet as mx

nd = mx.nd
shape = (2, 3)
w0 = (np.arange(6, dtype=np.float32).reshape(shape) - 2) / 3


def g(step, k=0):
    return (((np.arange(6) * (step + 2) + 3 * k) % 5 - 2) / 4).astype(np.float32).reshape(shape)


idx2name = {0: "fc1_weight", 1: "fc1_bias", 2: "fc2_weight", 3: "bn_gamma", 4: "emb_weight"}
for name, kw in [("sgd", dict(momentum=0.9)), ("adam", dict()), ("nag", dict(momentum=0.5)),
                 ("rmsprop", dict()), ("adagrad", dict()), ("signum", dict(momentum=0.8)),
                 ("ftml", dict()), ("adamax", dict()), ("nadam", dict()), ("lamb", dict()), ("lars", dict(momentum=0.9))]:
    opt = mx.optimizer.create(name, learning_rate=0.1, wd=0.01, rescale_grad=0.5, clip_gradient=0.4,
                              param_idx2name=idx2name, begin_num_update=3, **kw)
    opt.set_lr_mult({"fc1_weight": 0.5, "fc2_weight": 2.0})
    opt.set_wd_mult({"fc1_bias": 3.0, "emb_weight": 0.0})
    print(name, "lr_mult", sorted(opt.lr_mult.items()), "wd_mult", sorted(opt.wd_mult.items()))
    print(name, "begin", opt.begin_num_update, opt.num_update, [repr(opt._get_lr(i)) for i in range(5)],
          [repr(opt._get_wd(i)) for i in range(5)])
    upd = mx.optimizer.get_updater(opt)
    ws = [nd.array(w0 * (i + 1)) for i in range(5)]
    for step in range(4):
        for i in (0, 2, 1, 4, 3):
            if step == 2 and i == 4:
                continue
            upd(i, nd.array(g(step, i)), ws[i])
    print(name, "num_update", opt.num_update, sorted(opt._index_update_count.items()))
    for i, w in enumerate(ws):
        print(name, idx2name[i], w.asnumpy().tolist())

# multipliers from a symbol's attributes (__lr_mult__ / __wd_mult__) and param_dict-free defaults
data = mx.sym.Variable("data")
w = mx.sym.Variable("fc_weight", lr_mult=0.25, wd_mult=4.0)
fc = mx.sym.FullyConnected(data=data, weight=w, num_hidden=3, name="fc")
opt = mx.optimizer.SGD(learning_rate=0.2, wd=0.1, sym=fc, param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "data"})
print("sym mults", sorted(opt.lr_mult.items()), sorted(opt.wd_mult.items()),
      [repr(opt._get_lr(i)) for i in range(3)], [repr(opt._get_wd(i)) for i in range(3)])
opt.set_lr_mult({"fc_bias": 3})
print("after set_lr_mult", sorted(opt.lr_mult.items()), repr(opt._get_lr(0)), repr(opt._get_lr(1)))

# set_learning_rate / lr property / scheduler through updates
sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.4)
opt = mx.optimizer.SGD(learning_rate=0.4, lr_scheduler=sched, momentum=0.9)
upd = mx.optimizer.get_updater(opt)
w = nd.array(w0)
lrs = []
for step in range(7):
    for i in range(3):
        upd(i, nd.array(g(step, i)), w)
        lrs.append(repr(opt.learning_rate))
print("sched lrs", lrs)
print("sched w", w.asnumpy().tolist(), opt.num_update)
opt2 = mx.optimizer.Adam(learning_rate=0.01)
opt2.set_learning_rate(0.05)
print("set_learning_rate", repr(opt2.learning_rate), repr(opt2.lr))

# optimizer.update with explicit state (no updater)
for name in ("sgd", "adam", "rmsprop", "adadelta", "ftrl"):
    opt = mx.optimizer.create(name, learning_rate=0.05, wd=0.002, rescale_grad=1 / 8.0)
    weight = nd.array(w0)
    state = opt.create_state(0, weight)
    for step in range(3):
        opt.update(0, weight, nd.array(g(step)), state)
    print("direct", name, weight.asnumpy().tolist(), opt.num_update, opt._index_update_count)
    opt = mx.optimizer.create(name, learning_rate=0.05, wd=0.002, rescale_grad=1 / 8.0, multi_precision=True)
    weight16 = nd.array(w0, dtype="float16")
    state = opt.create_state_multi_precision(0, weight16)
    opt.update_multi_precision(0, weight16, nd.array(g(0), dtype="float16"), state)
    print("direct mp", name, weight16.dtype, weight16.asnumpy().tolist())

# the same optimizer on a store with str keys: multipliers by key name
kv = mx.kv.create("local")
opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.05)
opt.set_lr_mult({"b": 0.0, "a": 2.0})
opt.set_wd_mult({"a": 0.0})
kv.set_optimizer(opt)
kv.init(["a", "b", "c"], [nd.array(w0)] * 3)
for step in range(3):
    kv.push(["a", "b", "c"], [nd.array(g(step))] * 3)
outs = [nd.zeros(shape) for _ in range(3)]
kv.pull(["a", "b", "c"], out=outs)
for key, o in zip("abc", outs):
    print("kv str mult", key, o.asnumpy().tolist())
