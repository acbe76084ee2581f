"""A small MXNet-style ``nd`` module: NDArrays are numpy arrays that remember a context.

The ``mxnet.nd`` calls KVStore code written for MXNet makes, with MXNet 1.9.1's dtype and
shape rules (:mod:`kvcli.mx.ndarray.ops`; float32 by default, ``nd.array`` of any numpy input
included), each checked against numbers recorded from MXNet (``tests/data/``): creation
(``ones``, ``zeros``, ``full``, ``eye``, ``ones_like``, ``zeros_like`` -- all with ``out=`` --
``empty``, ``array``, ``arange``, ``linspace``, ``from_numpy``), arithmetic and comparison
operators, ``reshape`` with MXNet's special values, reductions with ``axis`` / ``keepdims`` /
``exclude``, element-wise maths, shape functions (``concatenate``, ``expand_dims``,
``flatten``, ``squeeze``, ``split``, ``slice_axis``, ``broadcast_to``, ``where``, ``one_hot``,
``take``, ...), ``dot``, ``save`` / ``load`` (MXNet's ``.params`` format,
:mod:`kvcli.mx.ndarray.io`), ``nd.random`` (:mod:`kvcli.mx.ndarray.random`), ``waitall``. Functions
are NDArray methods too (``a.sum(axis=1)``); a keyword a function does not take is a
``TypeError``. Computation is numpy's and synchronous; a context names the device an array
belongs to.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence

import numpy as np

from kvcli.mx.ndarray import ops as nd_ops
from kvcli.mx.ndarray.context import Context, cpu, current_context, gpu
from kvcli.errors import NDArrayError

DEFAULT_DTYPE = np.float32
#: Arrays created on an explicit context from this size up live in shared memory, where the
#: worker processes of a ``device`` store read them without a copy.
DEVICE_MEMORY_MIN_BYTES = 1 << 20

def as_context(ctx: Context | None) -> Context:
    if ctx is None:
        return current_context()
    if not isinstance(ctx, Context):
        raise TypeError(f"ctx must be a Context such as mx.cpu(0), not {type(ctx).__name__}")
    return ctx


def _unwrap(value: Any) -> Any:
    return value._data if isinstance(value, NDArray) else value


class NDArray:
    """A numpy array with a context, behaving like ``mxnet.nd.NDArray`` where KVStore code
    needs it. Indexing returns views, so ``x[:] += y`` changes ``x`` in place."""

    __slots__ = ("_data", "_ctx")
    __array_priority__ = 1000.0  # numpy defers to our operators: ndarray + NDArray -> NDArray

    def __init__(self, data: np.ndarray, ctx: Context | None = None) -> None:
        self._data = data
        self._ctx = as_context(ctx)

    # -- what kvcli.store reads and writes -------------------------------------------
    def _kvcli_buffer(self) -> np.ndarray:
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._data if dtype is None else self._data.astype(dtype)

    # -- attributes ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> type:
        return self._data.dtype.type

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def stype(self) -> str:
        return "default"

    @property
    def T(self) -> "NDArray":
        """The transpose, a copy as in MXNet (``self`` itself when ``ndim < 2``)."""
        require_known_shape("transpose", self._data)
        return self if self._data.ndim < 2 else NDArray(self._data.T.copy(), self._ctx)

    # -- conversion ---------------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the values."""
        return np.array(self._data, copy=True)

    def asscalar(self) -> Any:
        """The single value of a size-1 array, as a numpy scalar of its dtype (like MXNet)."""
        if self._data.size != 1:
            raise NDArrayError(f"asscalar needs an array of size 1, not shape {self.shape}: index one element first")
        return self._data.reshape(-1)[0]

    def astype(self, dtype: Any, copy: bool = True) -> "NDArray":
        """A copy cast to ``dtype``; ``self`` when ``copy=False`` and the dtype is already it."""
        if not copy and np.dtype(dtype) == self._data.dtype:
            return self
        require_known_shape("astype", self._data)
        return NDArray(nd_ops.cast(self._data, np.dtype(dtype)), self._ctx)

    def copy(self) -> "NDArray":
        require_known_shape("copy", self._data)
        return NDArray(self._data.copy(), self._ctx)

    def copyto(self, other: "NDArray | Context") -> "NDArray | bool":
        """Copy into another NDArray of the same shape (cast to its dtype) and return it, or
        onto a context as a new array. Copying an array to itself warns and returns False."""
        require_known_shape("copyto", self._data)
        if isinstance(other, Context):
            return NDArray(self._data.copy(), other)
        if not isinstance(other, NDArray):
            raise TypeError(f"copyto does not support type {type(other).__name__}: give an NDArray or a Context")
        if other is self:
            warnings.warn("You are attempting to copy an array to itself", RuntimeWarning, stacklevel=2)
            return False
        if other.shape != self.shape:
            raise NDArrayError(f"copyto: shape {self.shape} cannot be copied into shape {other.shape}: the shapes must be equal")
        other._data[...] = self._data if other._data.dtype == self._data.dtype else nd_ops.cast(self._data, other._data.dtype)
        return other

    def as_in_context(self, context: Context) -> "NDArray":
        """``self`` when it is on ``context`` already, else a copy there."""
        if context == self._ctx:
            return self
        require_known_shape("as_in_context", self._data)
        return NDArray(self._data.copy(), as_context(context))

    def reshape(self, *shape: Any, reverse: bool = False, **kwargs: Any) -> "NDArray":
        """A **view** of a new shape, with MXNet's special values (0 copies a dimension, -1
        infers one, -2 copies the rest, -3 merges two, -4 splits one; ``reverse=True`` reads
        them from the right): ``x.reshape(0, -1)``, ``x.reshape((2, -1))``, ``x.reshape(shape=...)``."""
        if set(kwargs) - {"shape"}:
            raise TypeError(f"reshape got unknown keywords {sorted(set(kwargs) - {'shape'})}: use shape= and reverse=")
        target: Any = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        if not shape:
            target = kwargs.get("shape")
        if target is None:
            raise TypeError("reshape needs a shape: x.reshape((2, -1)) or x.reshape(shape=(2, -1))")
        new_shape = nd_ops.reshape_shape(self.shape, target, reverse)
        view = self._data.view()
        try:
            view.shape = new_shape  # a view, never a copy: MXNet's reshape shares the data
        except AttributeError:  # not contiguous (a column view): numpy can only copy
            view = self._data.reshape(new_shape)
        return NDArray(view, self._ctx)

    def wait_to_read(self) -> None:
        """Nothing to wait for: operations here are synchronous."""

    def tolist(self) -> Any:
        return self._data.tolist()

    def flatten(self, inplace: bool = False) -> "NDArray":
        """``(d0, d1 * ... * dk)``: a copy, or with ``inplace=True`` a view."""
        return self.reshape((0, -1)) if inplace else flatten(self)

    def expand_dims(self, axis: int, inplace: bool = False) -> "NDArray":
        """A new axis of size 1 at ``axis``: a copy, or with ``inplace=True`` a view."""
        return self.reshape(nd_ops.expanded_shape(self.shape, axis)) if inplace else expand_dims(self, axis)

    def squeeze(self, axis: Any = None, inplace: bool = False) -> "NDArray":
        """Without size-1 axes (all, or ``axis``): a copy, or with ``inplace=True`` a view."""
        return self.reshape(nd_ops.squeezed_shape(self.shape, axis)) if inplace else squeeze(self, axis)

    def broadcast_to(self, shape: Any) -> "NDArray":
        """Broadcast to ``shape``; unlike ``nd.broadcast_to`` the method first gives the array
        the leading axes of size 1 that ``shape`` has more (as MXNet's method does)."""
        shape = tuple(shape)
        if len(shape) < self.ndim:
            raise NDArrayError(f"broadcast_to: shape {shape} has fewer axes than the array's {self.shape}")
        return broadcast_to(self.reshape((1,) * (len(shape) - self.ndim) + self.shape), shape)

    # -- indexing -----------------------------------------------------------------------
    def __getitem__(self, index: Any) -> "NDArray":
        # a single element is shape (1,) in MXNet's nd, not 0-d
        return NDArray(nd_ops.reduced(self._data[_index(index)]), self._ctx)

    def __setitem__(self, index: Any, value: Any) -> None:
        index = _index(index)
        if isinstance(value, NDArray) and value.dtype != self._data.dtype:  # MXNet: value.astype(self.dtype)
            value = nd_ops.cast(value._data, self._data.dtype)
        value = _unwrap(value)
        if nd_ops.is_scalar(value):  # a double in MXNet, converted to the dtype as a scalar op's
            value = nd_ops.cast_scalar(value, self._data.dtype)
        else:
            value = np.asarray(value)
            target_ndim = np.ndim(self._data[index])
            if value.ndim > target_ndim:  # MXNet drops a value's extra leading 1s: b[0] = np.array([4.5])
                leading = value.shape[: value.ndim - target_ndim]
                if all(d == 1 for d in leading):
                    value = value.reshape(value.shape[value.ndim - target_ndim:])
        self._data[index] = value

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (self[i] for i in range(len(self._data)))

    def __bool__(self) -> bool:
        if self._data.size > 1:
            raise NDArrayError(
                "The truth value of an NDArray with multiple elements is ambiguous: use .asnumpy().any() or .all()"
            )
        return bool(self._data.size) and bool(self._data.reshape(-1)[0])

    def __float__(self) -> float:
        return float(self.asscalar())

    def __int__(self) -> int:
        return int(self.asscalar())

    def __repr__(self) -> str:
        shape = "x".join(str(d) for d in self.shape)
        return f"\n{self._data}\n<NDArray {shape} @{self._ctx}>"

    def __hash__(self) -> int:  # MXNet hashes by identity (== gives an array)
        return id(self) // 16



def _index(index: Any) -> Any:
    """An index for numpy, read as MXNet reads it: NDArray, numpy and list indices become
    integer arrays (float ones truncated toward zero, as MXNet converts them to int32); a
    boolean index is refused (MXNet 1.9.1's nd has no boolean indexing: it reads a numpy or
    list mask as the indices 1 and 0, and refuses an NDArray one)."""
    if isinstance(index, tuple):
        return tuple(_index(part) for part in index)
    if isinstance(index, (bool, np.bool_)):
        raise _boolean_index(index)
    given = index
    if isinstance(index, NDArray):
        index = index._data
    elif isinstance(index, list):
        index = np.asarray(index)
    if not isinstance(index, np.ndarray) or index.dtype.kind not in "biuf":
        return given  # anything else is numpy's to read (or refuse)
    if index.dtype == np.bool_:
        raise _boolean_index(index)
    return index if index.dtype.kind in "iu" else index.astype(np.int64)


def _boolean_index(index: Any) -> NDArrayError:
    return NDArrayError(
        f"a boolean index ({type(index).__name__} of {np.asarray(index).tolist()!r}) is not supported: MXNet 1.9.1's "
        "nd has no boolean indexing (it reads a numpy or list mask as the indices 1 and 0); index with the "
        "positions instead: x[np.nonzero(mask)[0]]"
    )


def _binary(name: str, reflected: bool = False) -> Callable[[NDArray, Any], Any]:
    def method(self: NDArray, other: Any) -> Any:
        require_known_shape(name, self._data, _unwrap(other))
        return NDArray(nd_ops.binary(name, self._data, _unwrap(other), reflected), self._ctx)

    return method


def _inplace(name: str) -> Callable[[NDArray, Any], NDArray]:
    def method(self: NDArray, other: Any) -> NDArray:
        require_known_shape(name, self._data, _unwrap(other))
        nd_ops.binary_inplace(name, self._data, _unwrap(other))
        return self

    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
    setattr(NDArray, f"__{_name}__", _binary(_name))
    setattr(NDArray, f"__r{_name}__", _binary(_name, reflected=True))
    setattr(NDArray, f"__i{_name}__", _inplace(_name))
for _name in nd_ops.COMPARISONS:
    setattr(NDArray, f"__{_name}__", _binary(_name))
NDArray.__matmul__ = lambda self, other: dot(self, other)  # type: ignore[operator]  # set after the class: dot is below it
NDArray.__neg__ = lambda self: NDArray(nd_ops.unary("negative", operand_data(self, "negative")), self._ctx)  # type: ignore[operator]
NDArray.__abs__ = lambda self: NDArray(nd_ops.unary("abs", operand_data(self, "abs")), self._ctx)  # type: ignore[attr-defined]
NDArray.abs = NDArray.__abs__  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- creation
def as_shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def _allocate(shape: int | Sequence[int], ctx: Context | None, dtype: Any) -> np.ndarray:
    dims, dtype = as_shape(shape), np.dtype(DEFAULT_DTYPE if dtype is None else dtype)
    if ctx is not None and int(np.prod(dims, dtype=np.int64)) * dtype.itemsize >= DEVICE_MEMORY_MIN_BYTES:
        from kvcli.store.device.shm import device_array

        return device_array(dims, dtype)
    return np.empty(dims, dtype=dtype)


def empty(shape: int | Sequence[int], ctx: Context | None = None, dtype: Any = DEFAULT_DTYPE) -> NDArray:
    """An uninitialised array."""
    return NDArray(_allocate(shape, ctx, dtype), ctx)


def full(shape: int | Sequence[int], val: float, ctx: Context | None = None, dtype: Any = DEFAULT_DTYPE,
         out: "NDArray | None" = None) -> NDArray:
    """An array filled with ``val``; with ``out``, ``out`` is filled (in its own shape and
    dtype, as MXNet does: ``shape`` and ``dtype`` are then not used) and returned."""
    if out is not None:
        check_out("full", out)
        out._data[...] = nd_ops.cast_scalar(val, out._data.dtype)
        return out
    data = _allocate(shape, ctx, dtype)
    data.fill(nd_ops.cast_scalar(val, data.dtype))
    return NDArray(data, ctx)


def _filled(what: str, value: int, shape: int | Sequence[int], ctx: Context | None, dtype: Any,
            out: "NDArray | None") -> NDArray:
    """``zeros`` / ``ones``: a new array, or ``out`` filled, which must have the shape and
    the dtype (float32 unless given) asked for, as in MXNet."""
    if out is None:
        if 0 in as_shape(shape):
            raise NDArrayError(f"{what}: MXNet 1.9.1 cannot make an array of shape {as_shape(shape)} (outside np_shape "
                               f"mode a 0 in a shape means 'unknown'); nd.array(np.zeros(shape)) and nd.empty can")
        return full(shape, value, ctx, DEFAULT_DTYPE if dtype is None else dtype)
    check_out(what, out)
    wanted = np.dtype(DEFAULT_DTYPE if dtype is None else dtype)
    if out.shape != as_shape(shape) or out._data.dtype != wanted:
        raise NDArrayError(f"{what}: out is {out._data.dtype} of shape {out.shape}, but the result is {wanted} of "
                           f"shape {as_shape(shape)}: give an out of that shape and dtype")
    out._data[...] = value
    return out


def zeros(shape: int | Sequence[int], ctx: Context | None = None, dtype: Any = None, out: "NDArray | None" = None,
          name: str | None = None) -> NDArray:
    """An array of zeros (float32 unless ``dtype`` says otherwise), or ``out`` set to zeros."""
    return _filled("zeros", 0, shape, ctx, dtype, out)


def ones(shape: int | Sequence[int], ctx: Context | None = None, dtype: Any = None, out: "NDArray | None" = None,
         name: str | None = None) -> NDArray:
    """An array of ones (float32 unless ``dtype`` says otherwise), or ``out`` set to ones."""
    return _filled("ones", 1, shape, ctx, dtype, out)


def eye(N: int, M: int = 0, k: int = 0, ctx: Context | None = None, dtype: Any = None,
        out: "NDArray | None" = None, name: str | None = None) -> NDArray:
    """Ones on diagonal ``k`` of an ``N x M`` array (``M=0``: square), zeros elsewhere."""
    values = np.eye(int(N), int(M) or None, int(k), dtype=np.dtype(DEFAULT_DTYPE if dtype is None else dtype))
    return make_result("eye", values, as_context(ctx), out)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An array from nested lists, a numpy array or an NDArray.

    Like MXNet, the result is float32 unless ``dtype`` says otherwise, whatever the numpy
    input's dtype (float64, int64, ...); only an NDArray input keeps its own dtype.
    """
    source = _unwrap(source_array)
    if dtype is None:
        dtype = source.dtype if isinstance(source_array, NDArray) else DEFAULT_DTYPE
    kind = np.dtype(dtype)
    if isinstance(source, np.ndarray):  # numpy's own conversion: C's casts, a float rounded once
        if source.dtype == kind or (source.dtype.kind == "f" and kind.kind == "f" and not isinstance(source_array, NDArray)):
            return NDArray(np.array(source, dtype=kind, copy=True), ctx)
        return NDArray(nd_ops.cast(source, kind), ctx)
    if kind.kind in "iu":
        return NDArray(_python_numbers_to_integers(source, kind), ctx)
    try:
        return NDArray(np.array(source, dtype=kind, copy=True), ctx)
    except (ValueError, TypeError) as error:  # strings, ragged lists: MXNet's TypeError, not numpy's ValueError
        raise TypeError(f"nd.array: the values cannot be converted to {kind} ({error}): give numbers in rows of "
                        f"one length (MXNet: source_array must be array like object)") from None


def _python_numbers_to_integers(source: Any, dtype: np.dtype) -> np.ndarray:
    """Python numbers (nested lists) as integers the way MXNet's numpy (1.x) converts them:
    each number to a C long, toward zero, then wrapped to ``dtype`` (300 -> 44 as uint8);
    NaN, infinity or beyond a C long is a TypeError, as in MXNet."""
    values = np.asarray(source)
    if values.dtype.kind == "f":
        beyond = ~np.isfinite(values) | (np.abs(values) >= 2.0**63)
        if beyond.any():
            raise TypeError(f"nd.array: {values[beyond].ravel()[0]} cannot be converted to {dtype} "
                            f"(MXNet: source_array must be array like object)")
        values = np.trunc(values).astype(np.int64)
    elif values.dtype.kind not in "iub":
        raise TypeError(f"nd.array: the values cannot be converted to {dtype}: give numbers "
                        f"(MXNet: source_array must be array like object)")
    return values.astype(np.int64).astype(dtype)


def arange(start: float, stop: float | None = None, step: float = 1.0, repeat: int = 1,
           infer_range: Any = None, ctx: Context | None = None, dtype: Any = DEFAULT_DTYPE) -> NDArray:
    """Evenly spaced values, as ``mxnet.nd.arange``: ``ceil((stop - start) / step)`` of them
    (counted in float64), each ``start + i * step`` computed in ``dtype``, each repeated
    ``repeat`` times; ``arange(n)`` is ``arange(0, n)``."""
    if infer_range:  # MXNet's deprecated symbol-side option; accepted only as False/None
        raise NDArrayError("arange: infer_range is not supported by kvcli (MXNet deprecated it): give stop")
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise NDArrayError("arange: step must not be 0")
    count = int(np.ceil((float(stop) - float(start)) / float(step)))
    if count < 0:
        raise NDArrayError(f"arange: start={start}, stop={stop}, step={step} give no values: swap start and stop "
                           f"or change the sign of step")
    kind = np.dtype(DEFAULT_DTYPE if dtype is None else dtype)
    if count == 0:
        raise NDArrayError(f"arange: start={start}, stop={stop}, step={step} give no values, which MXNet 1.9.1 "
                           f"refuses (a shape of 0 means 'unknown' outside np_shape mode)")
    index = np.arange(count, dtype=np.int64)
    with np.errstate(all="ignore"):
        if kind.kind == "u" or kind == np.float16:  # MXNet first makes start and step integers for these
            first, delta = np.trunc(float(start)), np.trunc(float(step))
            begin = np.array(first, dtype=np.float32).astype(kind) if kind == np.float16 else np.int64(first).astype(kind)
            stride = np.array(delta, dtype=np.float32).astype(kind) if kind == np.float16 else np.int64(delta).astype(kind)
        else:
            begin = nd_ops.cast(np.array(float(start)), kind)[()]
            stride = nd_ops.cast(np.array(float(step)), kind)[()]
        if kind.kind == "f":  # start + i * step, the index widened to float (double for float64)
            wide = np.float64 if kind == np.float64 else np.float32
            values = (begin.astype(wide) + (index.astype(wide) * stride.astype(wide)).astype(kind).astype(wide)).astype(kind)
        else:  # in 64-bit integers, wrapped to the dtype
            values = (np.int64(begin) + index * np.int64(stride)).astype(kind)
    return NDArray(np.repeat(values, repeat) if repeat != 1 else values, ctx)


def linspace(start: float, stop: float, num: int, endpoint: bool = True, ctx: Context | None = None,
             dtype: Any = DEFAULT_DTYPE) -> NDArray:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless
    ``endpoint=False``); an integer ``dtype`` truncates them."""
    kind = np.dtype(DEFAULT_DTYPE if dtype is None else dtype)
    return NDArray(np.linspace(float(start), float(stop), int(num), endpoint=bool(endpoint)).astype(kind), ctx)


def from_numpy(ndarray: np.ndarray, zero_copy: bool = True) -> NDArray:
    """An NDArray of ``ndarray``'s dtype; ``zero_copy=True`` shares its memory (which must be
    C-contiguous; numpy's array is then made read-only, as MXNet does)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy takes a numpy array, not {type(ndarray).__name__}")
    if not zero_copy:
        return NDArray(np.array(ndarray, copy=True))
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise NDArrayError("from_numpy: zero_copy needs a C-contiguous array: use np.ascontiguousarray first")
    import ctypes  # numpy gives no writable view of a read-only array (one shared before): alias its memory

    memory = (ctypes.c_char * ndarray.nbytes).from_address(ndarray.__array_interface__["data"][0])
    memory._kvcli_owner = ndarray  # type: ignore[attr-defined]  # the alias keeps the memory's owner alive
    ndarray.flags.writeable = False  # the NDArray owns the memory now; the numpy side is read-only
    return NDArray(np.frombuffer(memoryview(memory), dtype=ndarray.dtype).reshape(ndarray.shape))


def ones_like(data: NDArray, out: "NDArray | None" = None, name: str | None = None) -> NDArray:
    """Ones of ``data``'s shape, dtype and context."""
    return make_result("ones_like", np.ones_like(operand_data(data, "ones_like")), data.context, out)


def zeros_like(data: NDArray, out: "NDArray | None" = None, name: str | None = None) -> NDArray:
    """Zeros of ``data``'s shape, dtype and context."""
    return make_result("zeros_like", np.zeros_like(operand_data(data, "zeros_like")), data.context, out)


# ---------------------------------------------------------------------- operators
def operand_data(value: Any, what: str, empty_ok: bool = False) -> np.ndarray:
    """The numpy values of an NDArray argument of ``what``; one with a zero-size axis is
    refused (:func:`require_known_shape`) unless ``empty_ok``."""
    if not isinstance(value, NDArray):
        raise TypeError(f"{what} takes NDArrays, not {type(value).__name__}: wrap it with nd.array()")
    if not empty_ok:
        require_known_shape(what, value._data)
    return value._data


def require_known_shape(what: str, *arrays: Any) -> None:
    """MXNet 1.9.1 (outside ``np_shape`` mode) reads a 0 in a shape as "unknown", so its
    operators refuse an array with a zero-size axis (a full ``sum``, ``mean``, ``prod``,
    ``nansum`` or ``nanprod`` excepted); kvcli does the same rather than return a value."""
    for values in arrays:
        if isinstance(values, np.ndarray) and values.size == 0:
            raise NDArrayError(f"{what}: MXNet 1.9.1 cannot run it on an array of shape {values.shape} (outside "
                               f"np_shape mode a 0 in a shape means 'unknown'): give every axis at least one element")


def _elementwise(name: str, lhs: Any, rhs: Any) -> Any:
    """``lhs <op> rhs`` where either side may be a number (both numbers: a number)."""
    require_known_shape(name, _unwrap(lhs), _unwrap(rhs))
    if isinstance(lhs, NDArray):
        return NDArray(nd_ops.binary(name, lhs._data, _unwrap(rhs)), lhs.context)
    if isinstance(rhs, NDArray):
        return NDArray(nd_ops.binary(name, rhs._data, lhs, reflected=True), rhs.context)
    return nd_ops.NUMBERS[name](lhs, rhs)


def _make_elementwise(name: str, mxnet_name: str) -> Callable[[Any, Any], Any]:
    def function(lhs: Any, rhs: Any) -> Any:
        return _elementwise(name, lhs, rhs)

    function.__name__ = mxnet_name
    function.__doc__ = f"MXNet's ``nd.{mxnet_name}``: element-wise, broadcasting; either side may be a number."
    return function


#: MXNet's function names for the operator table of :mod:`kvcli.mx.ndarray.ops`.
_ELEMENTWISE_NAMES = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "truediv", "modulo": "mod",
    "power": "pow", "maximum": "maximum", "minimum": "minimum", "equal": "eq",
    "not_equal": "ne", "greater": "gt", "greater_equal": "ge", "lesser": "lt", "lesser_equal": "le",
}
for _mxnet_name, _name in _ELEMENTWISE_NAMES.items():
    globals()[_mxnet_name] = _make_elementwise(_name, _mxnet_name)


def make_result(name: str, values: np.ndarray, ctx: Context, out: "NDArray | None") -> "NDArray":
    """A new NDArray of ``values``, or ``values`` written into ``out`` (MXNet's ``out=``, which
    may be a view such as ``grad[row]``) and ``out`` returned."""
    if out is None:
        return NDArray(values, ctx)
    check_out(name, out)
    if out.shape != values.shape:
        raise NDArrayError(f"{name}: out has shape {out.shape} but the result has shape {values.shape}")
    np.copyto(out._data, values, casting="unsafe")
    return out


def check_out(name: str, out: Any) -> None:
    if not isinstance(out, NDArray):
        raise NDArrayError(f"{name}: out must be a dense NDArray, not {type(out).__name__}")


def _make_unary(name: str) -> Callable[..., NDArray]:
    def function(data: NDArray, out: NDArray | None = None, name: str | None = None) -> NDArray:
        return make_result(function.__name__, nd_ops.unary(function.__name__, operand_data(data, function.__name__)),
                       data.context, out)

    function.__name__ = name
    function.__doc__ = f"MXNet's ``nd.{name}``, element-wise, keeping the dtype (integers truncate)."
    return function


for _name in nd_ops.UNARY:
    globals()[_name] = _make_unary(_name)


def clip(data: NDArray, a_min: float, a_max: float, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """MXNet's ``clip``: each value compared with the bounds as float32 numbers (float64 for
    float64 arrays): above ``a_max`` it becomes ``a_max``, else below ``a_min`` ``a_min``
    (converted to the dtype as C converts); NaN stays. ``a_min > a_max`` is not an error."""
    values = operand_data(data, "clip")
    lo, hi = np.float32(a_min), np.float32(a_max)  # MXNet's ClipParam holds floats
    compared = values if values.dtype == np.float64 else values.astype(np.float32)
    low, high = nd_ops.cast(np.array(lo), values.dtype), nd_ops.cast(np.array(hi), values.dtype)
    clipped = np.where(compared > hi, high, np.where(compared < lo, low, values))
    return make_result("clip", clipped, data.context, out)


def norm(data: NDArray, ord: int = 2, axis: Any = None, keepdims: bool = False, out: NDArray | None = None,
         name: str | None = None) -> NDArray:
    """MXNet's ``nd.norm``: the L1 or L2 norm over ``axis`` (all axes: shape ``(1,)``)."""
    return make_result("norm", nd_ops.norm(operand_data(data, "norm"), ord, axis, keepdims), data.context, out)


def dot(lhs: NDArray, rhs: NDArray, transpose_a: bool = False, transpose_b: bool = False,
        out: NDArray | None = None, name: str | None = None) -> NDArray:
    """MXNet's ``nd.dot``: the last axis of ``lhs`` with the first of ``rhs`` (float dtypes)."""
    result = nd_ops.dot(operand_data(lhs, "dot"), operand_data(rhs, "dot"), transpose_a, transpose_b)
    return make_result("dot", result, lhs.context, out)


def transpose(data: NDArray, axes: Sequence[int] | None = None, out: NDArray | None = None,
              name: str | None = None) -> NDArray:
    """The axes reversed (or permuted by ``axes``), as a copy."""
    values = operand_data(data, "transpose")
    return make_result("transpose", np.transpose(values, tuple(axes) if axes else None).copy(), data.context, out)


def concat(*data: NDArray, dim: int = 1, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """Arrays joined along axis ``dim`` (MXNet's default: 1)."""
    arrays = [operand_data(a, "concat") for a in data]
    ctx = as_context(data[0].context if data else None)
    return make_result("concat", nd_ops.join("concat", arrays, dim, new_axis=False), ctx, out)


def stack(*data: NDArray, axis: int = 0, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """Same-shape arrays stacked along a new axis ``axis``."""
    arrays = [operand_data(a, "stack") for a in data]
    ctx = as_context(data[0].context if data else None)
    return make_result("stack", nd_ops.join("stack", arrays, axis, new_axis=True), ctx, out)


def waitall() -> None:
    """Nothing to wait for: operations here are synchronous."""


def expand_dims(data: NDArray, axis: int, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """A copy with a new axis of size 1 at ``axis``."""
    values = operand_data(data, "expand_dims")
    return make_result("expand_dims", values.reshape(nd_ops.expanded_shape(values.shape, axis)).copy(), data.context, out)


def flatten(data: NDArray, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """A copy of shape ``(d0, d1 * ... * dk)``."""
    values = operand_data(data, "flatten")
    return make_result("flatten", values.reshape(nd_ops.flattened_shape(values.shape)).copy(), data.context, out)


def squeeze(data: NDArray, axis: Any = None, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """A copy without size-1 axes (every one, or those of ``axis``); all gone: shape ``(1,)``."""
    values = operand_data(data, "squeeze")
    return make_result("squeeze", values.reshape(nd_ops.squeezed_shape(values.shape, axis)).copy(), data.context, out)


def broadcast_to(data: NDArray, shape: Any, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """A copy broadcast to ``shape`` (same number of axes; 0 keeps an axis)."""
    values = operand_data(data, "broadcast_to")
    target = nd_ops.broadcast_shape(values.shape, shape)
    return make_result("broadcast_to", np.broadcast_to(values, target).copy(), data.context, out)



__all__ = [  # the package adds functions', io's and sparse's names
    "Context", "NDArray", "NDArrayError", "arange", "array", "broadcast_to", "clip", "concat", "cpu",
    "current_context", "dot", "empty", "expand_dims", "eye", "flatten", "from_numpy", "full", "gpu", "linspace",
    "norm", "ones", "ones_like", "squeeze", "stack", "transpose", "waitall", "zeros", "zeros_like",
    *_ELEMENTWISE_NAMES, *nd_ops.UNARY,
]
Concat = concat  # MXNet's capitalised (symbol-era) name
__all__ += ["Concat"]
