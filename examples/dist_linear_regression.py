"""Linear regression with ``dist_sync``: 2 workers converge to the weights of 1 worker.

Each worker holds a shard of the data, computes the gradient of the squared error on its
shard and pushes it; the server sums the workers' gradients (in rank order) and runs SGD
once per step. The reference run is 1 worker that pushes the same shard gradients as two
"devices" — the same summed gradient — so the weights agree bit for bit.

    python examples/dist_linear_regression.py            # a local Ray instance
    KVCLI_RAY_ADDRESS=auto python examples/dist_linear_regression.py   # an existing cluster

It starts its own workers (``kvcli.store.ray.launch.launch``), so run it with ``python``, not
under ``kvcli launch`` (each rank would train again): ``examples/dist_worker.py`` is the
script for ``kvcli launch``.
"""

from __future__ import annotations

import sys

import numpy as np

import kvcli
from kvcli.store.ray.launch import launch

SAMPLES, FEATURES, SHARDS = 512, 8, 2
STEPS, LEARNING_RATE = 200, 0.5


def make_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features X, targets y = X @ w_true + noise, and w_true (every worker makes the same)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((SAMPLES, FEATURES))
    w_true = rng.standard_normal(FEATURES)
    y = x @ w_true + 0.01 * rng.standard_normal(SAMPLES)
    return x, y, w_true


def shard_gradients(w: np.ndarray, shards: list[int]) -> list[np.ndarray]:
    """Gradient of 0.5 * sum((X w - y)^2) over each of the given shards of the data."""
    x, y, _ = make_data()
    parts = np.array_split(np.arange(SAMPLES), SHARDS)
    return [x[parts[s]].T @ (x[parts[s]] @ w - y[parts[s]]) for s in shards]


def train_worker(steps: int = STEPS) -> np.ndarray:
    """One worker's loop: pull w, push the gradient of its shard(s), repeat."""
    with kvcli.create("dist_sync") as kv:
        # rescale_grad averages the summed gradient over all samples, as MXNet scripts do.
        kv.set_optimizer(f"sgd:lr={LEARNING_RATE},rescale_grad={1 / SAMPLES!r}")
        kv.init("w", np.zeros(FEATURES))
        # W=2: rank r owns shard r. W=1: the one worker owns both, pushed as two devices.
        mine = [kv.rank] if kv.num_workers == SHARDS else list(range(SHARDS))
        w = kv.pull("w")
        for _ in range(steps):
            kv.push("w", shard_gradients(w, mine))
            kv.pull("w", out=w)
        kv.barrier()
        return w


def train(num_workers: int, steps: int = STEPS) -> np.ndarray:
    """Train on ``num_workers`` workers (1 or 2) and return rank 0's weights."""
    return launch(train_worker, num_workers, args=(steps,))[0]


def main() -> int:
    _, _, w_true = make_data()
    two = train(2)
    one = train(1)
    print("w (2 workers):", np.array2string(two, precision=4))
    print("w (1 worker): ", np.array2string(one, precision=4))
    print("w (true):     ", np.array2string(w_true, precision=4))
    print(f"max |w2 - w1| = {np.abs(two - one).max():.3g}; max |w2 - w_true| = {np.abs(two - w_true).max():.3g}")
    same = np.array_equal(two, one) and np.abs(two - w_true).max() < 1e-2
    print("converged to the same weights" if same else "MISMATCH")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
