"""How a built-in optimizer's numpy methods take what MXNet hands an optimizer: kvcli
NDArrays (unwrapped to views of their buffers), row-sparse weights (updated as the dense
array they are, when they hold every row), CSR weights (MXNet's storage fallback: densely),
aggregated lists of weights, and float16 weights with a float32 master copy.

:class:`kvcli.optim.base.Optimizer` wraps each built-in method of :data:`NUMPY_API` with
:func:`accept_ndarrays` when a class is defined, and hands a user's override NDArray views
(:func:`wrap_tree`); nothing here depends on which optimizer runs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kvcli.arrays.core import Key
from kvcli.errors import UpdaterError
from kvcli.optim.checks import as_numpy, is_builtin, is_row_sparse
from kvcli.optim.views import ArrayViews, array_views

if TYPE_CHECKING:  # base imports this module
    from kvcli.optim.base import Optimizer

#: The array methods of a built-in: each takes NDArrays as well as numpy arrays.
NUMPY_API = ("create_state", "create_state_multi_precision", "update", "update_multi_precision", "_update_impl")


def defined_by_builtin(cls: type, name: str) -> bool:
    """Whether ``cls.<name>`` is kvcli's own method (not an override in a user's class)."""
    owner = next((c for c in cls.__mro__ if name in c.__dict__), None)
    return owner is None or is_builtin(owner)


def accept_ndarrays(method: Any, creates: bool) -> Any:
    """Let a numpy method take kvcli NDArrays: unwrap weight, gradient and state (views of
    the same buffers); a created state is handed back as NDArrays on the weight's context."""

    @functools.wraps(method)
    def accepting(self: "Optimizer", index: Key, weight: Any, *rest: Any, **kwargs: Any) -> Any:
        if isinstance(weight, np.ndarray):
            if rest and is_csr(rest[0]):  # a CSR gradient: computed on densely (MXNet's fallback)
                rest = tuple(unwrap_tree(a) for a in rest)
            return method(self, index, weight, *rest, **kwargs)
        sparse = row_sparse_weight(weight)
        if sparse is not None:
            return _on_full_row_sparse(method, self, index, weight, sparse, rest, creates, kwargs)
        if is_csr(weight):
            return _on_csr(method, self, index, weight, rest, creates, kwargs)
        if isinstance(weight, (list, tuple)) and not creates:  # an aggregated update of several weights
            return _aggregated(accepting, method, self, index, weight, rest, kwargs)
        if not hasattr(weight, "_kvcli_buffer"):
            return method(self, index, weight, *rest, **kwargs)
        result = method(self, index, as_numpy(weight), *(unwrap_tree(a) for a in rest), **kwargs)
        return wrap_tree(result, weight.context) if creates else result

    accepting._kvcli_accepts_ndarrays = True  # type: ignore[attr-defined]
    return accepting


def _aggregated(accepting: Any, method: Any, opt: "Optimizer", index: Any, weights: Any, rest: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
    """An aggregated call (lists of indices, weights, gradients and states, as MXNet's
    Updater makes for SGD, LARS and LAMB). One of each is the single update it equals in
    MXNet's ``_update_impl``. Sparse weights are updated one by one, as MXNet's ``_update_impl``
    does (it aggregates dense weights only); dense ones go to the method as numpy lists."""
    if isinstance(index, (list, tuple)) and len(index) == len(weights) == 1 \
            and all(isinstance(a, (list, tuple)) and len(a) == 1 for a in rest[:2]):
        return accepting(opt, index[0], weights[0], *(a[0] for a in rest[:2]), *rest[2:], **kwargs)
    if any(row_sparse_weight(w) is not None or is_csr(w) for w in weights) and isinstance(index, (list, tuple)):
        for i, w, *others in zip(index, weights, *rest[:2]):
            accepting(opt, i, w, *others, *rest[2:], **kwargs)
        return None
    return method(opt, index, unwrap_tree(weights), *(unwrap_tree(a) for a in rest), **kwargs)


def row_sparse_weight(weight: Any) -> Any:
    """The :class:`~kvcli.arrays.sparse.RowSparse` of a row-sparse weight (a store's value, or
    an nd array of one), else None."""
    from kvcli.arrays.sparse import RowSparse

    if isinstance(weight, RowSparse):
        return weight
    inner = getattr(weight, "_kvcli_row_sparse", None)
    return inner() if inner is not None else None


def _on_full_row_sparse(method: Any, opt: "Optimizer", index: Key, weight: Any, sparse: Any, rest: tuple[Any, ...],
                        creates: bool, kwargs: dict[str, Any]) -> Any:
    """Run ``method`` on a row-sparse weight as MXNet's kernels do: the weight must hold every
    row (MXNet's ``CHECK_RSP_ALL_ROWS_NON_ZERO``) and is updated as the dense array it then is
    (by the optimizer's ``update_row_sparse_weight`` where its sparse kernel differs from the
    dense one), keeping every row. Its rows are that dense array, in order, so the update
    works on them in place: a lazy update costs the rows pushed, not the table."""
    if sparse.indices.shape[0] != sparse.shape[0]:
        raise UpdaterError(
            f"{type(opt).__name__}: a row-sparse weight must hold every row: it has {sparse.indices.shape[0]} "
            f"of {sparse.shape[0]} (key {index!r}); give a dense weight or one with all rows"
        )
    result = _on_dense_copy(method, opt, index, sparse.data, rest, kwargs)
    context = getattr(weight, "context", None)
    return wrap_tree(result, context) if creates and context is not None else result


def _on_dense_copy(method: Any, opt: "Optimizer", index: Key, dense: np.ndarray, rest: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
    """``method`` on the dense form of a sparse weight; a plain update goes to the optimizer's
    ``update_row_sparse_weight`` when it has one (its sparse kernel, or, for NAG, MXNet's
    fallback computing into a temporary array). A float16 weight's multi-precision update
    works on its float32 master copy, as for a dense weight."""
    plain = method.__name__ in ("update", "_update_impl") or (
        method.__name__ == "update_multi_precision" and not (opt.multi_precision and dense.dtype == np.float16))
    special = getattr(opt, "update_row_sparse_weight", None) if plain else None
    if special is not None:
        return special(index, dense, *(unwrap_tree(a) for a in rest[:2]))
    return method(opt, index, dense, *(unwrap_tree(a) for a in rest), **kwargs)


def is_csr(value: Any) -> bool:
    """Whether ``value`` is a kvcli CSR array (``kvcli.mx.ndarray.sparse.CSRNDArray``)."""
    return hasattr(value, "_kvcli_assign_dense")


def _on_csr(method: Any, opt: "Optimizer", index: Key, weight: Any, rest: tuple[Any, ...], creates: bool,
            kwargs: dict[str, Any]) -> Any:
    """Run ``method`` on a CSR weight as MXNet's storage fallback does (no optimizer has a CSR
    kernel): on the dense array, whose non-zero values then become the weight again; states
    are dense arrays."""
    dense = np.asarray(weight)
    result = _on_dense_copy(method, opt, index, dense, rest, kwargs)
    if creates:
        return wrap_tree(result, weight.context)
    weight._kvcli_assign_dense(dense)
    return result


def unwrap_tree(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(unwrap_tree(v) for v in value)
    if isinstance(value, list):
        return [unwrap_tree(v) for v in value]
    if is_csr(value):
        return np.asarray(value)  # a CSR gradient, read densely
    sparse = row_sparse_weight(value)
    if sparse is not None:
        return sparse  # a row-sparse NDArray gradient: its store value (the row-sparse protocol)
    return as_numpy(value)


def wrap_tree(value: Any, context: Any, views: ArrayViews | None = None) -> Any:
    """numpy arrays (in tuples and lists) as NDArray views on ``context``; row-sparse values
    as row-sparse NDArrays over them; anything else (NDArrays, None, numbers) as it is.
    ``views``: the MXNet layer's views (default: those it installed)."""
    from kvcli.arrays.sparse import RowSparse

    if isinstance(value, tuple):
        return tuple(wrap_tree(v, context, views) for v in value)
    if isinstance(value, list):
        return [wrap_tree(v, context, views) for v in value]
    if isinstance(value, np.ndarray):
        return (views or array_views()).dense(value, context)
    if isinstance(value, RowSparseGrad):
        value = RowSparse(value.data, value.indices, value.shape, copy=False)
    if isinstance(value, RowSparse):
        return (views or array_views()).row_sparse(value)
    return value


def astype(grad: Any, dtype: Any) -> Any:
    if is_row_sparse(grad) and not hasattr(grad, "astype"):
        return RowSparseGrad(np.asarray(grad.indices, dtype=np.int64), np.asarray(grad.data).astype(dtype), tuple(grad.shape))
    return grad.astype(dtype)


def copy_cast(weight: Any, master: Any) -> None:
    """Copy the float32 master into the float16 weight; a row-sparse weight (a store's
    RowSparse value, or an nd array of it) gets every row."""
    from kvcli.arrays.sparse import RowSparse, as_row_sparse

    if is_csr(weight):
        weight._kvcli_assign_dense(np.asarray(as_numpy(master)))
        return
    target = weight if isinstance(weight, RowSparse) else (
        weight._kvcli_row_sparse() if hasattr(weight, "_kvcli_row_sparse") else None)
    if target is not None:
        source = as_row_sparse(master)
        rows = RowSparse.all_rows(source.to_dense() if source is not None else as_numpy(master))
        target.assign(rows.astype(weight.dtype))
        return
    np.copyto(as_numpy(weight), as_numpy(master), casting="unsafe")


@dataclass
class RowSparseGrad:
    """A row-sparse gradient (the protocol: sorted unique ``indices``, ``data``, ``shape``)."""

    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, ...]
