"""The MXNet-style shim: NDArray behaviour that KVStore code written for MXNet relies on."""

from __future__ import annotations

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx import nd


def test_ndarray_defaults_and_contexts() -> None:
    a = nd.ones((2, 3), ctx=mx.gpu(1))
    assert a.shape == (2, 3) and a.dtype == np.float32 and a.context == mx.gpu(1)
    assert str(a.context) == "gpu(1)" and nd.zeros(2).context == mx.cpu(0)
    assert nd.array([[1, 2]]).dtype == np.float32  # MXNet: lists become float32
    assert nd.array(np.arange(3)).dtype == np.float32  # MXNet 1.9.1: numpy arrays become float32 too
    assert nd.array(np.arange(3), dtype="int64").dtype == np.int64
    assert repr(nd.ones((1, 2))).endswith("<NDArray 1x2 @cpu(0)>")


def test_in_place_slice_update_changes_the_array() -> None:
    stored = nd.ones((2, 2)) * 4
    stored[:] += nd.ones((2, 2)) * 2
    np.testing.assert_array_equal(stored.asnumpy(), np.full((2, 2), 6))
    stored[0] = 0
    np.testing.assert_array_equal(stored.asnumpy(), [[0, 0], [6, 6]])
    stored += 1
    np.testing.assert_array_equal(stored.asnumpy(), [[1, 1], [7, 7]])


def test_arithmetic_returns_ndarrays_on_the_same_context() -> None:
    a = nd.full((2,), 3.0, ctx=mx.cpu(2))
    for result, expected in ((a * 2, 6), (2 * a, 6), (a + a, 6), (1 - a, -2), (a / 3, 1), (a ** 2, 9), (-a, -3)):
        assert isinstance(result, nd.NDArray) and result.context == mx.cpu(2)
        np.testing.assert_array_equal(result.asnumpy(), [expected, expected])
    assert isinstance(np.ones(2, np.float32) + a, nd.NDArray)


def test_asnumpy_is_a_copy() -> None:
    a = nd.zeros((2,))
    copy = a.asnumpy()
    copy[:] = 5
    np.testing.assert_array_equal(a.asnumpy(), [0, 0])
    assert a.sum().asscalar() == 0


def test_kv_with_mxnet_optimizer_objects() -> None:
    with mx.kv.create("local") as kv:
        kv.init(0, nd.ones((3,)))
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.0))
        kv.push(0, nd.ones((3,)))
        out = nd.zeros((3,))
        assert kv.pull(0, out=out) is None  # as MXNet's: the value is in out
        np.testing.assert_allclose(out.asnumpy(), [0.5, 0.5, 0.5])
        kv.set_optimizer(mx.optimizer.create("adam", learning_rate=0.1))
        assert kv.updater_spec == "adam:lr=0.1"


def test_updater_sees_ndarrays_with_asnumpy() -> None:
    seen = []
    with mx.kv.create("local") as kv:
        kv.init("w", nd.zeros((2,)))
        kv._set_updater(lambda key, value, stored: seen.append((key, value.asnumpy().tolist(), type(stored))))
        kv.push("w", [nd.ones((2,)), nd.ones((2,))])
    assert seen == [(b"w", [2.0, 2.0], nd.NDArray)]  # a str key as bytes, as MXNet hands it (a C string)


def test_unknown_optimizer_and_context() -> None:
    from kvcli.errors import UpdaterError

    with pytest.raises(UpdaterError, match="unknown optimizer 'lamda'"):
        mx.optimizer.create("lamda")
    with pytest.raises(ValueError, match="unknown device type"):
        mx.Context("tpu", 0)
