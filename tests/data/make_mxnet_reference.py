"""Write ``mxnet_optimizer_reference.json``: reference numbers from real MXNet 1.9.1.

Run with MXNet's own interpreter (kvcli never imports MXNet)::

    $MXNET_PYTHON tests/data/make_mxnet_reference.py

Every scenario drives MXNet exactly as a KVStore user would::

    kv = mx.kv.create('local'); kv.init(key, w0)
    kv.set_optimizer(mx.optimizer.create(name, **kwargs))
    for each step: kv.push(key, grad or [grad_dev0, grad_dev1, ...]); kv.pull(key, out=w)

Inputs are deterministic float32 arrays built from sin/linspace formulas (no RNG) and are
written into the JSON, so the test that reads it needs no formula and no MXNet.

Optimizer state is read from ``kv._updater.states`` (in 1.9.1, ``set_optimizer`` on a local
store installs an ``mx.optimizer.Updater`` as ``kv._updater``; its ``states`` dict maps the
key to ``None`` for plain SGD, an NDArray (momentum) for SGD with momentum, and a
``(mean, var)`` tuple for Adam). Per-key step counts come from
``kv._updater.optimizer._index_update_count``.

The ``seed`` section replays the seed tutorial's KVStore code and records what MXNet 1.9.1
printed, where it refused something, and the workaround used.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

import mxnet as mx
import numpy as np
from mxnet import nd

OUT = Path(__file__).with_name("mxnet_optimizer_reference.json")
STEPS = 4


def f32(array):
    return np.asarray(array, dtype=np.float32)


def weight0(shape, phase=0.0):
    n = int(np.prod(shape))
    return f32(np.linspace(-1.0, 1.0, n).reshape(shape) + 0.25 * np.cos(np.arange(n) * 0.9 + phase).reshape(shape))


def grad(shape, t, device=0, amplitude=1.0, phase=0.0):
    idx = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return f32(amplitude * np.sin(0.7 * idx + 1.3 * t + 0.9 * device + phase) + 0.1 * (device - 1))


def tolist(array):
    """float32 values as JSON numbers (repr of the float32 -> exact round trip)."""
    return f32(array).tolist()


SCENARIOS = [
    {
        "name": "sgd_plain",
        "optimizer": "sgd",
        "kwargs": {"learning_rate": 0.1},
        "keys": [0],
        "shapes": {0: (3, 4)},
        "devices": 1,
        "amplitude": 1.0,
    },
    {
        "name": "sgd_momentum_wd",
        "optimizer": "sgd",
        "kwargs": {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01},
        "keys": [0],
        "shapes": {0: (3, 4)},
        "devices": 1,
        "amplitude": 1.0,
    },
    {
        "name": "sgd_rescale_clip_momentum",
        "optimizer": "sgd",
        "kwargs": {"learning_rate": 0.1, "momentum": 0.9, "rescale_grad": 0.5, "clip_gradient": 0.3},
        "keys": [0],
        "shapes": {0: (3, 4)},
        "devices": 1,
        "amplitude": 1.0,  # 0.5 * |sin| reaches 0.5 > 0.3: clipping is exercised
    },
    {
        "name": "adam_default_lr",
        "optimizer": "adam",
        "kwargs": {"learning_rate": 0.01},
        "keys": [0],
        "shapes": {0: (3, 4)},
        "devices": 1,
        "amplitude": 1.0,
    },
    {
        "name": "adam_all_params",
        "optimizer": "adam",
        "kwargs": {
            "learning_rate": 0.01,
            "wd": 0.01,
            "beta1": 0.8,
            "beta2": 0.99,
            "epsilon": 1e-6,
            "rescale_grad": 0.25,
            "clip_gradient": 0.5,
        },
        "keys": [0],
        "shapes": {0: (3, 4)},
        "devices": 1,
        "amplitude": 3.0,  # 0.25 * 3 = 0.75 > 0.5: clipping is exercised
    },
    {
        "name": "sgd_multi_device_momentum",
        "optimizer": "sgd",
        "kwargs": {"learning_rate": 0.1, "momentum": 0.5},
        "keys": [0],
        "shapes": {0: (3, 4)},
        "devices": 3,
        "amplitude": 1.0,
    },
    {
        "name": "adam_two_keys_interleaved",
        "optimizer": "adam",
        "kwargs": {"learning_rate": 0.01},
        "keys": [0, 1],
        "shapes": {0: (3, 4), 1: (2, 5)},
        "devices": 1,
        "amplitude": 1.0,
    },
]


def read_state(updater, key):
    state = updater.states.get(key)
    if state is None:
        return {}
    if isinstance(state, (tuple, list)):
        mean, var = state
        return {"mean": tolist(mean.asnumpy()), "var": tolist(var.asnumpy())}
    return {"momentum": tolist(state.asnumpy())}


def run_scenario(spec):
    keys = spec["keys"]
    init = {k: weight0(spec["shapes"][k], phase=0.3 * k) for k in keys}
    # Step plan: 4 steps per key; two keys alternate 0, 1, 0, 1, ...
    plan = [k for _ in range(STEPS) for k in keys]
    counts = {k: 0 for k in keys}
    steps = []
    for k in plan:
        t = counts[k]
        counts[k] += 1
        grads = [
            grad(spec["shapes"][k], t, device=d, amplitude=spec["amplitude"], phase=0.5 * k)
            for d in range(spec["devices"])
        ]
        steps.append((k, grads))

    kv = mx.kv.create("local")
    for k in keys:
        kv.init(k, nd.array(init[k], dtype="float32"))
    kv.set_optimizer(mx.optimizer.create(spec["optimizer"], **spec["kwargs"]))
    outs = {k: nd.zeros(spec["shapes"][k], dtype="float32") for k in keys}
    expected = []
    for k, grads in steps:
        arrays = [nd.array(g, dtype="float32") for g in grads]
        kv.push(k, arrays if len(arrays) > 1 else arrays[0])
        after = {}
        for key in keys:
            kv.pull(key, out=outs[key])
            after[str(key)] = tolist(outs[key].asnumpy())
        expected.append(after)
    updater = kv._updater
    state_after = {str(k): read_state(updater, k) for k in keys}
    update_counts = {str(k): int(v) for k, v in updater.optimizer._index_update_count.items()}

    return {
        "optimizer": spec["optimizer"],
        "kwargs": spec["kwargs"],
        "keys": keys,
        "init": {str(k): tolist(init[k]) for k in keys},
        "steps": [{"key": k, "grads": [tolist(g) for g in grads]} for k, grads in steps],
        "expected": expected,
        "state_after": state_after,
        "update_counts": update_counts,
        "mxnet_resume": mxnet_resume(spec, init, steps, expected),
    }


def mxnet_resume(spec, init, steps, expected, split=2):
    """What MXNet itself does when states are saved after ``split`` pushes and loaded into
    a fresh store (weights carried over by init), with and without ``dump_optimizer``."""
    keys = spec["keys"]
    result = {"split_after_step": split}
    for dump in (False, True):
        kv = mx.kv.create("local")
        for k in keys:
            kv.init(k, nd.array(init[k], dtype="float32"))
        kv.set_optimizer(mx.optimizer.create(spec["optimizer"], **spec["kwargs"]))
        for k, grads in steps[:split]:
            arrays = [nd.array(g, dtype="float32") for g in grads]
            kv.push(k, arrays if len(arrays) > 1 else arrays[0])
        with tempfile.TemporaryDirectory() as tmp:
            fname = os.path.join(tmp, "states")
            kv.save_optimizer_states(fname, dump_optimizer=dump)
            kv2 = mx.kv.create("local")
            for k in keys:
                w = nd.zeros(spec["shapes"][k], dtype="float32")
                kv.pull(k, out=w)
                kv2.init(k, w)
            kv2.set_optimizer(mx.optimizer.create(spec["optimizer"], **spec["kwargs"]))
            kv2.load_optimizer_states(fname)
        worst = 0.0
        for index in range(split, len(steps)):
            k, grads = steps[index]
            arrays = [nd.array(g, dtype="float32") for g in grads]
            kv2.push(k, arrays if len(arrays) > 1 else arrays[0])
            for key in keys:
                w = nd.zeros(spec["shapes"][key], dtype="float32")
                kv2.pull(key, out=w)
                diff = np.abs(w.asnumpy() - f32(expected[index][str(key)])).max()
                worst = max(worst, float(diff))
        result["dump_optimizer" if dump else "no_dump_optimizer"] = {
            "max_abs_diff_vs_uninterrupted": worst,
            "matches_uninterrupted": worst <= 1e-6,
        }
    return result


# ---------------------------------------------------------------------------- seed tutorial
class Recorder:
    def __init__(self):
        self.events = []

    def value(self, label, array):
        self.events.append({"label": label, "value": tolist(array)})

    def printed(self, text):
        lines = [line for line in text.splitlines()]
        if lines:
            self.events.append({"printed": lines})

    def refused(self, what, error, workaround):
        self.events.append(
            {
                "refused": what,
                "error_type": f"{type(error).__module__}.{type(error).__name__}",
                "error": str(error).strip(),
                "workaround": workaround,
            }
        )


@contextlib.contextmanager
def capture(recorder):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        yield
    mx.nd.waitall()
    recorder.printed(buffer.getvalue())


def seed_walkthrough():
    """The tutorial's step-by-step section (custom_updater prints 'Updater called on key')."""
    r = Recorder()
    kv = mx.kv.create("local")
    shape = (3, 3)
    key = 3
    kv.init(key, nd.ones(shape) * 2)
    a = nd.zeros(shape)
    kv.pull(key, out=a)
    r.value("Initialized value", a.asnumpy())

    kv.push(key, nd.ones(shape) * 8)
    kv.pull(key, out=a)
    r.value("Value after push", a.asnumpy())

    try:
        kv.init(key, nd.zeros(shape))
        r.events.append({"note": "re-init of key 3 accepted"})
    except mx.base.MXNetError as error:
        r.refused(
            "kv.init(3, nd.zeros(shape)) on an already initialised key",
            error,
            "none needed: the store still holds 8s and, with no updater set, a push of a list "
            "stores the sum of the list, so the next push gives 4 regardless",
        )
    kv.pull(key, out=a)
    r.value("key 3 after the refused re-init (unchanged)", a.asnumpy())
    num_devices = 4
    contexts = [mx.cpu(i) for i in range(num_devices)]
    arrays_to_push = [nd.ones(shape, ctx=contexts[i]) for i in range(num_devices)]
    kv.push(key, arrays_to_push)
    kv.pull(key, out=a)
    r.value("Value after pushing from multiple sources (summed)", a.asnumpy())

    def custom_updater(key_id, input_value, stored_value):
        print(f"Updater called on key: {key_id}")
        stored_value[:] += input_value * 2

    try:
        kv.set_updater(custom_updater)
    except AttributeError as error:
        r.refused("kv.set_updater(custom_updater)", error, "kv._set_updater(custom_updater)")
        kv._set_updater(custom_updater)

    with capture(r):
        kv.push(key, nd.ones(shape))
        kv.pull(key, out=a)
    r.value("Value after push with custom updater", a.asnumpy())

    b_list = [nd.zeros(shape, ctx=contexts[i]) for i in range(num_devices)]
    kv.pull(key, out=b_list)
    r.value("Value pulled onto one of the devices (b_list[1])", b_list[1].asnumpy())
    r.events.append({"all_pulled_equal": all(np.array_equal(b.asnumpy(), b_list[0].asnumpy()) for b in b_list)})
    return r.events


def seed_complete_example():
    """The tutorial's 'complete example' followed by its multi-key sections (which use the
    same store and custom_updater_example, as the tutorial's printed output shows)."""
    r = Recorder()
    kv = mx.kv.create("local")
    shape = (3, 3)
    key = 3
    kv.init(key, nd.ones(shape) * 2)
    a = nd.zeros(shape)
    kv.pull(key, out=a)
    r.value("1. Initialization", a.asnumpy())

    kv.push(key, nd.ones(shape) * 8)
    kv.pull(key, out=a)
    r.value("2. Push (overwrite)", a.asnumpy())

    try:
        kv.init(key, nd.zeros(shape))
    except mx.base.MXNetError as error:
        r.refused(
            "3. kv.init(3, nd.zeros(shape)) re-init",
            error,
            "kept key 3 (value 8): the list push with no updater assigns the sum, giving 4 anyway",
        )
    num_devices = 4
    contexts = [mx.cpu(i) for i in range(num_devices)]
    kv.push(key, [nd.ones(shape, ctx=c) for c in contexts])
    kv.pull(key, out=a)
    r.value("3. Push from multiple sources (aggregation)", a.asnumpy())

    def custom_updater_example(key_id, input_value, stored_value):
        print(f"Updater logic: key {key_id}, input shape {input_value.shape}, stored shape {stored_value.shape}")
        stored_value[:] += input_value * 2

    try:
        kv.set_updater(custom_updater_example)
    except AttributeError as error:
        r.refused("4. kv.set_updater(custom_updater_example)", error, "kv._set_updater(custom_updater_example)")
        kv._set_updater(custom_updater_example)
    with capture(r):
        kv.push(key, nd.ones(shape))
        kv.pull(key, out=a)
    r.value("4. Custom Updater", a.asnumpy())

    b_list = [nd.zeros(shape, ctx=c) for c in contexts]
    kv.pull(key, out=b_list)
    r.value("5. Pull to multiple devices (b_list[1])", b_list[1].asnumpy())

    # Multiple keys, single device (custom_updater_example still set).
    keys = [5, 7, 9]
    shape = (2, 2)
    kv.init(keys, [nd.ones(shape) for _ in keys])
    with capture(r):
        kv.push(keys, [nd.ones(shape) for _ in keys])
        outputs_list = [nd.zeros(shape) for _ in keys]
        kv.pull(keys, out=outputs_list)
    r.value("keys [5,7,9]: key 7 after multi-key push", outputs_list[1].asnumpy())
    for k, o in zip(keys, outputs_list):
        r.value(f"keys [5,7,9]: key {k}", o.asnumpy())

    # Multiple keys, multiple devices.
    keys = [10, 11, 12]
    num_devices = 2
    contexts = [mx.cpu(i) for i in range(num_devices)]
    kv.init(keys, [nd.ones(shape) * 0.5 for _ in keys])
    with capture(r):
        kv.push(keys, [[nd.ones(shape, ctx=c) for c in contexts] for _ in keys])
        pulled = [[nd.zeros(shape, ctx=c) for c in contexts] for _ in keys]
        kv.pull(keys, out=pulled)
    r.value("keys [10,11,12]: key 11 on device 1", pulled[1][1].asnumpy())
    for k, outs in zip(keys, pulled):
        for d, o in enumerate(outs):
            r.value(f"keys [10,11,12]: key {k} device {d}", o.asnumpy())
    return r.events


def seed_fresh_key_reinit():
    """Alternative workaround for the refused re-init: aggregate into a fresh key instead."""
    r = Recorder()
    kv = mx.kv.create("local")
    shape = (3, 3)
    kv.init(3, nd.ones(shape) * 2)
    kv.push(3, nd.ones(shape) * 8)
    kv.init(4, nd.zeros(shape))  # fresh key in place of re-initialising 3
    kv.push(4, [nd.ones(shape, ctx=mx.cpu(i)) for i in range(4)])
    a = nd.zeros(shape)
    kv.pull(4, out=a)
    r.value("fresh key 4: zeros + push of 4 ones (summed)", a.asnumpy())
    kv.pull(3, out=a)
    r.value("key 3 untouched", a.asnumpy())
    # Does the summed list reach the updater as one merged value? (sum then update)
    calls = []

    def updater(key_id, input_value, stored_value):
        calls.append((int(key_id), input_value.asnumpy().tolist()))
        stored_value[:] += input_value * 2

    kv._set_updater(updater)
    kv.push(4, [nd.ones(shape, ctx=mx.cpu(i)) for i in range(4)])
    kv.pull(4, out=a)
    r.value("fresh key 4 after list push of 4 ones with stored += 2*input", a.asnumpy())
    r.events.append({"updater_calls": len(calls), "updater_input_first_row": calls[0][1][0] if calls else None})
    return r.events


def main():
    scenarios = {spec["name"]: run_scenario(spec) for spec in SCENARIOS}
    document = {
        "mxnet_version": mx.__version__,
        "numpy_version": np.__version__,
        "generator": "tests/data/make_mxnet_reference.py",
        "notes": [
            "All arrays are float32 values written as JSON numbers.",
            "kwargs are passed as mx.optimizer.create(optimizer, **kwargs); kv = mx.kv.create('local').",
            "expected[i][str(key)] is the pulled weight of every key after step i.",
            "state_after is read from kv._updater.states (kv.set_optimizer on a local store installs "
            "mx.optimizer.Updater as kv._updater): SGD momentum -> NDArray, Adam -> (mean, var), "
            "plain SGD -> None (recorded as {}).",
            "update_counts is kv._updater.optimizer._index_update_count (per-key step counts).",
            "mxnet_resume: MXNet's own save_optimizer_states/load_optimizer_states into a fresh store "
            "after 2 pushes, compared with the uninterrupted run. Without dump_optimizer MXNet pickles "
            "only the states, not the step counts, so Adam restarts its bias correction at t=1.",
        ],
        "scenarios": scenarios,
        "seed": {
            "source": ("the tutorial kvcli was specified from (KVStore sections; its visualisation example is "
                       "tests/data/seed_visualisation_example.txt)"),
            "quirks": [
                "kv.init of an already initialised key raises MXNetError 'duplicate init of key 3' "
                "(kvstore_local.h:228); the stored value is unchanged.",
                "KVStore has no public set_updater in 1.9.1 (AttributeError); kv._set_updater works.",
                "custom updater is called once per key with the summed list, key passed as int; "
                "input_value.shape prints as (2, 2) (the tutorial shows (2,2)).",
            ],
            "walkthrough": seed_walkthrough(),
            "complete_example_and_multi_key": seed_complete_example(),
            "fresh_key_workaround": seed_fresh_key_reinit(),
        },
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
