"""Learning-rate schedulers at many steps, with every warmup mode, read the way MXNet's Module
and Trainer read them (one call per update, num_update increasing), and their attributes."""
import mxnet as mx

steps = list(range(0, 40)) + [50, 99, 100, 101, 150, 1000]
scheds = {
    "factor": lambda: mx.lr_scheduler.FactorScheduler(step=7, factor=0.7, base_lr=0.05),
    "factor_stop": lambda: mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, stop_factor_lr=1e-4, base_lr=0.1),
    "factor_wconst": lambda: mx.lr_scheduler.FactorScheduler(step=5, factor=0.9, base_lr=0.3, warmup_steps=6,
                                                             warmup_begin_lr=0.03, warmup_mode="constant"),
    "multi": lambda: mx.lr_scheduler.MultiFactorScheduler(step=[3, 10, 11, 30], factor=0.1, base_lr=0.7),
    "multi_wlin": lambda: mx.lr_scheduler.MultiFactorScheduler(step=[12, 20], factor=0.5, base_lr=0.2,
                                                               warmup_steps=10, warmup_begin_lr=0.001),
    "poly1": lambda: mx.lr_scheduler.PolyScheduler(max_update=100, base_lr=0.1, pwr=1),
    "poly3": lambda: mx.lr_scheduler.PolyScheduler(max_update=37, base_lr=0.25, pwr=3, final_lr=0.005,
                                                   warmup_steps=4, warmup_begin_lr=0.01, warmup_mode="linear"),
    "poly_wconst": lambda: mx.lr_scheduler.PolyScheduler(max_update=20, base_lr=0.5, pwr=0.5, final_lr=0.1,
                                                         warmup_steps=7, warmup_begin_lr=0.2, warmup_mode="constant"),
    "cos": lambda: mx.lr_scheduler.CosineScheduler(max_update=33, base_lr=0.9, final_lr=0.0),
    "cos_w": lambda: mx.lr_scheduler.CosineScheduler(max_update=100, base_lr=0.01, final_lr=0.0001,
                                                     warmup_steps=13, warmup_begin_lr=0.0),
    "cos_wconst": lambda: mx.lr_scheduler.CosineScheduler(max_update=25, base_lr=0.3, final_lr=0.03,
                                                          warmup_steps=10, warmup_begin_lr=0.05,
                                                          warmup_mode="constant"),
}
for name, make in scheds.items():
    s = make()
    print(name, "attrs", repr(s.base_lr), s.warmup_steps, repr(s.warmup_begin_lr), repr(s.warmup_final_lr),
          s.warmup_mode)
    for n in steps:
        print(name, n, repr(s(n)))
    # going back in time (a resumed run): the schedulers keep their state
    print(name, "back", [repr(s(n)) for n in (5, 2, 0, 45, 12)])
    s2 = make()
    s2.base_lr = 0.5  # Optimizer sets base_lr from learning_rate
    print(name, "rebased", [repr(s2(n)) for n in (0, 3, 9, 15, 26, 40, 120)])

# an optimizer's learning rate property reads its scheduler at num_update
for name, make in scheds.items():
    opt = mx.optimizer.SGD(learning_rate=0.123, lr_scheduler=make())
    print("opt base", name, repr(opt.lr_scheduler.base_lr), repr(opt.learning_rate))
    opt = mx.optimizer.SGD(lr_scheduler=make(), begin_num_update=15)
    print("opt begin15", name, repr(opt.learning_rate), repr(opt._get_lr(0)))
