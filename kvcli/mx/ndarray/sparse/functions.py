"""MXNet's storage-type inference: what each ``nd`` function gives for sparse inputs.

One table (:data:`RULES`) says, per ``nd`` function name, how sparse inputs are treated,
as recorded from MXNet 1.9.1 (tests/data/make_mxnet_sparse_ops_reference.py):

* a sparse kernel keeps the storage type (``sqrt``, ``abs``, ... of a sparse array; ``x * 2``;
  ``x > 0``; ``elemwise_add`` of two csr arrays; ``dot(csr.T, dense)`` -> row_sparse; ...);
* everything else is MXNet's storage fallback: sparse inputs are read densely and the result
  is dense (``exp``, ``sum``, ``x + 1``, ``x == 0`` ...), or, given a sparse ``out``, cast to
  its storage type;
* what MXNet refuses (``clip`` to a range without 0, ``dot`` of a float16 csr, csr / dense of
  one shape, ...) raises.

A function MXNet has a sparse kernel for (:data:`MXNET_SPARSE_KERNELS`) that the table does
not cover raises rather than guess (a function added to ``nd`` later). The package
``kvcli.mx.ndarray`` wraps every ``nd`` function with :func:`sparse_aware`; dense calls go
straight through.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, Callable

import numpy as np

from kvcli.errors import SparseUnsupportedError
from kvcli.mx.ndarray import functions as dense_functions
from kvcli.mx.ndarray import ndarray as dense_ndarray
from kvcli.mx.ndarray import ops as nd_ops
from kvcli.mx.ndarray.ndarray import NDArray
from kvcli.mx.ndarray.sparse import kernels
from kvcli.mx.ndarray.sparse.base import CSR, DEFAULT, axis_range, is_sparse, unsupported
from kvcli.mx.ndarray.sparse.create import array as sparse_array
from kvcli.mx.ndarray.sparse.create import filled_into, is_scipy_csr
from kvcli.mx.ndarray.sparse.create import zeros as sparse_zeros
from kvcli.mx.ndarray.sparse.csr import CSRNDArray
from kvcli.mx.ndarray.sparse.rowsparse import RowSparseNDArray

Handler = Callable[..., Any]

#: ``nd`` functions that map 0 to 0: on a sparse array MXNet applies them to the stored values.
UNARY_KEEP = ("abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "square", "sqrt", "sin", "tanh",
              "expm1", "log1p", "relu", "negative", "arcsin", "arcsinh", "arctan", "arctanh", "tan", "sinh", "degrees",
              "radians", "cbrt")
#: MXNet 1.9.1's operators with a sparse storage-type inference (``dir(mx.nd.sparse)``): one
#: of these without an entry in :data:`RULES` or :data:`FALLBACK_CHECKED` is refused.
MXNET_SPARSE_KERNELS = frozenset((
    "abs", "adagrad_update", "adam_update", "add_n", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh",
    "broadcast_add", "broadcast_div", "broadcast_minus", "broadcast_mul", "broadcast_plus", "broadcast_sub",
    "cast_storage", "cbrt", "ceil", "clip", "concat", "cos", "cosh", "degrees", "dot", "elemwise_add", "elemwise_div",
    "elemwise_mul", "elemwise_sub", "exp", "expm1", "fix", "floor", "ftrl_update", "gamma", "gammaln", "log", "log10",
    "log1p", "log2", "make_loss", "mean", "negative", "norm", "radians", "relu", "retain", "rint", "round", "rsqrt",
    "sgd_mom_update", "sgd_update", "sigmoid", "sign", "sin", "sinh", "slice", "sqrt", "square", "stop_gradient", "sum",
    "tan", "tanh", "trunc", "where", "zeros_like", "Embedding", "FullyConnected", "ElementWiseSum", "take",
    "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
))
#: Of those, the ones whose result on sparse inputs MXNet computes densely (checked on MXNet).
FALLBACK_CHECKED = frozenset((
    "arccos", "arccosh", "broadcast_add", "broadcast_minus", "broadcast_plus", "broadcast_sub", "cos", "cosh", "elemwise_div",
    "exp", "gamma", "gammaln", "log", "log10", "log2", "mean", "norm", "rsqrt", "sigmoid", "sum", "where",
))
_COMPARE = {"equal": operator.eq, "not_equal": operator.ne, "greater": operator.gt, "greater_equal": operator.ge,
            "lesser": operator.lt, "lesser_equal": operator.le}
_SWAPPED = {"equal": "equal", "not_equal": "not_equal", "greater": "lesser", "greater_equal": "lesser_equal",
            "lesser": "greater", "lesser_equal": "greater_equal"}
_OP_OF = {"equal": "eq", "not_equal": "ne", "greater": "gt", "greater_equal": "ge", "lesser": "lt",
          "lesser_equal": "le", "multiply": "mul", "divide": "truediv", "broadcast_mul": "mul",
          "broadcast_div": "truediv", "elemwise_add": "add", "elemwise_sub": "sub", "elemwise_mul": "mul"}

RULES: dict[str, Handler] = {}


def dense_function(name: str) -> Callable[..., Any]:
    """The dense ``nd`` function ``name``."""
    found = getattr(dense_functions, name, None) or getattr(dense_ndarray, name, None)
    if found is None:
        raise AttributeError(f"nd has no function {name!r}")
    return found


def _rule(*names: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        for name in names:
            RULES[name] = handler
        return handler

    return register


def _has_sparse(values: Any) -> bool:
    """Whether a sparse array is among ``values`` (a scipy csr matrix counts: ``nd.array`` of one
    is a CSRNDArray in MXNet)."""
    for value in values:
        if is_sparse(value) or is_scipy_csr(value) or (isinstance(value, (list, tuple)) and _has_sparse(value)):
            return True
    return False


def _densified(value: Any) -> Any:
    if is_sparse(value):
        return NDArray(value._dense(), value.context)
    if isinstance(value, (list, tuple)) and _has_sparse(value):
        return type(value)(_densified(v) for v in value)
    return value


def _finish(result: Any, out: Any) -> Any:
    """``result``, or written into ``out`` (cast to ``out``'s storage type) and ``out`` returned."""
    if out is None:
        return result
    if is_sparse(out):
        if tuple(out.shape) != tuple(result.shape):
            raise SparseUnsupportedError(f"out has shape {out.shape} but the result has shape {result.shape}")
        out._assign_dense(result.asnumpy())
        return out
    return dense_ndarray.make_result("out", result.asnumpy(), out.context, out)


def fallback(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """MXNet's storage fallback: sparse inputs read densely, a dense result (cast into a sparse ``out``)."""
    out = kwargs.pop("out", None)
    result = dense_function(name)(*(_densified(a) for a in args),
                                  **{k: _densified(v) for k, v in kwargs.items()},
                                  **({"out": out} if out is not None and not is_sparse(out) else {}))
    return _finish(result, out) if is_sparse(out) else result


def sparse_aware(name: str, dense: Callable[..., Any]) -> Callable[..., Any]:
    """``nd.<name>`` taking sparse arrays as MXNet does (:data:`RULES`, else the fallback)."""

    def function(*args: Any, **kwargs: Any) -> Any:
        if not (_has_sparse(args) or _has_sparse(kwargs.values())):
            return dense(*args, **kwargs)
        handler = RULES.get(name)
        if handler is not None:
            return handler(name, *args, **kwargs)
        if name in MXNET_SPARSE_KERNELS and name not in FALLBACK_CHECKED:
            stype = next(a.stype for a in (*args, *kwargs.values()) if is_sparse(a))
            raise unsupported(f"nd.{name}", stype, "MXNet has a sparse kernel for it that kvcli does not provide: "
                              "convert with .tostype('default') first")
        return fallback(name, args, kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = dense.__doc__
    function.__wrapped__ = dense  # type: ignore[attr-defined]
    return function


# ---------------------------------------------------------------------- unary
@_rule(*UNARY_KEEP)
def _unary(name: str, data: Any, out: Any = None, **kwargs: Any) -> Any:
    if not is_sparse(data):
        return fallback(name, (data,), {"out": out, **kwargs})
    dense = dense_function(name)
    return _finish(kernels.map_values(data, lambda v: dense(NDArray(v), **kwargs)._kvcli_buffer()), out)


@_rule("clip")
def _clip(name: str, data: Any, a_min: float, a_max: float, out: Any = None, **kwargs: Any) -> Any:
    if not is_sparse(data):
        return fallback(name, (data, a_min, a_max), {"out": out, **kwargs})
    if not a_min <= 0 <= a_max:
        raise unsupported(f"clip to [{a_min}, {a_max}] (a range without 0)", data.stype,
                          "MXNet's sparse clip keeps zeros, so it needs a_min <= 0 <= a_max: use .tostype('default')")
    dense = dense_function("clip")
    return _finish(kernels.map_values(data, lambda v: dense(NDArray(v), a_min, a_max)._kvcli_buffer()), out)


@_rule("zeros_like")
def _zeros_like(name: str, data: Any, out: Any = None, **kwargs: Any) -> Any:
    return _finish(sparse_zeros(data.stype, data.shape, data.context, data.dtype), out)


@_rule("norm")
def _norm(name: str, data: Any, ord: int = 2, axis: Any = None, keepdims: bool = False, out: Any = None,
          **kwargs: Any) -> Any:
    """MXNet's L2 norm kernels: a sparse array over all axes (float32/float64 only), a csr array
    over axis 0 or 1 without keepdims (floats only; :mod:`.kernels`); every other norm is the
    fallback (the dense norm)."""
    if is_sparse(data) and ord == 2:
        axes = () if axis is None else (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        dtype = np.dtype(data.dtype)
        if not axes and dtype == np.float16:
            raise unsupported("the L2 norm of float16 values", data.stype, "MXNet's sparse norm is not implemented "
                              "for float16 either: use .astype('float32')")
        by_axis = isinstance(data, CSRNDArray) and len(axes) == 1 and axes[0] in (0, 1) and not keepdims
        if (by_axis or not axes) and dtype.kind != "f":
            raise unsupported(f"the L2 norm of {dtype} values", data.stype, "MXNet's sparse norm takes floating "
                              "point types only: use .astype('float32')")
        if not axes:
            result = kernels.l2_norm_all(data).reshape((1,) * (data.ndim if keepdims else 1))
            return _finish(NDArray(result, data.context), out)
        if by_axis:
            return _finish(NDArray(kernels.csr_l2_norm_axis(data, int(axes[0])), data.context), out)
    return fallback(name, (data,), {"ord": ord, "axis": axis, "keepdims": keepdims, "out": out, **kwargs})


@_rule("ones")
def _ones(name: str, shape: Any, ctx: Any = None, dtype: Any = None, out: Any = None, **kwargs: Any) -> Any:
    if not is_sparse(out):
        return fallback(name, (shape, ctx, dtype), {"out": out, **kwargs})
    return filled_into(name, shape, dtype, out)


@_rule("full")
def _full(name: str, shape: Any, val: Any, ctx: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """``nd.full(shape, val, out=sparse)`` is MXNet's ``out[:] = val`` (shape and dtype unused):
    a row_sparse ``out`` holds ``val`` in every row; a csr one refuses a number."""
    if not is_sparse(out):
        return fallback(name, (shape, val, ctx), {"dtype": dtype, "out": out})
    out[:] = val
    return out


# ---------------------------------------------------------------------- binary
def _scalar(value: Any) -> bool:
    return nd_ops.is_scalar(value)


@_rule("multiply", "divide")
def _scale(name: str, lhs: Any, rhs: Any, out: Any = None, **kwargs: Any) -> Any:
    op = _OP_OF[name]
    if is_sparse(lhs) and _scalar(rhs):
        return _finish(kernels.map_values(lhs, lambda v: nd_ops.binary(op, v, rhs)), out)
    if is_sparse(rhs) and _scalar(lhs) and name == "multiply":
        return _finish(kernels.map_values(rhs, lambda v: nd_ops.binary(op, v, lhs, reflected=True)), out)
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
        return _broadcast(f"broadcast_{'mul' if name == 'multiply' else 'div'}", lhs, rhs, out=out, **kwargs)
    return fallback(name, (lhs, rhs), {"out": out, **kwargs})


@_rule("broadcast_mul", "broadcast_div")
def _broadcast(name: str, lhs: Any, rhs: Any, out: Any = None, **kwargs: Any) -> Any:
    """csr times (or over) a dense array: MXNet's csr kernels, on the stored values only (csr result)."""
    if isinstance(lhs, CSRNDArray) and _is_dense(rhs):
        other = rhs._kvcli_buffer()
        nd_ops.check_same_dtype(name, lhs._values, other)
        if other.ndim > 2:
            raise SparseUnsupportedError(f"{name}: a csr array broadcasts with a dense array of at most 2 dimensions "
                                         f"(MXNet neither), not shape {other.shape}")
        if other.ndim == 2 and other.shape[0] != 1 and other.shape[1] != 1:  # MXNet's kernel for one shape
            if name == "broadcast_div":
                raise SparseUnsupportedError("Please use elemwise_div for division between csr and dense of the same "
                                             "shape (MXNet's broadcast_div refuses it too)")
            if other.shape != lhs.shape:
                raise SparseUnsupportedError(f"{name}: shapes {lhs.shape} and {other.shape} differ")
            kernels.check_float(name, other.dtype)
        try:
            np.broadcast_to(other, lhs.shape)
        except ValueError:
            raise SparseUnsupportedError(f"{name}: shape {other.shape} does not broadcast to the csr's {lhs.shape}") \
                from None
        # A (1, n) operand of a 1-row csr is its row, as for any csr (MXNet 1.9.1 reads it as a column
        # and uses its first value throughout: one of the deviations its record test lists).
        return _finish(kernels.with_dense(lhs, other, _OP_OF[name]), out)
    return fallback(name, (lhs, rhs), {"out": out, **kwargs})


@_rule("add", "subtract", "broadcast_add", "broadcast_plus", "broadcast_sub", "broadcast_minus")
def _add_subtract(name: str, lhs: Any, rhs: Any, out: Any = None, **kwargs: Any) -> Any:
    """csr ± dense of one shape: MXNet's csr kernel (float32/float64 only, dense result); any
    other pair is MXNet's fallback."""
    if _csr_and_dense(lhs, rhs) and lhs.shape == rhs.shape:
        op = "add" if name in ("add", "broadcast_add", "broadcast_plus") else "sub"
        return _elemwise(f"elemwise_{op}", lhs, rhs, out=out, **kwargs)
    return fallback(name, (lhs, rhs), {"out": out, **kwargs})


@_rule(*_COMPARE)
def _compare(name: str, lhs: Any, rhs: Any, out: Any = None, **kwargs: Any) -> Any:
    if is_sparse(rhs) and _scalar(lhs):
        lhs, rhs, name = rhs, lhs, _SWAPPED[name]
    if is_sparse(lhs) and _scalar(rhs):
        scalar = nd_ops.cast_scalar(rhs, np.dtype(lhs.dtype))
        if not _COMPARE[name](0, scalar):  # zero stays zero: MXNet's sparse comparison kernel
            return _finish(kernels.map_values(lhs, lambda v: nd_ops.binary(_OP_OF[name], v, rhs)), out)
    return fallback(name, (lhs, rhs), {"out": out, **kwargs})


def _is_dense(value: Any) -> bool:
    return isinstance(value, NDArray) and not is_sparse(value)


def _csr_and_dense(lhs: Any, rhs: Any) -> bool:
    return (isinstance(lhs, CSRNDArray) and _is_dense(rhs)) or (isinstance(rhs, CSRNDArray) and _is_dense(lhs))


@_rule("elemwise_add", "elemwise_sub", "elemwise_mul")
def _elemwise(name: str, lhs: Any, rhs: Any, out: Any = None, **kwargs: Any) -> Any:
    op = _OP_OF[name]
    if _csr_and_dense(lhs, rhs):  # MXNet's csr-with-dense kernels
        kernels.check_float(name, lhs.dtype)
    if is_sparse(lhs) and is_sparse(rhs) and lhs.stype == rhs.stype:
        if lhs.shape != rhs.shape:
            raise SparseUnsupportedError(f"{name}: shapes {lhs.shape} and {rhs.shape} differ")
        kernel = kernels.csr_binary if lhs.stype == CSR else kernels.rsp_binary
        return _finish(kernel(lhs, rhs, op), out)
    if op in ("add", "sub") and is_sparse(lhs) != is_sparse(rhs) and isinstance(lhs, NDArray) \
            and isinstance(rhs, NDArray) and lhs.shape == rhs.shape:
        sparse, dense = (lhs, rhs) if is_sparse(lhs) else (rhs, lhs)
        nd_ops.check_same_dtype(name, np.empty(0, sparse.dtype), dense._kvcli_buffer())
        values = kernels.dense_with_stored(sparse, dense._kvcli_buffer(), op, sparse_first=is_sparse(lhs))
        return _finish(NDArray(values, lhs.context), out)
    if op == "mul" and is_sparse(lhs) != is_sparse(rhs):
        sparse, dense = (lhs, rhs) if is_sparse(lhs) else (rhs, lhs)
        if isinstance(dense, NDArray):
            if dense.shape != sparse.shape:
                raise SparseUnsupportedError(f"{name}: shapes {lhs.shape} and {rhs.shape} differ")
            nd_ops.check_same_dtype(name, np.empty(0, sparse.dtype), dense._kvcli_buffer())
            return _finish(kernels.with_dense(sparse, dense._kvcli_buffer(), op, sparse_first=is_sparse(lhs)), out)
    return fallback(name, (lhs, rhs), {"out": out, **kwargs})


@_rule("add_n", "ElementWiseSum")
def _add_n(name: str, *args: Any, out: Any = None, **kwargs: Any) -> Any:
    if args and all(isinstance(a, RowSparseNDArray) for a in args):
        return _finish(kernels.add_rows(list(args)), out)
    return fallback(name, args, {"out": out, **kwargs})


# ---------------------------------------------------------------------- dot
@_rule("dot")
def _dot_rule(name: str, lhs: Any, rhs: Any, transpose_a: bool = False, transpose_b: bool = False, out: Any = None,
              **kwargs: Any) -> Any:
    return dot(lhs, rhs, transpose_a, transpose_b, out=out)


def dot(lhs: Any, rhs: Any, transpose_a: bool = False, transpose_b: bool = False, out: Any = None,
        name: str | None = None) -> Any:
    """MXNet's ``dot`` with sparse storage: ``dot(csr, dense)`` -> dense, ``dot(csr.T, dense)``
    -> row_sparse, ``dot(dense, csr)`` and ``dot(dense, csr.T)`` -> csr; every other sparse
    case is MXNet's fallback (dense)."""
    if not (is_sparse(lhs) or is_sparse(rhs)):
        return dense_function("dot")(lhs, rhs, transpose_a, transpose_b, out=out)
    if isinstance(lhs, CSRNDArray) and isinstance(rhs, NDArray) and not is_sparse(rhs) and not transpose_b:
        dense = rhs._kvcli_buffer()
        kernels.check_dot_dtype(np.dtype(lhs.dtype), dense.dtype)
        if dense.ndim != 2:
            raise SparseUnsupportedError(f"sparse dot only supports 2 dimensional rhs (MXNet neither), not shape "
                                         f"{dense.shape}")
        rows = lhs.shape[1] if not transpose_a else lhs.shape[0]
        if dense.shape[0] != rows:
            raise SparseUnsupportedError(f"dot: shapes {lhs.shape} (transpose_a={transpose_a}) and {dense.shape} do "
                                         "not match")
        if transpose_a:
            return _finish(kernels.csr_t_dot_dense(lhs, dense), out)
        return _finish(NDArray(kernels.csr_dot_dense(lhs, dense), lhs.context), out)
    if isinstance(rhs, CSRNDArray) and isinstance(lhs, NDArray) and not is_sparse(lhs) and not transpose_a:
        dense = lhs._kvcli_buffer()
        kernels.check_dot_dtype(dense.dtype, np.dtype(rhs.dtype))
        if dense.ndim != 2 or dense.shape[1] != (rhs.shape[1] if transpose_b else rhs.shape[0]):
            raise SparseUnsupportedError(f"dot: shapes {dense.shape} and {rhs.shape} (transpose_b={transpose_b}) do "
                                         "not match")
        if transpose_b:
            result = dense_function("dot")(lhs, NDArray(rhs._dense()), False, True)
            return _finish(CSRNDArray.from_dense(result._kvcli_buffer(), lhs.context), out)
        return _finish(kernels.dense_dot_csr(dense, rhs), out)
    return fallback("dot", (lhs, rhs, transpose_a, transpose_b), {"out": out})


# ---------------------------------------------------------------------- rows, slices, joins
@_rule("take")
def _take(name: str, a: Any, indices: Any, axis: int = 0, mode: str = "clip", out: Any = None, **kwargs: Any) -> Any:
    if isinstance(a, CSRNDArray) and axis == 0 and not is_sparse(indices):
        positions = nd_ops.take(np.arange(a.shape[0]), indices._kvcli_buffer().reshape(-1), 0, mode)
        if indices.ndim != 1:
            return fallback(name, (a, indices, axis, mode), {"out": out, **kwargs})
        return _finish(kernels.csr_take_rows(a, positions.astype(np.int64)), out)
    return fallback(name, (a, indices, axis, mode), {"out": out, **kwargs})


@_rule("concat", "Concat")
def _concat(name: str, *data: Any, dim: int = 1, out: Any = None, **kwargs: Any) -> Any:
    if data and dim == 0 and all(isinstance(a, CSRNDArray) for a in data):
        return _finish(kernels.csr_concat_rows(list(data)), out)
    return fallback(name, data, {"dim": dim, "out": out, **kwargs})


@_rule("concatenate")
def _concatenate(name: str, arrays: Any, *args: Any, **kwargs: Any) -> Any:
    bad = next(a for a in arrays if is_sparse(a))
    raise SparseUnsupportedError(f"nd.concatenate takes dense arrays only (MXNet's too), not a {bad.stype} array: "
                                 "use nd.sparse.concat, or .tostype('default') first")


@_rule("onehot_encode", "fill_element_0index", "reshape_like")
def _refused(name: str, *args: Any, **kwargs: Any) -> Any:
    stype = next(a.stype for a in (*args, *kwargs.values()) if is_sparse(a))
    raise unsupported(f"nd.{name}", stype)


@_rule("array")
def _array(name: str, source_array: Any, ctx: Any = None, dtype: Any = None) -> Any:
    return sparse_array(source_array, ctx=ctx, dtype=dtype)


def retain(data: Any, indices: Any = None, out: Any = None, name: str | None = None, **kwargs: Any) -> RowSparseNDArray:
    """The rows ``indices`` of a row_sparse array (zero where it holds none), as a row_sparse
    array listing exactly those rows (``mxnet.nd.sparse.retain``). The ids must be sorted,
    unique and inside the shape: MXNet keeps others as given, making an invalid array."""
    if kwargs:  # an MXNetError, as MXNet's operator raises (and a TypeError, as Python's would be)
        raise SparseUnsupportedError(f"retain got unexpected keyword arguments {sorted(kwargs)}: it takes data, "
                                     "indices, out and name")
    if indices is None:
        raise SparseUnsupportedError("retain needs indices: the row ids to keep")
    if not isinstance(data, RowSparseNDArray):
        raise unsupported("nd.sparse.retain", getattr(data, "stype", DEFAULT), "it takes a row_sparse array")
    return _finish(data.retain(indices), out)


def slice(data: Any, begin: Any, end: Any, step: Any = (), out: Any = None, name: str | None = None) -> NDArray:  # noqa: A001 - MXNet's name
    """MXNet's ``slice``: ``data[begin[0]:end[0], begin[1]:end[1], ...]`` (None: the whole
    axis; negative counts from the end). A csr array sliced without steps stays csr, and
    refuses an empty selection as MXNet does; other arrays give numpy's selection, dense."""
    begin, end = tuple(begin), tuple(end)
    step = tuple(step or ())
    if len(begin) != len(end) or len(begin) > data.ndim:
        raise SparseUnsupportedError(f"slice: begin {begin} and end {end} must have equal lengths, at most {data.ndim}")
    steps = [step[axis] if axis < len(step) and step[axis] is not None else 1 for axis in range(len(begin))]
    if isinstance(data, CSRNDArray) and all(st == 1 for st in steps):
        (r0, r1), (c0, c1) = (axis_range(size, begin[axis], end[axis]) if axis < len(begin) else (0, size)
                              for axis, size in enumerate(data.shape))
        return _finish(kernels.csr_slice(data, r0, r1, c0, c1), out)
    # MXNet's dense slice (the storage fallback): numpy's, an empty selection included
    bounds = [builtins.slice(begin[axis], end[axis], steps[axis]).indices(size) if axis < len(begin) else (0, size, 1)
              for axis, size in enumerate(data.shape)]
    values = data._data if is_sparse(data) else data._kvcli_buffer()
    index = tuple(builtins.slice(lo, max(hi, lo) if st > 0 else hi, st) for lo, hi, st in bounds)
    return _finish(NDArray(np.array(values[index], copy=True), data.context), out)


def add(lhs: Any, rhs: Any) -> Any:
    """``mxnet.nd.sparse.add``: ``elemwise_add`` for two arrays of one shape, else ``nd.add``."""
    return _pair("elemwise_add", "add", lhs, rhs)


def subtract(lhs: Any, rhs: Any) -> Any:
    """``mxnet.nd.sparse.subtract``: ``elemwise_sub`` for two arrays of one shape, else ``nd.subtract``."""
    return _pair("elemwise_sub", "subtract", lhs, rhs)


def multiply(lhs: Any, rhs: Any) -> Any:
    """``mxnet.nd.sparse.multiply``: ``elemwise_mul`` for two arrays of one shape, else ``nd.multiply``."""
    return _pair("elemwise_mul", "multiply", lhs, rhs)


def divide(lhs: Any, rhs: Any) -> Any:
    """``mxnet.nd.sparse.divide``: ``elemwise_div`` for two arrays of one shape, else ``nd.divide``."""
    return _pair("elemwise_div", "divide", lhs, rhs)


def _pair(same_shape: str, otherwise: str, lhs: Any, rhs: Any) -> Any:
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray) and lhs.shape == rhs.shape:
        return sparse_aware(same_shape, dense_function(same_shape))(lhs, rhs)
    return sparse_aware(otherwise, dense_function(otherwise))(lhs, rhs)


__all__ = ["FALLBACK_CHECKED", "MXNET_SPARSE_KERNELS", "RULES", "UNARY_KEEP", "add", "dense_function", "divide",
           "dot", "fallback", "multiply", "retain", "slice", "sparse_aware", "subtract"]
