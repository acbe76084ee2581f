"""Learning-rate schedules, read directly and through an optimizer's updates."""
import numpy as np
import mxnet as mx

sched = {
    "factor": lambda: mx.lr_scheduler.FactorScheduler(step=3, factor=0.5, stop_factor_lr=1e-3, base_lr=0.1),
    "factor_warm": lambda: mx.lr_scheduler.FactorScheduler(step=2, factor=0.9, base_lr=0.2, warmup_steps=4,
                                                           warmup_begin_lr=0.01, warmup_mode="linear"),
    "multi": lambda: mx.lr_scheduler.MultiFactorScheduler(step=[2, 5, 9], factor=0.3, base_lr=0.5),
    "multi_warm": lambda: mx.lr_scheduler.MultiFactorScheduler(step=[6, 8], factor=0.1, base_lr=1.0,
                                                               warmup_steps=5, warmup_begin_lr=0.1,
                                                               warmup_mode="constant"),
    "poly": lambda: mx.lr_scheduler.PolyScheduler(max_update=10, base_lr=0.3, pwr=2, final_lr=0.01),
    "poly_warm": lambda: mx.lr_scheduler.PolyScheduler(max_update=12, base_lr=0.3, pwr=1.5, final_lr=0.0,
                                                       warmup_steps=3, warmup_begin_lr=0.05),
    "cosine": lambda: mx.lr_scheduler.CosineScheduler(max_update=10, base_lr=0.4, final_lr=0.02),
    "cosine_warm": lambda: mx.lr_scheduler.CosineScheduler(max_update=15, base_lr=0.4, final_lr=0.0,
                                                           warmup_steps=5, warmup_begin_lr=0.0),
}

for name, make in sched.items():
    s = make()
    print(name, [repr(s(n)) for n in [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 14, 15, 20, 3, 1]])

# through an optimizer (update on a store and with an updater)
w0 = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
g = np.ones((2, 3), dtype=np.float32) / 3
for name, make in sched.items():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.5, lr_scheduler=make())
    kv = mx.kv.create("local")
    kv.set_optimizer(opt)
    kv.init(1, mx.nd.array(w0))
    out = mx.nd.zeros((2, 3))
    for _ in range(12):
        kv.push(1, mx.nd.array(g))
        kv.pull(1, out=out)
    print("kv", name, out.asnumpy().tolist())

    opt = mx.optimizer.create("adam", learning_rate=0.1, lr_scheduler=make())
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(w0), mx.nd.array(w0 * 2)]
    for _ in range(12):
        for i, w in enumerate(ws):
            upd(i, mx.nd.array(g * (i + 1)), w)
    print("upd", name, [w.asnumpy().tolist() for w in ws], repr(opt.learning_rate), opt.num_update)
