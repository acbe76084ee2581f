"""Worker functions tests/mx/test_kvstore_dist.py launches on W ranks (shipped to Ray's
workers by value, so they need no path setup). Each replays this rank's part of a job
recorded from real MXNet (tests/data/make_mxnet_kvstore_reference.py) and returns plain data."""

from __future__ import annotations

from typing import Any

import numpy as np

import kvcli.mx as mx
from kvcli.mx import nd

SHAPE = (4, 4)
KEYS = [5, 7, 11]


def add_updater(key: Any, recv: Any, local: Any) -> None:
    """MXNet test_kvstore.py's updater: ``local += recv``, with int keys."""
    assert isinstance(key, int)
    local += recv


def lists(values: Any) -> Any:
    return [lists(v) for v in values] if isinstance(values, list) else values.asnumpy().tolist()


def plain_run(kind: str, devices: int) -> dict[str, Any]:
    """MXNet's aggregator scenario, broadcast and in-place pushpull, on every rank."""
    kv = mx.kv.create(kind)
    try:
        devs = [mx.cpu(i) for i in range(devices)]
        kv.init(3, nd.zeros(SHAPE))
        kv.init(KEYS, [nd.zeros(SHAPE)] * 3)
        kv.push(3, [nd.ones(SHAPE, d) for d in devs])
        outs = [nd.empty(SHAPE, d) for d in devs]
        kv.pull(3, out=outs)
        result = {"type": kv.type, "rank": kv.rank, "num_workers": kv.num_workers, "aggregator_single": lists(outs)}
        kv.push(KEYS, [[nd.ones(SHAPE, d) * 2.0 for d in devs]] * 3)
        outs = [[nd.empty(SHAPE, d) for d in devs]] * 3
        kv.pull(KEYS, out=outs)
        result["aggregator_list"] = lists(outs)
        out = nd.empty(SHAPE)
        kv.broadcast(20, nd.ones(SHAPE) * (kv.rank + 1), out)  # rank 0's value wins
        result["broadcast"] = lists(out)
        vals = [nd.ones(SHAPE, d) for d in devs[:2]]
        kv.pushpull(20, vals)
        result["pushpull_in_place"] = lists(vals)
        kv._barrier()
        return result
    finally:
        kv.close()


def compressed_run(kind: str, recorded: list[dict[str, Any]]) -> dict[str, Any]:
    """This rank pushes the gradients MXNet's worker of the same rank pushed, compressed."""
    kv = mx.kv.create(kind)
    try:
        mine = recorded[kv.rank]
        shape = tuple(mine["shape"])
        kv.set_gradient_compression(mine["params"])
        kv.init(0, nd.array(np.array(mine["init"], np.float32)))
        pulled = []
        for step in mine["grads"]:
            values = [nd.array(np.array(g, np.float32), ctx=mx.cpu(i)) for i, g in enumerate(step)]
            kv.push(0, values if len(values) > 1 else values[0])
            out = nd.zeros(shape)
            kv.pull(0, out=out)
            pulled.append(out.asnumpy().tobytes())
        kv._barrier()
        return {"type": kv.type, "rank": kv.rank, "pulled": pulled}
    finally:
        kv.close()
