"""Elementwise optimizer kernels run in blocks (kvcli/optim/blocks.py): the same bits as on
the whole arrays, and whole arrays where blocks would not be elementwise."""

from __future__ import annotations

import numpy as np
import pytest

import kvcli.optim as optim
from kvcli.optim import blocks

SIZE = 300_007  # several blocks of float32 and float64, and a short last one


def bits(array: np.ndarray) -> np.ndarray:
    return array.view(np.dtype(f"u{array.itemsize}"))


def run(monkeypatch: pytest.MonkeyPatch, name: str, kwargs: dict, dtype: str, whole: bool) -> list[np.ndarray]:
    if whole:
        monkeypatch.setattr(blocks, "BLOCK_BYTES", 1 << 40)
    rng = np.random.default_rng(7)
    weight = (rng.standard_normal(SIZE) * 3).astype(dtype)
    initial = weight.copy()
    opt = optim.create(name, **kwargs)
    state = opt.create_state(0, weight)
    for _ in range(3):
        grad = (rng.standard_normal(SIZE) * 5).astype(dtype)
        opt.update(0, weight, grad, state)
    assert (weight != initial).mean() > 0.99  # every block was updated
    states = [] if state is None else [state] if isinstance(state, np.ndarray) else list(state)
    monkeypatch.undo()
    return [weight, *states]


@pytest.mark.parametrize(("name", "kwargs"), [
    ("sgd", {"learning_rate": 0.1}),
    ("sgd", {"learning_rate": 0.1, "wd": 0.01, "momentum": 0.9}),
    ("sgd", {"learning_rate": 0.1, "wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 1.0}),
    ("adam", {"learning_rate": 0.01}),
    ("adam", {"learning_rate": 0.01, "wd": 0.01, "clip_gradient": 2.0}),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_blocks_give_the_bits_of_the_whole_arrays(monkeypatch, name, kwargs, dtype):
    blocked = run(monkeypatch, name, kwargs, dtype, whole=False)
    whole = run(monkeypatch, name, kwargs, dtype, whole=True)
    assert len(blocked) == len(whole)
    for mine, theirs in zip(blocked, whole):
        np.testing.assert_array_equal(bits(mine), bits(theirs))


def calls(*arrays) -> list[int]:
    sizes: list[int] = []
    blocks.blockwise(lambda *parts: sizes.append(next(p for p in parts if p is not None).size), *arrays)
    return sizes


def test_big_contiguous_arrays_go_in_blocks_and_the_rest_whole():
    block = blocks.BLOCK_BYTES // 4
    big = np.zeros(2 * block + 5, np.float32)
    assert calls(big, big.copy(), None) == [block, block, 5]
    assert calls(np.zeros(2 * block + 5)) == [block // 2] * 4 + [5]  # float64: half as many per block
    assert calls(big[:block]) == [block]  # one block's worth
    assert calls(big[::2]) == [big[::2].size]  # not contiguous
    assert calls(big, np.zeros(1, np.float32)) == [big.size]  # broadcast: not elementwise
