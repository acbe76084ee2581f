"""``nd``'s reductions, element-wise maths and shape functions (MXNet 1.9.1's rules, on
:mod:`kvcli.mx.ndarray.ops`), kept apart from :mod:`kvcli.mx.ndarray`'s arrays and creation functions.

The package ``kvcli.mx.ndarray`` exports each function of :data:`__all__` (``nd.sum`` is
:func:`sum`) and attaches the usual ones to NDArray as methods (:func:`fluent_methods`:
``a.sum(axis=1)`` is ``nd.sum(a, axis=1)``). Each takes ``out=`` where MXNet's does and
refuses a keyword it does not know (``TypeError``).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from kvcli.mx.ndarray import ndarray as nd_arrays
from kvcli.mx.ndarray import ops as nd_ops
from kvcli.mx.ndarray.ndarray import (
    DEFAULT_DTYPE,
    NDArray,
    as_context,
    check_out,
    flatten,
    make_result,
    operand_data,
)
from kvcli.mx.ndarray.context import Context
from kvcli.errors import NDArrayError


def reshape(data: NDArray, shape: Any = None, reverse: bool = False, out: NDArray | None = None,
            name: str | None = None) -> NDArray:
    """MXNet's ``nd.reshape``: a copy in a new shape (special values as :meth:`NDArray.reshape`)."""
    values = operand_data(data, "reshape")
    if shape is None:
        raise TypeError("reshape needs a shape: nd.reshape(x, shape=(2, -1))")
    return make_result("reshape", values.reshape(nd_ops.reshape_shape(values.shape, shape, reverse)), data.context, out)


#: The reductions MXNet runs on an array with a zero-size axis when reducing every axis
#: (a sum of nothing is 0, a mean NaN, a product 1); ``max``, ``min`` and the rest refuse.
_EMPTY_OK = frozenset({"sum", "mean", "prod", "nansum", "nanprod"})


def _make_reduction(kind: str) -> Callable[..., NDArray]:
    def function(data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False,
                 out: NDArray | None = None, name: str | None = None) -> NDArray:
        values = operand_data(data, kind, empty_ok=axis is None and not exclude and kind in _EMPTY_OK)
        return make_result(kind, nd_ops.reduce(kind, values, axis, keepdims, exclude), data.context, out)

    function.__name__ = kind
    function.__doc__ = (f"MXNet's ``nd.{kind}`` over ``axis`` (None or ``()``: every axis, giving shape ``(1,)``; "
                        f"``exclude=True``: every other axis), in the input's dtype.")
    return function


sum = _make_reduction("sum")  # noqa: A001 - MXNet's names, shadowing builtins as nd.sum does
mean = _make_reduction("mean")
max = _make_reduction("max")  # noqa: A001
min = _make_reduction("min")  # noqa: A001
prod = _make_reduction("prod")
nansum = _make_reduction("nansum")
nanprod = _make_reduction("nanprod")


def _make_arg_reduction(kind: str) -> Callable[..., NDArray]:
    def function(data: NDArray, axis: int | None = None, keepdims: bool = False, out: NDArray | None = None,
                 name: str | None = None) -> NDArray:
        return make_result(kind, nd_ops.arg_reduce(kind, operand_data(data, kind), axis, keepdims), data.context, out)

    function.__name__ = kind
    function.__doc__ = f"MXNet's ``nd.{kind}``: indices along ``axis`` (None: of the flattened array), in the input's dtype."
    return function


argmax = _make_arg_reduction("argmax")
argmin = _make_arg_reduction("argmin")


def _make_math(kind: str) -> Callable[..., NDArray]:
    def function(data: NDArray, out: NDArray | None = None, name: str | None = None) -> NDArray:
        return make_result(kind, nd_ops.math(kind, operand_data(data, kind)), data.context, out)

    function.__name__ = kind
    function.__doc__ = f"MXNet's ``nd.{kind}``, element-wise, in the input's dtype (integers are computed, then cast)."
    return function


#: Every element-wise maths function, one per entry of :data:`kvcli.mx.ndarray.ops.MATH`.
MATH_NAMES = nd_ops.MATH
for _name in MATH_NAMES:
    globals()[_name] = _make_math(_name)


def concatenate(arrays: Sequence[NDArray], axis: int = 0, always_copy: bool = True) -> NDArray:
    """MXNet's ``nd.concatenate``: a list of arrays joined along ``axis`` (default 0); one
    array with ``always_copy=False`` is returned itself."""
    if not always_copy and len(arrays) == 1:
        return arrays[0]
    items = [operand_data(a, "concatenate") for a in arrays]
    return NDArray(nd_ops.join("concatenate", items, axis, new_axis=False), as_context(arrays[0].context if arrays else None))


def split(data: NDArray, num_outputs: int, axis: int = 1, squeeze_axis: bool = False,
          name: str | None = None) -> "NDArray | list[NDArray]":
    """``num_outputs`` equal parts along ``axis`` (default 1): a list, or the one array
    when ``num_outputs=1`` (as in MXNet)."""
    parts = [NDArray(p, data.context) for p in nd_ops.split(operand_data(data, "split"), num_outputs, axis, squeeze_axis)]
    return parts[0] if len(parts) == 1 else parts


def slice_axis(data: NDArray, axis: int, begin: int, end: int | None, out: NDArray | None = None,
               name: str | None = None) -> NDArray:
    """A copy of ``begin:end`` along ``axis`` (negative values count from the end)."""
    return make_result("slice_axis", nd_ops.slice_axis(operand_data(data, "slice_axis"), axis, begin, end), data.context, out)


def where(condition: NDArray, x: NDArray, y: NDArray, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """``x`` where ``condition`` is non-zero, else ``y`` (see :func:`kvcli.mx.ndarray.ops.where`)."""
    values = nd_ops.where(operand_data(condition, "where"), operand_data(x, "where"), operand_data(y, "where"))
    return make_result("where", values, x.context, out)


def one_hot(indices: NDArray, depth: int, on_value: float = 1.0, off_value: float = 0.0, dtype: Any = DEFAULT_DTYPE,
            out: NDArray | None = None, name: str | None = None) -> NDArray:
    """``on_value`` at each index along a new last axis of size ``depth``, else ``off_value``."""
    values = nd_ops.one_hot(operand_data(indices, "one_hot"), depth, on_value, off_value, dtype)
    return make_result("one_hot", values, indices.context, out)


def take(a: NDArray, indices: NDArray, axis: int = 0, mode: str = "clip", out: NDArray | None = None,
         name: str | None = None) -> NDArray:
    """Slices of ``a`` along ``axis`` at ``indices``; out-of-range indices clip (or ``mode='wrap'``)."""
    return make_result("take", nd_ops.take(operand_data(a, "take"), operand_data(indices, "take"), axis, mode), a.context, out)


_TOPK_RETURNS = ("value", "indices", "mask", "both")


def topk(data: NDArray, axis: int | None = -1, k: int = 1, ret_typ: str = "indices", is_ascend: bool = False,
         dtype: Any = "float32", out: NDArray | None = None, name: str | None = None) -> "NDArray | list[NDArray]":
    """MXNet's ``nd.topk``: the ``k`` largest (``is_ascend``: smallest) elements along ``axis``
    (None: of the flattened array; ``k < 1``: all of them), sorted. ``ret_typ`` says what comes
    back: their ``indices`` (in ``dtype``, float32 by default), ``value``, ``both``
    (``[values, indices]``) or a ``mask`` of the input's shape with 1 where they are.

    The values are MXNet's. Equal values come in the order of their positions, which is
    MXNet's whenever its full sort runs (``8*k > n``) on at most 16 elements; otherwise
    MXNet's order of equal values is its C++ library's and may differ (the values do not)."""
    if ret_typ not in _TOPK_RETURNS:
        raise NDArrayError(f"topk: ret_typ must be one of {', '.join(_TOPK_RETURNS)}, not {ret_typ!r}")
    values = operand_data(data, "topk")
    source = values.reshape(-1) if axis is None else values
    if axis is not None and not -source.ndim <= axis < source.ndim:
        raise NDArrayError(f"topk: invalid axis {axis} for an array of {source.ndim} dimensions; "
                           f"axis should be between 0 and {source.ndim}")
    along = 0 if axis is None else axis % source.ndim
    count = source.shape[along]
    take_k = count if k <= 0 else k
    if take_k > count:
        raise NDArrayError(f"topk: k must be smaller than {count}, get k = {k}")
    moved = np.moveaxis(source, along, -1)
    if is_ascend:
        order = np.argsort(moved, axis=-1, kind="stable")
    else:  # descending, equal values still in the order of their positions
        order = (count - 1) - np.argsort(moved[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    order = order[..., :take_k]
    if ret_typ == "mask":
        mask = np.zeros_like(moved)
        np.put_along_axis(mask, order, 1, axis=-1)
        return make_result("topk", np.moveaxis(mask, -1, along).reshape(values.shape), data.context, out)
    picked = np.moveaxis(np.take_along_axis(moved, order, axis=-1), -1, along)
    indices = np.moveaxis(order, -1, along).astype(np.dtype(dtype))
    if ret_typ == "both":
        if out is not None:
            raise NDArrayError("topk: out= is for one result; ret_typ='both' returns two arrays")
        return [NDArray(picked, data.context), NDArray(indices, data.context)]
    return make_result("topk", picked if ret_typ == "value" else indices, data.context, out)


def add_n(*args: NDArray, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """The element-wise sum of same-shape, same-dtype arrays (MXNet's ``add_n`` /
    ``ElementWiseSum``: what a KVStore push from several devices computes)."""
    if not args:
        raise NDArrayError("add_n: give at least one array")
    arrays = [operand_data(a, "add_n") for a in args]
    nd_ops.check_same_dtype("add_n", *arrays)
    if any(a.shape != arrays[0].shape for a in arrays):
        raise NDArrayError(f"add_n: shapes {[a.shape for a in arrays]} differ: they must be equal")
    with np.errstate(all="ignore"):
        if len(arrays) <= 4:  # MXNet's kernel for 2-4 inputs: a[i] + (b[i] + (c[i] + d[i]))
            total = arrays[-1].copy()
            for extra in reversed(arrays[:-1]):
                total = extra + total
        else:  # more: one pass per input, left to right
            total = arrays[0].copy()
            for extra in arrays[1:]:
                total += extra
    return make_result("add_n", total, args[0].context, out)


ElementWiseSum = add_n


def random_uniform(low: float = 0.0, high: float = 1.0, shape: Any = None, ctx: Context | None = None,
                   dtype: Any = None, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """MXNet's old name of ``nd.random.uniform`` (same streams, :mod:`kvcli.mx.ndarray.random`)."""
    from kvcli.mx.ndarray import random as nd_random

    return nd_random.uniform(low, high, shape, dtype, ctx, out)


def random_normal(loc: float = 0.0, scale: float = 1.0, shape: Any = None, ctx: Context | None = None,
                  dtype: Any = None, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """MXNet's old name of ``nd.random.normal`` (same streams, :mod:`kvcli.mx.ndarray.random`)."""
    from kvcli.mx.ndarray import random as nd_random

    return nd_random.normal(loc, scale, shape, dtype, ctx, out)


def broadcast_like(lhs: NDArray, rhs: NDArray, lhs_axes: Any = None, rhs_axes: Any = None,
                   out: NDArray | None = None, name: str | None = None) -> NDArray:
    """``lhs`` broadcast to ``rhs``'s shape, or only its axes ``lhs_axes`` to the sizes of
    ``rhs``'s axes ``rhs_axes``."""
    values, like = operand_data(lhs, "broadcast_like"), operand_data(rhs, "broadcast_like")
    if lhs_axes is None and rhs_axes is None:
        target = like.shape
    else:
        given_l, given_r = tuple(lhs_axes or ()), tuple(rhs_axes or ())
        if not given_l or len(given_l) != len(given_r):
            raise NDArrayError(f"broadcast_like: lhs_axes {given_l} and rhs_axes {given_r} must be non-empty and "
                               f"of equal length")
        shape = list(values.shape)
        for a, b in zip(given_l, given_r):  # paired in the order given
            (mine,) = nd_ops.axes(values.ndim, a, "broadcast_like")
            (theirs,) = nd_ops.axes(like.ndim, b, "broadcast_like")
            shape[mine] = like.shape[theirs]
        target = tuple(shape)
    return make_result("broadcast_like", np.broadcast_to(values, nd_ops.broadcast_shape(values.shape, target)).copy(),
                   lhs.context, out)


def moveaxis(tensor: NDArray, source: Any, destination: Any) -> NDArray:
    """A copy with axes ``source`` moved to ``destination`` (ints or sequences, as numpy's)."""
    values = operand_data(tensor, "moveaxis")
    try:
        return NDArray(np.moveaxis(values, source, destination).copy(), tensor.context)
    except ValueError as error:  # numpy's AxisError is one
        raise NDArrayError(f"moveaxis: {error}") from None


def _row_positions(what: str, data: np.ndarray, index: np.ndarray) -> np.ndarray:
    if data.ndim != 2 or index.shape != (data.shape[0],):
        raise NDArrayError(f"{what}: needs a 2-d array and one index per row, not shapes {data.shape} and {index.shape}")
    return np.clip(np.trunc(index).astype(np.int64), 0, data.shape[1] - 1)


def choose_element_0index(lhs: NDArray, rhs: NDArray, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """MXNet's old ``choose_element_0index``: ``lhs[i, rhs[i]]`` for each row ``i`` (clipped)."""
    values = operand_data(lhs, "choose_element_0index")
    cols = _row_positions("choose_element_0index", values, operand_data(rhs, "choose_element_0index"))
    return make_result("choose_element_0index", values[np.arange(values.shape[0]), cols], lhs.context, out)


def fill_element_0index(lhs: NDArray, mhs: NDArray, rhs: NDArray, out: NDArray | None = None,
                        name: str | None = None) -> NDArray:
    """MXNet's old ``fill_element_0index``: ``lhs`` with ``lhs[i, rhs[i]] = mhs[i]``, a copy
    (or ``out``)."""
    values = operand_data(lhs, "fill_element_0index").copy()
    cols = _row_positions("fill_element_0index", values, operand_data(rhs, "fill_element_0index"))
    values[np.arange(values.shape[0]), cols] = operand_data(mhs, "fill_element_0index")
    return make_result("fill_element_0index", values, lhs.context, out)


def onehot_encode(indices: NDArray, out: NDArray) -> NDArray:
    """MXNet's old ``onehot_encode`` (``one_hot`` replaces it): ``out`` set to one row per
    index, of ``out``'s width."""
    check_out("onehot_encode", out)
    if out.ndim != 2:
        raise NDArrayError(f"onehot_encode: out must be 2-d, not of shape {out.shape}")
    values = nd_ops.one_hot(operand_data(indices, "onehot_encode"), out.shape[1], 1, 0, out._data.dtype)
    return make_result("onehot_encode", values, out.context, out)


#: MXNet's ``broadcast_*`` operators by their suffix, for the operator table of
#: :mod:`kvcli.mx.ndarray.ops` (``nd.add`` is the same operation and also takes numbers).
_BROADCAST = {
    "add": "add", "plus": "add", "sub": "sub", "minus": "sub", "mul": "mul", "div": "truediv", "mod": "mod",
    "power": "pow", "maximum": "maximum", "minimum": "minimum", "equal": "eq", "not_equal": "ne", "greater": "gt",
    "greater_equal": "ge", "lesser": "lt", "lesser_equal": "le",
}
#: MXNet's ``elemwise_*`` operators: as ``broadcast_*``, on arrays of one shape only.
_ELEMWISE = {"add": "add", "sub": "sub", "mul": "mul", "div": "truediv"}


def _make_binary(kind: str, mxnet_name: str, same_shape: bool) -> Callable[..., NDArray]:
    def function(lhs: NDArray, rhs: NDArray, out: NDArray | None = None, name: str | None = None) -> NDArray:
        x, y = operand_data(lhs, mxnet_name), operand_data(rhs, mxnet_name)
        if same_shape and x.shape != y.shape:
            raise NDArrayError(f"{mxnet_name}: shapes {x.shape} and {y.shape} differ: use broadcast_"
                               f"{mxnet_name.partition('_')[2]} to broadcast")
        return make_result(mxnet_name, nd_ops.binary(kind, x, y), lhs.context, out)

    function.__name__ = mxnet_name
    function.__doc__ = (f"MXNet's ``nd.{mxnet_name}`` of two NDArrays of one dtype"
                        f"{' and shape' if same_shape else ', broadcasting'} (MXNet's dtype rules).")
    return function


BINARY_NAMES = (*(f"broadcast_{n}" for n in _BROADCAST), *(f"elemwise_{n}" for n in _ELEMWISE))
for _suffix, _kind in _BROADCAST.items():
    globals()[f"broadcast_{_suffix}"] = _make_binary(_kind, f"broadcast_{_suffix}", same_shape=False)
for _suffix, _kind in _ELEMWISE.items():
    globals()[f"elemwise_{_suffix}"] = _make_binary(_kind, f"elemwise_{_suffix}", same_shape=True)


def broadcast_axis(data: NDArray, axis: Any = (), size: Any = (), out: NDArray | None = None,
                   name: str | None = None) -> NDArray:
    """Axes ``axis`` (each of size 1) repeated to ``size`` (MXNet's ``broadcast_axis`` /
    ``broadcast_axes``)."""
    values = operand_data(data, "broadcast_axis")
    given_axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    given_sizes = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    if len(given_axes) != len(given_sizes):
        raise NDArrayError(f"broadcast_axis: axis {given_axes} and size {given_sizes} must have equal lengths")
    target = list(values.shape)
    for a, n in zip(given_axes, given_sizes):
        (position,) = nd_ops.axes(values.ndim, a, "broadcast_axis")
        if values.shape[position] != 1:
            raise NDArrayError(f"broadcast_axis: axis {a} has size {values.shape[position]}, not 1")
        target[position] = int(n)
    return make_result("broadcast_axis", np.broadcast_to(values, tuple(target)).copy(), data.context, out)


broadcast_axes = broadcast_axis
#: MXNet's capitalised (symbol-era) names of the same operators.
Reshape, Flatten, SliceChannel = reshape, flatten, split


#: Functions of ``nd`` that MXNet 1.9.1's NDArray has no method for (``x.erf()`` is an AttributeError).
_NOT_METHODS = frozenset({"erf", "gamma", "gammaln", "negative", "softsign"})
#: The functions that are also NDArray methods (``a.sum(axis=1)`` is ``nd.sum(a, axis=1)``).
_FLUENT = tuple(name for name in (
    *nd_ops.REDUCTIONS, "argmax", "argmin", *MATH_NAMES, *nd_ops.UNARY, "norm", "clip", "transpose",
    "zeros_like", "ones_like", "split", "slice_axis", "take", "one_hot", "broadcast_like", "broadcast_axes", "topk",
) if name not in _NOT_METHODS)


def _make_fluent(function: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: NDArray, *args: Any, **kwargs: Any) -> Any:
        return function(self, *args, **kwargs)

    method.__name__ = function.__name__
    method.__doc__ = f"``nd.{function.__name__}(self, ...)``."
    return method


def fluent_methods() -> dict[str, Callable[..., Any]]:
    """Name -> NDArray method of every function that is also one (the package attaches them)."""
    return {name: _make_fluent(globals().get(name) or getattr(nd_arrays, name))
            for name in _FLUENT if name != "abs"}  # abs is NDArray.__abs__ already


__all__ = [
    "BINARY_NAMES", "Flatten", "Reshape", "SliceChannel", "broadcast_axes", "broadcast_axis",
    "ElementWiseSum", "MATH_NAMES", "add_n", "argmax", "argmin", "broadcast_like", "choose_element_0index",
    "concatenate", "fill_element_0index", "max", "mean", "min", "moveaxis", "nanprod",
    "nansum", "one_hot", "onehot_encode", "prod", "random_normal", "random_uniform", "reshape", "slice_axis", "split",
    "sum", "take", "topk", "where", *MATH_NAMES, *BINARY_NAMES,
]
