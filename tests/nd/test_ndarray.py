"""NDArray behaviour beyond the recorded cases: errors, identity, in-place rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx import nd
from kvcli.errors import NDArrayError


def test_float64_numpy_input_becomes_float32_and_works_with_a_store() -> None:
    value = nd.array(np.ones((2, 2)))
    assert value.dtype == np.float32
    assert nd.array(np.ones(2), dtype="float64").dtype == np.float64
    kv = mx.kv.create("local")
    kv.init(3, value)
    kv.push(3, nd.ones((2, 2)) * 4)  # a float32 push onto the float32 value
    out = nd.zeros((2, 2))
    kv.pull(3, out=out)
    assert out.asnumpy().tolist() == [[4, 4], [4, 4]]


def test_copyto_self_warns_and_returns_false() -> None:
    a = nd.ones(2)
    with pytest.warns(RuntimeWarning, match="copy an array to itself"):
        assert a.copyto(a) is False
    with pytest.raises(TypeError, match="copyto does not support type int"):
        a.copyto(3)  # type: ignore[arg-type]


def test_copies_do_not_share_memory() -> None:
    a = nd.array([[1.0, 2.0], [3.0, 4.0]])
    for copy in (a.T, a.copyto(mx.cpu(1)), a.as_in_context(mx.gpu(0)), a.astype("float32")):
        copy[:] = 0
    assert a.asnumpy().tolist() == [[1, 2], [3, 4]]
    a[0:1][:] = 7  # but a basic slice is a view, as in MXNet
    assert a.asnumpy().tolist() == [[7, 7], [3, 4]]


def test_truth_value_and_hash() -> None:
    assert bool(nd.array([2.0])) and not bool(nd.array([0.0])) and not bool(nd.array([]))
    with pytest.raises(NDArrayError, match="ambiguous"):
        bool(nd.ones(2))
    a = nd.ones(2)
    assert {a: 1}[a] == 1  # hashable by identity, as in MXNet


def test_in_place_ops_keep_shape_and_dtype() -> None:
    a = nd.ones((1, 3), dtype="int32")
    with pytest.raises(NDArrayError, match="in-place add"):
        a += nd.ones((2, 3), dtype="int32")
    assert a.asnumpy().tolist() == [[1, 1, 1]]
    with pytest.raises(NDArrayError, match="dtypes float32 and int32"):
        nd.ones(3) + a[0]
    with pytest.raises(TypeError, match="type str not supported"):
        nd.ones(3) + "x"


def test_function_errors_name_the_fix() -> None:
    with pytest.raises(NDArrayError, match=r"shapes \(2,\) and \(3,\)"):
        nd.dot(nd.ones(2), nd.ones(3))
    with pytest.raises(NDArrayError, match="int32 is not supported"):
        nd.dot(nd.ones(2, dtype="int32"), nd.ones(2, dtype="int32"))
    with pytest.raises(NDArrayError, match="at least one array"):
        nd.concat()
    with pytest.raises(TypeError, match="wrap it with nd.array"):
        nd.sqrt([1.0, 4.0])  # type: ignore[arg-type]


def test_elementwise_functions_take_numbers_either_side() -> None:
    assert nd.maximum(2, 3) == 3 and nd.minimum(2.5, 1) == 1
    np.testing.assert_array_equal(nd.subtract(10, nd.array([1.0, 2.0])).asnumpy(), [9, 8])
    np.testing.assert_array_equal(nd.power(nd.array([2.0, 3.0]), 2).asnumpy(), [4, 9])
    np.testing.assert_array_equal(nd.greater(nd.array([1.0, 3.0]), 2).asnumpy(), [0, 1])


def test_numpy_arrays_on_the_left_give_ndarrays() -> None:
    result = np.ones(2, np.float32) * nd.array([2.0, 3.0])
    assert isinstance(result, nd.NDArray) and result.asnumpy().tolist() == [2, 3]


def test_zeros_with_dtype_none_is_float32() -> None:
    assert nd.zeros((2,), dtype=None).dtype == np.float32 and nd.empty((1,), dtype=None).dtype == np.float32


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32", "int8", "uint8", "int64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "mod", "pow"])
def test_in_place_equals_out_of_place(dtype: str, op: str) -> None:
    signed = not dtype.startswith("u")
    a = nd.array([[7, -3 if signed else 3, 2], [0, 5, -8 if signed else 8]], dtype=dtype)
    b = nd.array([[2, 2, 3], [1, 4, 3]], dtype=dtype)
    for other in (b, b[0:1], 2, 1.5):
        want = getattr(a, f"__{op}__")(other).asnumpy()
        x = a.copy()
        view_before = x._kvcli_buffer()
        getattr(x, f"__i{op}__")(other)
        assert x._kvcli_buffer() is view_before and x.dtype == a.dtype  # written in place
        np.testing.assert_array_equal(x.asnumpy(), want)


@pytest.mark.parametrize("call", [
    lambda: nd.exp(nd.ones((2,)), foo=1),          # MXNet 1.9.1 ignores foo here
    lambda: nd.sqrt(nd.ones((2,)), foo=1),         # ... and here
    lambda: nd.ones_like(nd.ones((2,)), foo=2),    # ... and here
    lambda: nd.ones((2,), fill=3),
    lambda: nd.sum(nd.ones((2,)), axes=0),
    lambda: nd.ones((2,)).sum(keepdim=True),
    lambda: nd.random.uniform(0, 1, shape=(2,), sape=3),
    lambda: nd.random_normal(shape=(2,), foo=1),
    lambda: nd.take(nd.ones((2,)), nd.array([0]), axes=0),
])
def test_unknown_keyword_is_an_error(call: Any) -> None:
    """A misspelt keyword is never silently ignored (MXNet ignores some)."""
    with pytest.raises(TypeError):
        call()


def test_ones_out_fills_out_and_keeps_its_identity() -> None:
    """``nd.ones((2, 2), out=o)`` used to leave ``o`` unfilled (the keyword was ignored)."""
    o = nd.zeros((2, 2))
    assert nd.ones((2, 2), out=o) is o
    assert o.asnumpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    view = nd.zeros((3, 2))
    nd.full((2,), 4, out=view[1])
    assert view.asnumpy().tolist() == [[0, 0], [4, 4], [0, 0]]


def test_unpickles_the_state_mxnet_pickled() -> None:
    """MXNet's pickled state (recorded: ``{'handle': <.params record>}``) unpickles here,
    onto cpu(0) as in MXNet, with its dtype and values."""
    from .conftest import load_reference

    cases = {c["name"]: c["mxnet"] for c in load_reference()["cases"]}
    y = nd.zeros((1,))
    y.__setstate__({"handle": bytearray.fromhex(cases["pickle_state_ctx"]["value"])})
    assert y.dtype == np.float32 and y.asnumpy().tolist() == [1.0, 2.0] and y.context == mx.cpu(0)
    y.__setstate__({"handle": bytearray.fromhex(cases["pickle_state_int"]["value"])})
    assert y.dtype == np.int32 and y.asnumpy().tolist() == [[7, -3, 2], [0, 5, -8]]


def test_reshape_differences_from_mxnet_are_the_documented_ones() -> None:
    """docs/mxnet-layer.md, Differences: ``nd.reshape`` never changes the element count (MXNet's operator
    returns values read past the end), and -1 after -2 is inferred where it stands."""
    x = nd.arange(24).reshape((2, 3, 4))
    with pytest.raises(NDArrayError):
        nd.reshape(x, shape=(5, 5))
    assert nd.reshape(x, shape=(2, -2, -1)).shape == (2, 3, 4, 1)
    assert x.reshape((-1, 2, -2)).shape == (3, 2, 4)


def test_broadcast_and_elemwise_operators_take_arrays_only() -> None:
    """``nd.broadcast_add(a, 1)`` is an error in MXNet 1.9.1 (an assertion) and here (TypeError);
    ``nd.add`` is the form that takes a number."""
    a = nd.ones((2,))
    with pytest.raises(TypeError):
        nd.broadcast_add(a, 1)
    with pytest.raises(TypeError):
        nd.elemwise_mul(2, a)
    assert nd.add(a, 1).asnumpy().tolist() == [2.0, 2.0]


def test_arange_refuses_what_it_cannot_do() -> None:
    with pytest.raises(NDArrayError, match="infer_range"):
        nd.arange(0, 3, infer_range=True)
    with pytest.raises(NDArrayError, match="step"):
        nd.arange(0, 3, 0)
    assert nd.arange(0, 3, infer_range=False).asnumpy().tolist() == [0.0, 1.0, 2.0]
