"""One MXNet 1.9.1 ``dist_sync`` worker for ``bench/dist.py --mxnet-python PY``.

Run by MXNet's own Python (never imported by kvcli), with the ``DMLC_*`` variables that
ps-lite reads; bench/dist.py starts the scheduler, the servers and W of these. Each step
pushes every key and pulls it back, as the kvcli worker does; prints one JSON line.

    DMLC_ROLE=worker ... python mxnet_dist_worker.py ELEMENTS STEPS KEYS [SGD_LEARNING_RATE]

A learning rate above 0 sets an SGD optimizer on the servers (MXNet's update_on_kvstore).
"""

import json
import sys
import time

import mxnet as mx


def main() -> None:
    elements, steps, count = (int(a) for a in sys.argv[1:4])
    learning_rate = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    kv = mx.kv.create("dist_sync")
    if learning_rate > 0:
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=learning_rate))
    keys = list(range(count))
    values = [mx.nd.ones((elements,)) for _ in keys]
    outs = [mx.nd.zeros((elements,)) for _ in keys]
    kv.init(keys, [mx.nd.zeros((elements,)) for _ in keys])
    for _ in range(3):  # warm-up, as for kvcli
        kv.push(keys, values)
        kv.pull(keys, out=outs)
        mx.nd.waitall()
    kv._barrier()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        kv.push(keys, values)
        kv.pull(keys, out=outs)
        mx.nd.waitall()
        times.append(time.perf_counter() - start)
    # Only the timing is compared: without an optimizer, MXNet 1.9.1's server does not
    # assign each step's sum (its value grows from step to step), so no value is checked.
    kv._barrier()
    print(json.dumps({"rank": kv.rank, "times": times}), flush=True)


if __name__ == "__main__":
    main()
