"""Worker functions tests/mx/test_kvstore_dist.py launches on W ranks (shipped to Ray's
workers by value, so they need no path setup). Each returns plain data."""

from __future__ import annotations

from typing import Any

import numpy as np

import kvcli.mx as mx
from kvcli.mx import nd


def compressed_run(run: dict[str, Any]) -> list[list[float]]:
    """Rank r pushes device r's recorded gradients of a 2-device MXNet run, compressed."""
    kv = mx.kv.create("dist_sync")
    try:
        kv.set_gradient_compression(run["params"])
        kv.init("w", nd.array(np.array(run["init"], np.float32)))
        pulled = []
        for step in run["grads"]:
            kv.push("w", nd.array(np.array(step[kv.rank], np.float32)))
            pulled.append(kv.pull("w").asnumpy().tolist())
        kv._barrier()
        return pulled
    finally:
        kv.close()


def broadcast_and_pushpull(shape: tuple[int, ...]) -> dict[str, Any]:
    """Rank r broadcasts r+1 (rank 0's wins), then pushpulls ones in place from 2 devices."""
    kv = mx.kv.create("dist_device_sync")
    try:
        out = nd.empty(shape)
        kv.broadcast(3, nd.ones(shape) * (kv.rank + 1), out)
        vals = [nd.ones(shape, mx.cpu(i)) for i in range(2)]
        kv.pushpull(3, vals)
        kv._barrier()
        return {"type": kv.type, "rank": kv.rank, "num_workers": kv.num_workers,
                "broadcast": out.asnumpy().tolist(), "pushpull": [v.asnumpy().tolist() for v in vals]}
    finally:
        kv.close()
