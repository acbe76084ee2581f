"""One worker of a ``dist_sync`` job, the pattern ``kvcli launch`` runs (as MXNet's
``tools/launch.py`` runs a training script): every rank runs this file, calls
``kvcli.create("dist_sync")``, and the launcher tells it its rank and the number of workers.

    kvcli launch -n 2 --servers 1 -- python examples/dist_worker.py

Each rank trains linear regression on its shard of the data (``dist_linear_regression.py``
makes the data); the server sums the ranks' gradients and runs SGD once per step, so every
rank ends with the same weights, whatever the number of workers. Rank 0 prints them; a rank
exits 1 if the weights did not converge.
"""

from __future__ import annotations

import sys

import numpy as np

import kvcli
from dist_linear_regression import LEARNING_RATE, SAMPLES, SHARDS, STEPS, make_data, shard_gradients


def main() -> int:
    _, _, w_true = make_data()
    with kvcli.create("dist_sync") as kv:
        kv.set_optimizer(f"sgd:lr={LEARNING_RATE},rescale_grad={1 / SAMPLES!r}")
        kv.init("w", np.zeros(len(w_true)))
        mine = [s for s in range(SHARDS) if s % kv.num_workers == kv.rank]  # this rank's shards
        w = kv.pull("w")
        for _ in range(STEPS):
            kv.push("w", shard_gradients(w, mine))
            kv.pull("w", out=w)
        kv.barrier()
        error = float(np.abs(w - w_true).max())
        if kv.rank == 0:
            print(f"{kv.num_workers} workers: w = {np.array2string(w, precision=4)}; max |w - w_true| = {error:.3g}")
    return 0 if error < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
