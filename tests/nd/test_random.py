"""``nd.random`` / ``mx.random``: distributions, shapes, dtypes and seeding rules.

kvcli's streams are numpy's, not MXNet's, so these test statistics and reproducibility,
not MXNet's exact numbers (docs/mxnet-layer.md: "Differences from MXNet").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx import nd
from kvcli.errors import NDArrayError

from . import random_rule_programs

RULES = Path(__file__).resolve().parents[1] / "data" / "mxnet_random_rules.json"

N = 200_000


@pytest.fixture(autouse=True)
def _reseed() -> None:
    mx.random.seed(1234)


def test_uniform_and_normal_statistics() -> None:
    u = nd.random.uniform(-2, 6, shape=(N,)).asnumpy()
    assert u.dtype == np.float32 and u.min() >= -2 and u.max() < 6
    assert abs(u.mean() - 2) < 0.03 and abs(u.var() - 64 / 12) < 0.05
    g = mx.random.normal(3, 0.5, shape=(N,)).asnumpy()
    assert abs(g.mean() - 3) < 0.01 and abs(g.std() - 0.5) < 0.01
    assert abs(np.mean(np.abs(g - 3) < 0.5) - 0.6827) < 0.01  # one sigma


def test_other_distributions_statistics() -> None:
    assert abs(nd.random.exponential(2.0, shape=(N,)).asnumpy().mean() - 2.0) < 0.03
    p = nd.random.poisson(4.0, shape=(N,)).asnumpy()
    assert p.dtype == np.float32 and abs(p.mean() - 4) < 0.03 and abs(p.var() - 4) < 0.06
    gm = nd.random.gamma(2.0, 3.0, shape=(N,)).asnumpy()
    assert abs(gm.mean() - 6) < 0.08
    r = nd.random.randint(3, 7, shape=(N,))
    assert r.dtype == np.int32 and set(np.unique(r.asnumpy())) == {3, 4, 5, 6}
    assert nd.random.randn(2, 3).shape == (2, 3)


def test_shapes_dtypes_contexts_and_out() -> None:
    assert nd.random.uniform().shape == (1,)  # MXNet draws one value without a shape
    assert nd.random.normal(shape=3, dtype="float64").dtype == np.float64
    assert nd.random.uniform(ctx=mx.gpu(1), shape=(2,)).context == mx.gpu(1)
    with mx.cpu(2):
        assert nd.random.uniform(shape=(2,)).context == mx.cpu(2)
    out = nd.zeros((4, 5))
    assert nd.random.uniform(10, 11, shape=(4, 5), out=out) is out
    assert out.asnumpy().min() >= 10


def test_ndarray_parameters_draw_per_element() -> None:
    low, high = nd.array([0.0, 100.0]), nd.array([1.0, 101.0])
    x = nd.random.uniform(low, high, shape=(1000,))
    assert x.shape == (2, 1000)  # param.shape + shape, as in MXNet
    assert x.asnumpy()[0].max() < 1 and x.asnumpy()[1].min() >= 100
    with pytest.raises(NDArrayError, match="every distribution parameter"):
        nd.random.uniform(low, 5.0, shape=(3,))


def test_seed_reproduces_and_different_seeds_differ() -> None:
    mx.random.seed(7)
    a = nd.random.normal(shape=(50,)).asnumpy()
    mx.random.seed(7)
    b = nd.random.normal(shape=(50,)).asnumpy()
    mx.random.seed(8)
    c = nd.random.normal(shape=(50,)).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_which_draws_repeat_which_is_mxnets() -> None:
    """One stream for every CPU context, seed(s, ctx) and seed(s) alike for the samplers,
    shuffle's own stream (tests/data/make_mxnet_random_rules.py)."""
    want = json.loads(RULES.read_text())
    assert want["mxnet"] == "1.9.1"
    got = random_rule_programs.relations(mx)
    assert {k: v for k, v in got.items() if want["relations"].get(k) != v} == {}
    assert set(got) == set(want["relations"])


def test_each_gpu_context_has_its_own_stream_seed_ctx_the_same_on_any() -> None:
    mx.random.seed(5)
    on0 = nd.random.uniform(shape=(20,), ctx=mx.gpu(0)).asnumpy()
    on1 = nd.random.uniform(shape=(20,), ctx=mx.gpu(1)).asnumpy()
    assert not np.array_equal(on0, on1)  # "all": seed and device id
    mx.random.seed(5, ctx=mx.gpu(1))
    mx.random.seed(5, ctx=mx.gpu(3))
    np.testing.assert_array_equal(
        nd.random.uniform(shape=(20,), ctx=mx.gpu(1)).asnumpy(), nd.random.uniform(shape=(20,), ctx=mx.gpu(3)).asnumpy()
    )


def test_out_without_shape_draws_outs_shape() -> None:
    out = nd.zeros((2, 5), dtype="float64")
    assert nd.random.uniform(2, 3, out=out) is out  # MXNet 1.9.1: out's shape, not one value
    assert out.asnumpy().min() >= 2 and out.asnumpy().std() > 0


def test_shuffle_permutes_rows() -> None:
    data = nd.arange(100).reshape((50, 2))
    shuffled = nd.random.shuffle(data)
    assert sorted(shuffled.asnumpy()[:, 0].tolist()) == data.asnumpy()[:, 0].tolist()
    np.testing.assert_array_equal(shuffled.asnumpy()[:, 1] - shuffled.asnumpy()[:, 0], 1)  # rows kept whole
    assert not np.array_equal(shuffled.asnumpy(), data.asnumpy())


@pytest.mark.parametrize("bad", [1.5, "3", -1, True])
def test_bad_seed_is_refused(bad: object) -> None:
    with pytest.raises(NDArrayError, match="seed_state"):
        mx.random.seed(bad)  # type: ignore[arg-type]


def test_bad_randint_bounds() -> None:
    with pytest.raises(NDArrayError, match="low < high"):
        nd.random.randint(5, 5, shape=(2,))


def test_a_fresh_process_is_reproducible_without_seeding() -> None:
    code = "import kvcli.mx as mx; print(mx.nd.random.uniform(shape=(3,)).asnumpy().tolist())"
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout for _ in range(2)}
    assert len(runs) == 1 and runs.pop().startswith("[")
