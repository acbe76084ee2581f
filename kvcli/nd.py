"""A small MXNet-style ``nd`` module: NDArrays are numpy arrays that remember a context.

Enough of ``mxnet.nd`` for KVStore code written for MXNet to run unchanged: ``nd.ones``,
``nd.zeros``, ``nd.full``, ``nd.array`` (all float32 by default, like MXNet), ``ctx=``,
``.asnumpy()``, ``.shape``, ``.context``, arithmetic, and in-place updates such as
``x[:] += y``. Computation is numpy's; a context names the device an array belongs to.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

DEFAULT_DTYPE = np.float32
#: Arrays created on an explicit context from this size up live in shared memory, where the
#: worker processes of a ``device`` store read them without a copy.
DEVICE_MEMORY_MIN_BYTES = 1 << 20


class Context:
    """A device: ``cpu(i)`` or ``gpu(i)``. kvcli runs both on the CPU; the id picks the device."""

    __slots__ = ("device_type", "device_id")

    def __init__(self, device_type: str = "cpu", device_id: int = 0) -> None:
        if device_type not in ("cpu", "gpu", "cpu_pinned", "cpu_shared"):
            raise ValueError(f"unknown device type {device_type!r}: use 'cpu' or 'gpu'")
        self.device_type = device_type
        self.device_id = int(device_id)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Context)
            and other.device_type == self.device_type
            and other.device_id == self.device_id
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__


def cpu(device_id: int = 0) -> Context:
    """The context ``cpu(device_id)``."""
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """The context ``gpu(device_id)`` (computed on the CPU here; kept for MXNet code)."""
    return Context("gpu", device_id)


def current_context() -> Context:
    """The default context, ``cpu(0)``."""
    return cpu(0)


def _context(ctx: Context | None) -> Context:
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
        self._ctx = _context(ctx)

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
        return NDArray(self._data.T, self._ctx)

    # -- conversion ---------------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the values."""
        return np.array(self._data, copy=True)

    def asscalar(self) -> Any:
        """The single value of a size-1 array."""
        if self._data.size != 1:
            raise ValueError(f"asscalar needs an array of size 1, not shape {self.shape}")
        return self._data.reshape(()).item()

    def astype(self, dtype: Any, copy: bool = True) -> "NDArray":
        return NDArray(self._data.astype(dtype, copy=copy), self._ctx)

    def copy(self) -> "NDArray":
        return NDArray(self._data.copy(), self._ctx)

    def copyto(self, other: "NDArray | Context") -> "NDArray":
        """Copy into another NDArray (same shape) or onto a context."""
        if isinstance(other, Context):
            return NDArray(self._data.copy(), other)
        other._data[...] = self._data
        return other

    def as_in_context(self, ctx: Context) -> "NDArray":
        return self if ctx == self._ctx else NDArray(self._data.copy(), ctx)

    def reshape(self, *shape: Any, **kwargs: Any) -> "NDArray":
        target = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return NDArray(self._data.reshape(kwargs.get("shape", target)), self._ctx)

    def wait_to_read(self) -> None:
        """Nothing to wait for: operations here are synchronous."""

    def tolist(self) -> Any:
        return self._data.tolist()

    def sum(self, axis: Any = None, keepdims: bool = False) -> "NDArray":
        return NDArray(np.asarray(self._data.sum(axis=axis, keepdims=keepdims)), self._ctx)

    def mean(self, axis: Any = None, keepdims: bool = False) -> "NDArray":
        return NDArray(np.asarray(self._data.mean(axis=axis, keepdims=keepdims)), self._ctx)

    def max(self, axis: Any = None, keepdims: bool = False) -> "NDArray":
        return NDArray(np.asarray(self._data.max(axis=axis, keepdims=keepdims)), self._ctx)

    def min(self, axis: Any = None, keepdims: bool = False) -> "NDArray":
        return NDArray(np.asarray(self._data.min(axis=axis, keepdims=keepdims)), self._ctx)

    # -- indexing -----------------------------------------------------------------------
    def __getitem__(self, index: Any) -> "NDArray":
        return NDArray(np.asarray(self._data[_unwrap(index)]), self._ctx)

    def __setitem__(self, index: Any, value: Any) -> None:
        self._data[_unwrap(index)] = _unwrap(value)

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (NDArray(np.asarray(row), self._ctx) for row in self._data)

    def __bool__(self) -> bool:
        return bool(self._data)

    def __float__(self) -> float:
        return float(self.asscalar())

    def __int__(self) -> int:
        return int(self.asscalar())

    def __repr__(self) -> str:
        shape = "x".join(str(d) for d in self.shape)
        return f"\n{self._data}\n<NDArray {shape} @{self._ctx}>"

    __hash__ = None  # type: ignore[assignment]


def _binary(op: Callable[[Any, Any], Any], reflected: bool = False) -> Callable[[NDArray, Any], Any]:
    def method(self: NDArray, other: Any) -> Any:
        other_data = _unwrap(other)
        result = op(other_data, self._data) if reflected else op(self._data, other_data)
        return NDArray(np.asarray(result), self._ctx)

    return method


def _inplace(op: Callable[[Any, Any], Any]) -> Callable[[NDArray, Any], NDArray]:
    def method(self: NDArray, other: Any) -> NDArray:
        op(self._data, _unwrap(other))
        return self

    return method


for _name, _op, _iop in (
    ("add", operator.add, operator.iadd),
    ("sub", operator.sub, operator.isub),
    ("mul", operator.mul, operator.imul),
    ("truediv", operator.truediv, operator.itruediv),
    ("floordiv", operator.floordiv, operator.ifloordiv),
    ("mod", operator.mod, operator.imod),
    ("pow", operator.pow, operator.ipow),
):
    setattr(NDArray, f"__{_name}__", _binary(_op))
    setattr(NDArray, f"__r{_name}__", _binary(_op, reflected=True))
    setattr(NDArray, f"__i{_name}__", _inplace(_iop))
for _name, _op in (
    ("eq", operator.eq),
    ("ne", operator.ne),
    ("lt", operator.lt),
    ("le", operator.le),
    ("gt", operator.gt),
    ("ge", operator.ge),
    ("matmul", operator.matmul),
):
    setattr(NDArray, f"__{_name}__", _binary(_op))
NDArray.__neg__ = lambda self: NDArray(-self._data, self._ctx)  # type: ignore[method-assign]
NDArray.__abs__ = lambda self: NDArray(np.abs(self._data), self._ctx)  # type: ignore[method-assign]


# ---------------------------------------------------------------------- creation
def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def _allocate(shape: int | Sequence[int], ctx: Context | None, dtype: Any) -> np.ndarray:
    dims, dtype = _shape(shape), np.dtype(dtype)
    if ctx is not None and int(np.prod(dims, dtype=np.int64)) * dtype.itemsize >= DEVICE_MEMORY_MIN_BYTES:
        from kvcli.store.shm import device_array

        return device_array(dims, dtype)
    return np.empty(dims, dtype=dtype)


def empty(shape: int | Sequence[int], ctx: Context | None = None, dtype: Any = DEFAULT_DTYPE) -> NDArray:
    """An uninitialised array."""
    return NDArray(_allocate(shape, ctx, dtype), ctx)


def full(shape: int | Sequence[int], val: float, ctx: Context | None = None, dtype: Any = DEFAULT_DTYPE, **_: Any) -> NDArray:
    """An array filled with ``val``."""
    data = _allocate(shape, ctx, dtype)
    data.fill(val)
    return NDArray(data, ctx)


def zeros(shape: int | Sequence[int], ctx: Context | None = None, dtype: Any = DEFAULT_DTYPE, **_: Any) -> NDArray:
    """An array of zeros (float32 unless ``dtype`` says otherwise)."""
    return full(shape, 0, ctx, dtype)


def ones(shape: int | Sequence[int], ctx: Context | None = None, dtype: Any = DEFAULT_DTYPE, **_: Any) -> NDArray:
    """An array of ones (float32 unless ``dtype`` says otherwise)."""
    return full(shape, 1, ctx, dtype)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An array from nested lists, a numpy array or an NDArray.

    As in MXNet 1.9.1, the result is float32 unless ``dtype=`` says otherwise; only an
    NDArray source keeps its own dtype (``nd.array(np.ones(2))`` is float32, not float64).
    """
    if dtype is None:
        dtype = source_array.dtype if isinstance(source_array, NDArray) else DEFAULT_DTYPE
    source = _unwrap(source_array)
    return NDArray(np.array(source, dtype=dtype, copy=True), ctx)


def arange(start: float, stop: float | None = None, step: float = 1.0, repeat: int = 1,
           ctx: Context | None = None, dtype: Any = DEFAULT_DTYPE) -> NDArray:
    """Evenly spaced values, as ``mxnet.nd.arange``."""
    values = np.arange(start, stop, step, dtype=dtype) if stop is not None else np.arange(start, step=step, dtype=dtype)
    return NDArray(np.repeat(values, repeat) if repeat != 1 else values, ctx)


def ones_like(data: NDArray) -> NDArray:
    return NDArray(np.ones_like(data._data), data.context)


def zeros_like(data: NDArray) -> NDArray:
    return NDArray(np.zeros_like(data._data), data.context)


def dot(lhs: NDArray, rhs: NDArray) -> NDArray:
    return NDArray(np.asarray(np.dot(lhs._data, rhs._data)), lhs.context)


def concat(*arrays: NDArray, dim: int = 1) -> NDArray:
    return NDArray(np.concatenate([a._data for a in arrays], axis=dim), arrays[0].context)


def waitall() -> None:
    """Nothing to wait for: operations here are synchronous."""


__all__ = [
    "Context", "NDArray", "arange", "array", "concat", "cpu", "current_context", "dot", "empty",
    "full", "gpu", "ones", "ones_like", "waitall", "zeros", "zeros_like",
]
