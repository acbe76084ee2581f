"""Pushes of key lists, run the same way on real MXNet 1.9.1 and on ``kvcli.mx``: keys listed
twice in one push or pushpull, keys out of order, int and str keys, one value or a list of
device values per entry, with no updater, a custom updater (which records the keys and sums
it is called with) or an optimizer.

``tests/data/make_mxnet_kv_key_lists.py`` makes the plans (seeded, plain data: the same plan
whatever numpy runs it) and records what MXNet does with them; ``tests/mx/test_kv_key_lists.py``
replays the recorded plans on kvcli. kvcli's code, nothing of MXNet's copied.
"""

from __future__ import annotations

import random
from typing import Any

KEYS = 4
SHAPE = (3,)
STEPS = 3
MODES = ("none", "custom", "sgd", "adam")


def _value(rng: random.Random) -> list[float]:
    """Fractions with different denominators, so a sum's order shows in its last bits."""
    return [rng.randint(-40, 40) / rng.choice((3.0, 7.0, 9.0, 11.0)) for _ in range(SHAPE[0])]


def make_plan(seed: int) -> dict[str, Any]:
    """One case: the store type, the key kind, the init order and the pushes (plain lists).

    Each key is pushed from the same number of devices at every step, split over one to
    three entries of the key list (MXNet's stores keep a merge buffer per key sized by its
    first push: another count is undefined behaviour there, and crashes)."""
    rng = random.Random(seed)
    str_keys = seed % 2 == 1
    names = [f"w{i}" for i in range(KEYS)] if str_keys else [rng.choice((1, 3, 5, 8, 13, 21)) * 10 + i
                                                             for i in range(KEYS)]
    init_order = names[:]
    rng.shuffle(init_order)
    devices = {name: rng.randint(1, 4) for name in names}
    steps = []
    for step in range(STEPS):
        entries = []
        for key in rng.sample(names[:3], rng.randint(1, 3)):
            first, n = 0, devices[key]
            while first < n:  # the key's devices, in one to three entries
                size = rng.randint(1, n - first)
                entries.append({"key": key, "devices": list(range(first, first + size)),
                                "values": [_value(rng) for _ in range(size)],
                                "as_list": size > 1 or rng.random() < 0.5})
                first += size
        rng.shuffle(entries)
        kind = "push" if step < STEPS - 1 else rng.choice(("push", "pushpull", "pushpull_out"))
        steps.append({"kind": kind, "entries": entries})
    return {"seed": seed, "kvtype": ("local", "device")[(seed // 2) % 2], "mode": MODES[(seed // 4) % len(MODES)],
            "init_order": init_order, "init_values": [_value(rng) for _ in names], "steps": steps,
            "pull_keys": names}


def run(mx: Any, plan: dict[str, Any], kv: Any = None) -> dict[str, Any]:
    """Run ``plan`` on ``kv`` (default: a new ``mx.kv`` store of the plan's type); the values
    pulled at the end, each pushpull's outputs and what a custom updater was called with."""
    nd = mx.nd
    kv = mx.kv.create(plan["kvtype"]) if kv is None else kv
    calls: list[Any] = []
    if plan["mode"] == "custom":
        def update(key: Any, grad: Any, weight: Any) -> None:
            calls.append([repr(key), grad.asnumpy().tolist()])
            weight[:] = weight * 0.5 + grad

        kv._set_updater(update)
    elif plan["mode"] == "sgd":
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01))
    elif plan["mode"] == "adam":
        kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.05))
    kv.init(plan["init_order"], [nd.array(v) for v in plan["init_values"]])
    pushpulled = []
    for step in plan["steps"]:
        keys = [e["key"] for e in step["entries"]]
        values = [[nd.array(v, ctx=mx.cpu(d)) for d, v in zip(e["devices"], e["values"])] if e["as_list"]
                  else nd.array(e["values"][0], ctx=mx.cpu(e["devices"][0])) for e in step["entries"]]
        if step["kind"] == "push":
            kv.push(keys, values)
        elif step["kind"] == "pushpull":
            kv.pushpull(keys, values)
            pushpulled = [[a.asnumpy().tolist() for a in (v if isinstance(v, list) else [v])] for v in values]
        else:
            outs = [nd.zeros(SHAPE) for _ in keys]
            kv.pushpull(keys, values, out=outs)
            pushpulled = [o.asnumpy().tolist() for o in outs]
    outs = [nd.zeros(SHAPE) for _ in plan["pull_keys"]]
    kv.pull(plan["pull_keys"], out=outs)
    return {"pulled": [o.asnumpy().tolist() for o in outs], "pushpulled": pushpulled, "calls": calls}
