"""Record MXNet 1.9.1's KVStore behaviour into mxnet_kvstore_reference.json.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv):

    $MXNET_PYTHON tests/data/make_mxnet_kvstore_reference.py

Every case is a scenario from MXNet's own tests/python/unittest/test_kvstore.py and
test_kvstore_custom.py (dense parts), plus the API details kvcli matches (type names,
in-place pushpull, broadcast, errors) and 2-bit gradient compression runs. Inputs are
recorded next to the outputs, so tests/mx/ replays them without random numbers. Float32
values are written as Python floats, which read back to the same float32 bits.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).with_name("mxnet_kvstore_reference.json")
SHAPE = (4, 4)
KEYS = [5, 7, 11]
STR_KEYS = ["b", "c", "d"]
DEVS = [mx.Context("cpu", i) for i in range(4)]


def tolist(x):
    return x.asnumpy().tolist() if hasattr(x, "asnumpy") else np.asarray(x).tolist()


def raises(fn, *args, **kwargs):
    """The exception class name MXNet raised (forcing async errors with waitall), or None."""
    try:
        fn(*args, **kwargs)
        mx.nd.waitall()
    except Exception as error:  # noqa: BLE001 - we record whatever MXNet raises
        return type(error).__name__
    return None


def init_kv(name="local", str_keys=False):
    kv = mx.kv.create(name)
    if str_keys:
        kv.init("a", mx.nd.zeros(SHAPE))
        kv.init(STR_KEYS, [mx.nd.zeros(SHAPE)] * 3)
    else:
        kv.init(3, mx.nd.zeros(SHAPE))
        kv.init(KEYS, [mx.nd.zeros(SHAPE)] * 3)
    return kv


def basic_cases(name):
    """test_kvstore.py's dense scenarios on store type ``name``."""
    cases = {}
    for str_keys in (False, True):
        key, key_list = ("a", STR_KEYS) if str_keys else (3, KEYS)
        tag = "str" if str_keys else "int"
        kv = init_kv(name, str_keys)
        kv.push(key, mx.nd.ones(SHAPE))
        val = mx.nd.empty(SHAPE)
        kv.pull(key, out=val)
        cases[f"single_kv_pair_{tag}"] = tolist(val)

        kv = init_kv(name, str_keys)
        kv.push(key_list, [mx.nd.ones(SHAPE) * 4] * 3)
        vals = [mx.nd.empty(SHAPE)] * 3
        kv.pull(key_list, out=vals)
        cases[f"list_kv_pair_{tag}"] = [tolist(v) for v in vals]

        kv = init_kv(name, str_keys)
        kv.push(key, [mx.nd.ones(SHAPE, d) for d in DEVS])
        outs = [mx.nd.empty(SHAPE, d) for d in DEVS]
        kv.pull(key, out=outs)
        single = [tolist(o) for o in outs]
        kv.push(key_list, [[mx.nd.ones(SHAPE, d) * 2.0 for d in DEVS]] * 3)
        outs = [[mx.nd.empty(SHAPE, d) for d in DEVS]] * 3
        kv.pull(key_list, out=outs)
        cases[f"aggregator_{tag}"] = {"single": single, "list": [[tolist(o) for o in out] for out in outs]}

        kv = init_kv(name, str_keys)
        kv._set_updater(lambda k, recv, local: local.__iadd__(recv))
        kv.push(key, [mx.nd.ones(SHAPE, d) for d in DEVS])
        outs = [mx.nd.empty(SHAPE, d) for d in DEVS]
        kv.pull(key, out=outs)
        single = [tolist(o) for o in outs]
        for _ in range(4):
            kv.push(key_list, [[mx.nd.ones(SHAPE, d) for d in DEVS]] * 3)
        outs = [[mx.nd.empty(SHAPE, d) for d in DEVS]] * 3
        kv.pull(key_list, out=outs)
        cases[f"updater_{tag}"] = {"single": single, "list": [[tolist(o) for o in out] for out in outs]}

        kv = mx.kv.create(name)
        kv.init(key, mx.nd.ones(SHAPE) * 4)
        a = mx.nd.zeros(SHAPE)
        kv.pull(key, out=a)
        cases[f"init_{tag}"] = tolist(a)

        # the other kind of key is refused by init, push, pull
        other, other_list = ("a", STR_KEYS) if not str_keys else (3, KEYS)
        kv = init_kv(name, str_keys)
        dns = mx.nd.ones(SHAPE) * 2
        cases[f"invalid_key_types_{tag}"] = {
            "init": raises(kv.init, other, dns),
            "push": raises(kv.push, other, dns),
            "pull": raises(kv.pull, other, dns),
            "init_list": raises(kv.init, other_list, [dns] * 3),
            "push_list": raises(kv.push, other_list, [dns] * 3),
            "pull_list": raises(kv.pull, other_list, [dns] * 3),
        }

    kv = mx.kv.create(name)  # test_pull
    a, b = mx.nd.ones(SHAPE), mx.nd.zeros(SHAPE)
    kv.init("1", mx.nd.zeros(SHAPE))
    kv.push("1", [a, a, a, a])
    kv.pull("1", b)
    first = tolist(b)
    kv.init("2", mx.nd.zeros(SHAPE))
    kv.pull("2", b)
    cases["pull"] = [first, tolist(b)]
    return cases


def custom_cases():
    """test_kvstore_custom.py's scenarios, on 'device' and 'teststore'."""
    cases = {}
    for name in ("device", "teststore"):
        for key in (3, "a"):
            kv = mx.kv.create(name)
            ones, out = mx.nd.ones(SHAPE), mx.nd.empty(SHAPE)
            kv.broadcast(key, ones, out)
            out_list = [mx.nd.empty(SHAPE)] * 3
            kv.broadcast(key + key, ones, out_list)
            cases[f"broadcast_single_{name}_{key}"] = [tolist(out), [tolist(o) for o in out_list]]

            kv = mx.kv.create(name)
            kv.broadcast(key, mx.nd.zeros(SHAPE), out=mx.nd.empty(SHAPE))
            vals = [mx.nd.ones(SHAPE, d) for d in DEVS]
            outs = [mx.nd.empty(SHAPE, d) for d in DEVS]
            kv.pushpull(key, vals, out=outs)
            record = {"out": [tolist(o) for o in outs]}
            kv.pushpull(key, vals)
            record["in_place"] = [tolist(v) for v in vals]
            if name == "device":
                key_list = KEYS if key == 3 else STR_KEYS
                kv.broadcast(key_list, [mx.nd.zeros(SHAPE)] * 3, out=[mx.nd.empty(SHAPE)] * 3)
                vals = [[mx.nd.ones(SHAPE, d) * 2.0 for d in DEVS]] * 3
                outs = [[mx.nd.empty(SHAPE, d) for d in DEVS]] * 3
                kv.pushpull(key_list, vals, out=outs)
                record["list_out"] = [[tolist(o) for o in out] for out in outs]
                kv.pushpull(key_list, vals)
                record["list_in_place"] = [[tolist(v) for v in val] for val in vals]
            cases[f"pushpull_{name}_{key}"] = record

    kv = mx.kv.create("device")
    keys = KEYS
    kv.broadcast(keys, [mx.nd.ones(SHAPE)] * 3, [mx.nd.empty(SHAPE)] * 3)
    out_list = [[mx.nd.empty(SHAPE)] * 2 for _ in range(3)]
    kv.broadcast([k + k for k in keys], [mx.nd.ones(SHAPE)] * 3, out_list)
    cases["broadcast_list_device"] = [[tolist(o) for o in out] for out in out_list]

    kv = mx.kv.create("teststore")  # test_custom_store
    out = mx.nd.empty((1,))
    kv.broadcast(1, mx.nd.ones((1,)), out=out)
    first = tolist(out)
    arr_list = [mx.nd.empty((1,))] * 2
    kv.pushpull(1, [mx.nd.ones((1,))] * 2, out=arr_list)
    second = [tolist(a) for a in arr_list]
    kv.pushpull(1, arr_list)
    cases["custom_store"] = {
        "broadcast": first, "pushpull_out": second, "pushpull_in_place": [tolist(a) for a in arr_list],
        "is_capable_optimizer": type(kv).is_capable("optimizer"),
        "is_capable_unknown": raises(type(kv).is_capable, "sparse"),
        "set_optimizer": raises(kv.set_optimizer, mx.optimizer.create("sgd")),
        "save_optimizer_states": raises(kv.save_optimizer_states, "test"),
        "load_optimizer_states": raises(kv.load_optimizer_states, "test"),
        "type": kv.type, "rank": kv.rank, "num_workers": kv.num_workers,
    }

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @mx.kv.KVStoreBase.register
        class MyStore(mx.kv.KVStoreBase):  # a user store
            @property
            def type(self):
                return "mystore"

        made = mx.kv.create("MyStore")

        @mx.kv.KVStoreBase.register
        class mystore(mx.kv.KVStoreBase):  # noqa: N801 - the same name again
            pass

    cases["register"] = {
        "created_class": type(made).__name__, "type": made.type,
        "override_warned": any("overriding" in str(w.message) for w in caught),
        "base_broadcast": raises(mx.kv.KVStoreBase().broadcast, 1, None, None),
        "base_is_capable": raises(mx.kv.KVStoreBase().is_capable, "optimizer"),
    }
    return cases


def api_cases():
    cases = {}
    types = {}
    for name in ("local", "device", "local_allreduce_cpu", "local_allreduce_device", "local_update_cpu", "LOCAL"):
        kv = mx.kv.create(name)
        types[name] = {"type": kv.type, "rank": kv.rank, "num_workers": kv.num_workers,
                       "optimizer": kv.is_capable("optimizer"),
                       "is_capable_unknown": raises(kv.is_capable, "sparse")}
    cases["types"] = types
    cases["create_nccl"] = raises(mx.kv.create, "nccl")
    cases["create_bogus"] = raises(mx.kv.create, "bogus_store")
    cases["create_not_str"] = raises(mx.kv.create, 3)

    # nd.array of a float64 numpy array is float32 (MXNet's default dtype)
    cases["nd_array_dtype"] = str(mx.nd.array(np.ones((2, 2))).dtype.__name__)
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.array(np.ones((2, 2))))
    kv.push(3, mx.nd.ones((2, 2)) * 3)
    out = mx.nd.zeros((2, 2))
    kv.pull(3, out=out)
    cases["init_from_numpy_then_push"] = tolist(out)

    for name in ("local", "device"):
        kv = mx.kv.create(name)
        kv.init(9, mx.nd.zeros(SHAPE))
        # a wrong-shape push without an updater: MXNet 1.9.1 accepts it, and the stored
        # value takes the pushed shape (a pull into the original shape then fails)
        cases[f"wrong_shape_push_{name}"] = raises(kv.push, 9, mx.nd.ones((2, 2)))
        out = mx.nd.zeros((2, 2))
        kv.pull(9, out=out)
        cases[f"after_wrong_shape_push_{name}"] = tolist(out)
        cases[f"pull_original_shape_after_wrong_push_{name}"] = raises(kv.pull, 9, out=mx.nd.zeros(SHAPE))
        # broadcast of a key already initialised
        kv.broadcast(20, mx.nd.ones(SHAPE), mx.nd.empty(SHAPE))
        cases[f"broadcast_twice_{name}"] = raises(kv.broadcast, 20, mx.nd.ones(SHAPE) * 2, mx.nd.empty(SHAPE))
        cases[f"broadcast_wrong_out_shape_{name}"] = raises(kv.broadcast, 21, mx.nd.ones(SHAPE), mx.nd.empty((2, 2)))
        # init of one key with a list: one value stands for it; two are a duplicate init
        kv.init(30, [mx.nd.ones(SHAPE) * 7])
        out = mx.nd.zeros(SHAPE)
        kv.pull(30, out=out)
        cases[f"init_one_value_list_{name}"] = tolist(out)
        cases[f"init_two_value_list_{name}"] = raises(kv.init, 31, [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE) * 2])
        # pushpull in place of one array, with an updater
        kv = mx.kv.create(name)
        kv.init(4, mx.nd.ones(SHAPE))
        kv._set_updater(lambda k, recv, local: local.__iadd__(recv * 2))
        value = mx.nd.ones(SHAPE) * 3
        kv.pushpull(4, value)
        cases[f"pushpull_in_place_updater_{name}"] = tolist(value)
        kv._barrier()
    return cases


def compression_run(name, params, shape, steps, devices, updater, seed):
    """Push random gradients ``steps`` times from ``devices`` devices; pull after each."""
    rng = np.random.RandomState(seed)
    kv = mx.kv.create(name)
    kv.set_gradient_compression(params)
    init = rng.uniform(-1, 1, shape).astype(np.float32)
    kv.init("w", mx.nd.array(init))
    if updater == "add":
        kv._set_updater(lambda k, recv, local: local.__iadd__(recv))
    grads, pulled = [], []
    for _ in range(steps):
        step = [rng.uniform(-1, 1, shape).astype(np.float32) * np.float32(0.7) for _ in range(devices)]
        grads.append([g.tolist() for g in step])
        values = [mx.nd.array(g, ctx=DEVS[i]) for i, g in enumerate(step)]
        kv.push("w", values if devices > 1 else values[0])
        out = mx.nd.zeros(shape)
        kv.pull("w", out=out)
        pulled.append(tolist(out))
    return {"store": name, "params": params, "shape": list(shape), "devices": devices, "updater": updater,
            "init": init.tolist(), "grads": grads, "pulled": pulled}


def compression_cases():
    cases = {
        "single_push": compression_run("device", {"type": "2bit", "threshold": 0.5}, (3, 7), 5, 1, None, 1),
        "multi_device": compression_run("device", {"type": "2bit", "threshold": 0.5}, (4, 9), 6, 4, None, 2),
        "multi_device_updater": compression_run("device", {"type": "2bit", "threshold": 0.3}, (33,), 6, 2, "add", 3),
        "default_threshold": compression_run("local_allreduce_device", {"type": "2bit"}, (2, 8), 4, 2, "add", 4),
        "two_devices": compression_run("device", {"type": "2bit", "threshold": 0.25}, (5, 5), 5, 2, None, 5),
    }
    errors = {}
    kv = mx.kv.create("local")
    errors["local"] = raises(kv.set_gradient_compression, {"type": "2bit", "threshold": 0.5})
    for label, params in (("unknown_type", {"type": "1bit"}), ("zero_threshold", {"type": "2bit", "threshold": 0}),
                          ("negative_threshold", {"type": "2bit", "threshold": -1})):
        errors[label] = raises(mx.kv.create("device").set_gradient_compression, params)
    cases["errors"] = errors
    return cases


# ---------------------------------------------------------------------- real dist_sync
#: (name, store type, compression params or None, devices per worker, steps, seed)
DIST_RUNS = (
    ("plain", "dist_sync", None, 4, 0, 0),
    ("compressed", "dist_sync", {"type": "2bit", "threshold": 0.5}, 2, 5, 11),
    # a threshold that C++'s std::to_string (six decimals) changes on its way to the server
    ("compressed_device_sync", "dist_device_sync", {"type": "2bit", "threshold": 0.1234567}, 1, 5, 12),
)
DIST_SHAPE = (3, 7)


def dist_worker(run, out_path):
    """One worker of a real MXNet job (started by :func:`dist_cases` with DMLC_ROLE=worker)."""
    name, kind, params, devices, steps, seed = run
    kv = mx.kv.create(kind)
    rank = kv.rank
    result = {"type": kv.type, "rank": rank, "num_workers": kv.num_workers}
    devs = DEVS[:devices]
    if params is None:
        kv.init(3, mx.nd.zeros(SHAPE))
        kv.init(KEYS, [mx.nd.zeros(SHAPE)] * 3)
        kv.push(3, [mx.nd.ones(SHAPE, d) for d in devs])
        outs = [mx.nd.empty(SHAPE, d) for d in devs]
        kv.pull(3, out=outs)
        result["aggregator_single"] = [tolist(o) for o in outs]
        kv.push(KEYS, [[mx.nd.ones(SHAPE, d) * 2.0 for d in devs]] * 3)
        outs = [[mx.nd.empty(SHAPE, d) for d in devs]] * 3
        kv.pull(KEYS, out=outs)
        result["aggregator_list"] = [[tolist(o) for o in out] for out in outs]
        out = mx.nd.empty(SHAPE)
        kv.broadcast(20, mx.nd.ones(SHAPE) * (rank + 1), out)
        result["broadcast"] = tolist(out)
        vals = [mx.nd.ones(SHAPE, d) for d in devs[:2]]
        kv.pushpull(20, vals)
        result["pushpull_in_place"] = [tolist(v) for v in vals]
    else:
        kv.set_gradient_compression(params)
        rng = np.random.RandomState(seed)
        init = rng.uniform(-1, 1, DIST_SHAPE).astype(np.float32)  # the same on every rank
        kv.init(0, mx.nd.array(init))
        mine = np.random.RandomState(seed * 100 + rank)
        grads, pulled = [], []
        for _ in range(steps):
            step = [mine.uniform(-1, 1, DIST_SHAPE).astype(np.float32) * np.float32(0.7) for _ in devs]
            grads.append([g.tolist() for g in step])
            values = [mx.nd.array(g, ctx=devs[i]) for i, g in enumerate(step)]
            kv.push(0, values if devices > 1 else values[0])
            out = mx.nd.zeros(DIST_SHAPE)
            kv.pull(0, out=out)
            pulled.append(tolist(out))
        result.update(params=params, devices=devices, shape=list(DIST_SHAPE), init=init.tolist(),
                      grads=grads, pulled=pulled)
    kv._barrier()
    Path(out_path).write_text(json.dumps(result))


def dist_cases():
    """Run each of :data:`DIST_RUNS` as a real 2-worker, 1-server MXNet job on this host."""
    import os
    import socket
    import subprocess
    import sys
    import tempfile

    cases = {}
    for index, run in enumerate(DIST_RUNS):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = dict(os.environ, DMLC_PS_ROOT_URI="127.0.0.1", DMLC_PS_ROOT_PORT=str(port),
                   DMLC_NUM_SERVER="1", DMLC_NUM_WORKER="2")
        with tempfile.TemporaryDirectory() as folder:
            helpers = [subprocess.Popen([sys.executable, "-c", "import mxnet"], env=dict(env, DMLC_ROLE=role))
                       for role in ("scheduler", "server")]
            outs = [Path(folder) / f"rank{i}.json" for i in range(2)]
            workers = [subprocess.Popen([sys.executable, __file__, "--dist-worker", str(index), str(out)],
                                        env=dict(env, DMLC_ROLE="worker")) for out in outs]
            for process in workers + helpers:
                if process.wait(timeout=300) != 0:
                    raise SystemExit(f"dist run {run[0]}: a process failed")
            results = sorted((json.loads(out.read_text()) for out in outs), key=lambda r: r["rank"])
        cases[run[0]] = results
    return cases


def main():
    reference = {
        "mxnet": mx.__version__,
        "shape": list(SHAPE),
        "basic": {name: basic_cases(name) for name in ("local", "device")},
        "custom": custom_cases(),
        "api": api_cases(),
        "compression": compression_cases(),
        "dist": dist_cases(),
    }
    OUT.write_text(json.dumps(reference, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--dist-worker"]:
        dist_worker(DIST_RUNS[int(sys.argv[2])], sys.argv[3])
    else:
        main()
