"""``kvcli.mx.test_utils``' helpers from MXNet's test suite (``common.with_seed`` and friends,
nose's ``raises``), which tools/mxnet_unittests.py maps MXNet's test imports to."""

from __future__ import annotations

import random

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx.test_utils import array, assert_exception, assertRaises, raises, setup_module, teardown, with_seed


def _draws() -> tuple[float, float, list[float]]:
    return float(np.random.rand()), random.random(), mx.random.uniform(shape=(3,)).asnumpy().tolist()


def test_with_seed_fixed_seed_repeats_every_stream_and_restores_numpy() -> None:
    seen = []

    @with_seed(1234)
    def body() -> None:
        seen.append(_draws())

    np.random.seed(7)
    expected_next = np.random.RandomState(7).rand()
    body()
    body()
    assert seen[0] == seen[1]
    assert seen[0][0] == np.random.RandomState(1234).rand()  # numpy seeded with 1234 itself
    assert float(np.random.rand()) == expected_next  # the global numpy state came back


def test_with_seed_takes_mxnet_test_seed_and_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MXNET_TEST_SEED", "99")
    monkeypatch.setenv("MXNET_TEST_COUNT", "3")
    seen = []

    @with_seed()
    def body() -> None:
        seen.append(_draws())

    body()
    assert len(seen) == 3 and seen[0] == seen[1] == seen[2]
    assert seen[0][0] == np.random.RandomState(99).rand()


def test_with_seed_reraises_and_keeps_the_test_name() -> None:
    @with_seed(1)
    def test_fails() -> None:
        raise KeyError("boom")

    assert test_fails.__name__ == "test_fails"
    with pytest.raises(KeyError):
        test_fails()


def test_setup_module_uses_mxnet_module_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MXNET_MODULE_SEED", "5")
    setup_module()
    first = _draws()
    setup_module()
    assert _draws() == first and first[0] == np.random.RandomState(5).rand()
    teardown()


def test_assert_raises_and_nose_raises() -> None:
    assertRaises(ValueError, int, "x")
    with pytest.raises(AssertionError, match="int did not raise KeyError"):
        assertRaises(KeyError, int, "1")
    assert_exception(int, ValueError, "x")  # MXNet's order: the function first
    with pytest.raises(AssertionError, match="int did not raise KeyError"):
        assert_exception(int, KeyError, "1")
    with pytest.raises(ValueError):  # another exception is not swallowed
        assert_exception(int, KeyError, "x")

    @raises(UserWarning)
    def raising() -> None:
        raise UserWarning("scheduler set")

    @raises(UserWarning, KeyError)
    def quiet() -> None:
        pass

    raising()
    with pytest.raises(AssertionError, match="quiet did not raise UserWarning or KeyError"):
        quiet()


def test_array_is_nd_array() -> None:
    assert array is mx.nd.array
    assert array([1, 2]).asnumpy().tolist() == [1.0, 2.0]
