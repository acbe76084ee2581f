"""``BaseSparseNDArray``: what MXNet's ``RowSparseNDArray`` and ``CSRNDArray`` share.

A sparse array **is** an :class:`~kvcli.mx.ndarray.ndarray.NDArray` (``isinstance(x,
mx.nd.NDArray)`` holds, as in MXNet), so every NDArray method reaches it. Each one either
does what MXNet does on sparse storage or raises :class:`~kvcli.errors.SparseUnsupportedError`
(an ``MXNetError`` that is also the ``NotImplementedError`` / ``TypeError`` / ``ValueError``
MXNet raises there); none computes a silently different answer:

* methods that are operators (``x.sqrt()``, ``x.sum()``, ``x.clip(...)``, ...) run the
  sparse-aware ``nd`` function of the same name (:mod:`.functions`), with MXNet's storage
  type for the result: kept where MXNet has a sparse kernel, dense where MXNet falls back;
* the Python operators follow MXNet's Python code operator by operator (``x + y`` is
  ``sparse.add``, ``x / y`` is ``nd.divide``, ``x == y`` is ``nd.equal``: an elementwise
  NDArray, never a bool);
* what MXNet refuses on sparse storage (``reshape``, ``size``, ``asscalar``, ``x[i, j]``)
  raises; what MXNet's NDArray does not have at all (``tolist``, ``negative``, ``//``,
  ``@``) is absent here too;
* any other NDArray method (one added later) raises until it is given a sparse meaning
  (:func:`seal`).

The dense values a fallback reads come from ``_data``, which for a sparse array is a fresh,
read-only dense copy: code that would write into it fails loudly instead of writing into a
copy. ``_kvcli_buffer`` (the writable buffer a store or optimizer writes in place) is None.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kvcli.errors import SparseUnsupportedError
from kvcli.mx.ndarray.context import Context
from kvcli.mx.ndarray.ndarray import NDArray, as_context

DEFAULT, ROW_SPARSE, CSR = "default", "row_sparse", "csr"
#: Storage types MXNet knows.
STYPES = (DEFAULT, ROW_SPARSE, CSR)

#: The public attributes of MXNet 1.9.1's ``NDArray`` (``dir(mx.nd.NDArray)``, recorded in
#: tests/data/mxnet_sparse_ops_reference.json). A kvcli NDArray method outside it is one
#: MXNet does not have: on a sparse array it is absent (``AttributeError``), as in MXNet.
MXNET_NDARRAY_ATTRIBUTES = frozenset((
    "T", "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "argmax", "argmax_channel",
    "argmin", "argsort", "as_in_context", "as_nd_ndarray", "as_np_ndarray", "asnumpy", "asscalar", "astype",
    "attach_grad", "backward", "broadcast_axes", "broadcast_like", "broadcast_to", "cbrt", "ceil", "clip",
    "context", "copy", "copyto", "cos", "cosh", "ctx", "degrees", "depth_to_space", "detach", "diag", "dtype",
    "exp", "expand_dims", "expm1", "fix", "flatten", "flip", "floor", "grad", "handle", "log", "log10", "log1p",
    "log2", "log_softmax", "max", "mean", "min", "nanprod", "nansum", "ndim", "norm", "one_hot", "ones_like",
    "pad", "pick", "prod", "radians", "rcbrt", "reciprocal", "relu", "repeat", "reshape", "reshape_like", "rint",
    "round", "rsqrt", "shape", "shape_array", "sigmoid", "sign", "sin", "sinh", "size", "size_array", "slice",
    "slice_assign", "slice_assign_scalar", "slice_axis", "slice_like", "softmax", "softmin", "sort",
    "space_to_depth", "split", "split_v2", "sqrt", "square", "squeeze", "stype", "sum", "swapaxes", "take", "tan",
    "tanh", "tile", "to_dlpack_for_read", "to_dlpack_for_write", "topk", "tostype", "transpose", "trunc",
    "wait_to_read", "writable", "zeros_like",
))
#: Operators MXNet's NDArray does not define (Python then raises ``TypeError``).
_ABSENT_OPERATORS = ("__floordiv__", "__rfloordiv__", "__ifloordiv__", "__matmul__", "__rmatmul__", "__ipow__")


def is_sparse(value: Any) -> bool:
    """Whether ``value`` is a kvcli sparse NDArray (row_sparse or csr)."""
    return isinstance(value, BaseSparseNDArray)


def unsupported(what: str, stype: str, fix: str = "convert it with .tostype('default') first") -> SparseUnsupportedError:
    """The one error for an operation kvcli does not perform on ``stype`` storage."""
    return SparseUnsupportedError(f"{what} is not supported on a {stype} array (MXNet refuses it too): {fix}")


def check_stype(stype: Any, where: str) -> str:
    """``stype`` when MXNet knows it, else the error MXNet gives (naming the valid ones)."""
    if stype not in STYPES:
        raise SparseUnsupportedError(f"{where}: invalid storage type {stype!r}: valid values are 'csr', 'default', "
                                     f"'row_sparse'")
    return str(stype)


def axis_range(size: int, begin: Any, end: Any) -> tuple[int, int]:
    """``begin:end`` of an axis of ``size`` as numpy reads it (None: the start / the end;
    negative counts from the end; beyond the axis stops at its ends), which is what MXNet's
    slice gives on a row_sparse or dense array; nothing selected is refused, as MXNet's csr
    slice refuses it (it makes no empty csr array)."""
    lo, hi, _ = slice(begin, end).indices(size)
    if lo >= hi:
        raise SparseUnsupportedError(f"slice: begin {begin}, end {end} select nothing of an axis of size {size} "
                                     "(MXNet makes no empty csr array either)")
    return lo, hi


class BaseSparseNDArray(NDArray):
    """An NDArray in a sparse storage format (``mxnet.nd.sparse.BaseSparseNDArray``)."""

    __slots__ = ()
    __array_priority__ = 1001.0  # above NDArray's: numpy defers to us as well
    #: No writable dense buffer: stores and optimizers read sparse values by their own protocols.
    _kvcli_buffer = None  # type: ignore[assignment]

    # -- what each storage type provides -------------------------------------------------
    def _dense(self) -> np.ndarray:
        """A new dense numpy array of the values."""
        raise NotImplementedError

    def _assign_dense(self, dense: np.ndarray) -> None:
        """Become the sparse form of ``dense`` (same shape), keeping this array's storage type
        and dtype: what MXNet does when a dense result is written into a sparse ``out``."""
        raise NotImplementedError

    def _assign_sparse(self, other: "BaseSparseNDArray") -> None:
        """Become a copy of ``other`` (same shape and storage type), stored positions included
        (those holding zeros too), in this array's dtype: MXNet's ``copyto`` between sparse arrays."""
        raise NotImplementedError

    def _with_context(self, ctx: Context) -> "BaseSparseNDArray":
        """A copy on ``ctx``."""
        raise NotImplementedError

    def tostype(self, stype: str) -> NDArray:
        """A copy in storage type ``stype`` (each storage type says which it can become)."""
        raise NotImplementedError

    # -- NDArray's storage, as a read-only dense copy (MXNet's storage fallback) -------------
    @property
    def _data(self) -> np.ndarray:  # type: ignore[override]  # read-only here: a dense copy
        dense = self._dense()
        dense.flags.writeable = False
        return dense

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        dense = self._dense()
        return dense if dtype is None else dense.astype(dtype)

    # -- attributes ------------------------------------------------------------------------
    @property
    def dtype(self) -> type:
        raise NotImplementedError

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        raise unsupported("size", self.stype, "MXNet finds it ambiguous for sparse storage: use x.shape")

    @property
    def writable(self) -> bool:
        """Always True: kvcli's arrays are writable."""
        return True

    @property
    def grad(self) -> None:
        """None: kvcli has no autograd (MXNet's is None until ``attach_grad``)."""
        return None

    def __len__(self) -> int:
        return self.shape[0]

    def asnumpy(self) -> np.ndarray:
        """The dense values as a new numpy array."""
        return self._dense()

    def asscalar(self) -> Any:
        raise unsupported("asscalar", self.stype)

    def reshape(self, *shape: Any, **kwargs: Any) -> NDArray:
        raise unsupported("reshape", self.stype, "nd.reshape(x, shape) computes a dense result, or use .tostype('default')")

    def _as_dense(self) -> NDArray:
        return NDArray(self._dense(), self.context)

    def broadcast_to(self, shape: Any) -> NDArray:
        """Dense, as MXNet's storage fallback gives it."""
        return self._as_dense().broadcast_to(shape)

    def expand_dims(self, axis: int, inplace: bool = False) -> NDArray:
        """Dense, as MXNet's storage fallback gives it (``inplace=True`` would reshape: refused)."""
        if inplace:
            raise unsupported("expand_dims(inplace=True)", self.stype)
        return self._as_dense().expand_dims(axis)

    def flatten(self, inplace: bool = False) -> NDArray:
        """Dense, as MXNet's storage fallback gives it (``inplace=True`` would reshape: refused)."""
        if inplace:
            raise unsupported("flatten(inplace=True)", self.stype)
        return self._as_dense().flatten()

    def squeeze(self, axis: Any = None, inplace: bool = False) -> NDArray:
        """Dense, as MXNet's storage fallback gives it (``inplace=True`` would reshape: refused)."""
        if inplace:
            raise unsupported("squeeze(inplace=True)", self.stype)
        return self._as_dense().squeeze(axis)

    def wait_to_read(self) -> None:
        """Nothing to wait for: operations here are synchronous."""

    def as_in_context(self, context: Context) -> "BaseSparseNDArray":
        """``self`` when it is on ``context`` already, else a copy there."""
        return self if context == self.context else self._with_context(as_context(context))

    def copyto(self, other: Any) -> Any:
        """Copy onto a context (a new array), or into an array of the same shape: a dense one
        or one of this storage type (another sparse type is refused, as in MXNet)."""
        if isinstance(other, Context):
            return self._with_context(other)
        if not isinstance(other, NDArray):
            raise TypeError(f"copyto does not support type {type(other).__name__}: give an NDArray or a Context")
        if other is self:
            import warnings

            warnings.warn("You are attempting to copy an array to itself", RuntimeWarning, stacklevel=2)
            return False
        if other.stype not in (DEFAULT, self.stype):
            raise SparseUnsupportedError(f"copyto does not support destination NDArray stype {other.stype} from a "
                                         f"{self.stype} array (MXNet neither): copy into a {self.stype} or dense array")
        if tuple(other.shape) != tuple(self.shape):
            raise SparseUnsupportedError(f"copyto: shape {self.shape} cannot be copied into shape {other.shape}")
        if isinstance(other, BaseSparseNDArray):
            other._assign_sparse(self)
        else:
            np.copyto(other._kvcli_buffer(), self._dense(), casting="unsafe")
        return other

    def __bool__(self) -> bool:
        count = int(np.prod(self.shape))
        if count == 0:
            return False
        if count > 1:
            raise SparseUnsupportedError("The truth value of an NDArray with multiple elements is ambiguous.")
        raise unsupported("bool() of a one-element array", self.stype)

    def __float__(self) -> float:
        raise TypeError(f"float() argument must be a string or a real number, not '{type(self).__name__}'")

    def __int__(self) -> int:
        raise TypeError(f"int() argument must be a string, a bytes-like object or a real number, not "
                        f"'{type(self).__name__}'")

    def __repr__(self) -> str:
        shape = "x".join(str(d) for d in self.shape)
        return f"\n<{type(self).__name__} {shape} @{self.context}>"

    __str__ = __repr__

    def __hash__(self) -> int:  # by identity, as MXNet's
        return id(self) // 16

    # -- in place: MXNet computes ``self op other`` and copies it back (``result.copyto(self)``) --
    def _assign(self, result: Any) -> "BaseSparseNDArray":
        result.copyto(self)
        return self

    def __iadd__(self, other: Any) -> "BaseSparseNDArray":
        return self._assign(self + other)

    def __isub__(self, other: Any) -> "BaseSparseNDArray":
        return self._assign(self - other)

    def __imul__(self, other: Any) -> "BaseSparseNDArray":
        return self._assign(self * other)

    def __itruediv__(self, other: Any) -> "BaseSparseNDArray":
        return self._assign(self / other)

    def __imod__(self, other: Any) -> "BaseSparseNDArray":
        return self._assign(self % other)


def _absent(name: str) -> Any:
    """An attribute MXNet's NDArray does not have: ``hasattr`` is False, as in MXNet."""

    def getter(self: Any) -> Any:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}' (nor has MXNet's)")

    return property(getter)


def _not_implemented(self: Any, other: Any) -> Any:
    return NotImplemented


def _refusing(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise unsupported(f"x.{name}()", self.stype)

    method.__name__ = name
    return method


def install_methods(methods: dict[str, Callable[..., Any]]) -> None:
    """Attach the sparse-aware methods (``x.sqrt()`` -> the sparse-aware ``nd.sqrt``)."""
    for name, method in methods.items():
        setattr(BaseSparseNDArray, name, _absent(name) if name not in MXNET_NDARRAY_ATTRIBUTES else method)


def seal(dense_class: type) -> None:
    """Give every public NDArray attribute not defined for sparse arrays a sparse meaning:
    absent where MXNet's NDArray lacks it, refused otherwise (never a dense computation
    whose storage type could differ from MXNet's)."""
    own: set[str] = set()
    for klass in BaseSparseNDArray.__mro__:
        if klass is dense_class:
            break
        own.update(vars(klass))
    for name in _ABSENT_OPERATORS:
        if name not in vars(BaseSparseNDArray):
            setattr(BaseSparseNDArray, name, _not_implemented)
    for name, value in vars(dense_class).items():
        if name.startswith("_") or name in own:
            continue
        if name not in MXNET_NDARRAY_ATTRIBUTES:
            setattr(BaseSparseNDArray, name, _absent(name))
        elif callable(value):
            setattr(BaseSparseNDArray, name, _refusing(name))


__all__ = ["BaseSparseNDArray", "CSR", "axis_range", "check_stype", "DEFAULT", "ROW_SPARSE", "STYPES", "install_methods",
           "is_sparse", "seal", "unsupported"]
