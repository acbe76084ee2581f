"""One optimizer state per index, created on first use: the core of MXNet's ``Updater``
(:class:`kvcli.optim.updater.Updater` adds ``get_states`` / ``set_states``) and what an
optimizer runs when a store calls it. Below :mod:`kvcli.optim.base`, which uses it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kvcli.arrays.core import Key
from kvcli.arrays.sparse import RowSparse
from kvcli.errors import OptimizerStateError, ShapeMismatchError
from kvcli.optim.checks import as_numpy, is_row_sparse, leaves

if TYPE_CHECKING:
    from kvcli.optim.base import Optimizer


class PerIndexStates:
    """``states(index, grad, weight)`` creates each index's state on first use and calls
    ``optimizer.update_multi_precision`` (the core of MXNet's ``Updater``; what an optimizer
    runs as a store updater)."""

    def __init__(self, optimizer: "Optimizer") -> None:
        self.optimizer = optimizer
        self.states: dict[Key, Any] = {}
        self.states_synced: dict[Key, bool] = {}
        #: Whether each index's state carries a float32 master copy.
        self.multi_precision: dict[Key, bool] = {}
        #: Named arrays loaded from a file, put into place at the index's next update.
        self.pending: dict[Key, dict[str, np.ndarray]] = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index: Key | list[Key], grad: Any, weight: Any) -> None:
        """MXNet's ``Updater.__call__``: create the missing states, then call
        ``update_multi_precision`` once per index, or, for an optimizer that aggregates
        (``aggregate_num > 0``: SGD, LARS, LAMB), with tuples of up to ``aggregate_num``
        indices of one dtype (a subclass's override gets those tuples, as in MXNet)."""
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        # As MXNet: the update counts are those of the weights' device, so per-device
        # updaters sharing one optimizer (Gluon's Trainer) each count their own steps.
        if weights:
            self.optimizer._set_current_context(_device_id(weights[0]))
        for i, (idx, g, w) in enumerate(zip(indices, grads, weights)):
            if isinstance(idx, bytes):
                indices[i] = idx = idx.decode()
            if self.optimizer.numpy_native:  # a user's class meets MXNet's NDArray rules
                _check_shapes(idx, g, w, self.optimizer.grad_broadcasts)
            grads[i], weights[i] = self._as_seen(g, w)
            if idx not in self.states:
                self.states[idx] = self._create(idx, weights[i])
                self.states_synced[idx] = True
        update: Any = self.optimizer.update_multi_precision  # one index, or tuples of them
        size = self.optimizer.aggregate_num
        # kvcli's own optimizers update one weight alone exactly as in a tuple of one (the
        # store's path: one key per call), without building the tuples
        single = len(indices) == 1 and self.optimizer.numpy_native
        if single or not self.aggregate_updates or size <= 0:  # (one set from saved states may not aggregate)
            for idx, g, w in zip(indices, grads, weights):
                update(idx, w, g, self.states[idx])
            return
        by_dtype: dict[Any, list[tuple[Key, Any, Any]]] = {}
        for idx, g, w in zip(indices, grads, weights):
            by_dtype.setdefault(w.dtype, []).append((idx, w, g))
        for group in by_dtype.values():
            for start in range(0, len(group), size):
                chunk_indices, chunk_weights, chunk_grads = zip(*group[start:start + size])
                update(chunk_indices, chunk_weights, chunk_grads, [self.states[i] for i in chunk_indices])

    def _as_seen(self, grad: Any, weight: Any) -> tuple[Any, Any]:
        """The gradient and weight as the optimizer takes them: numpy (kvcli's built-ins)
        or NDArrays (a user's class, a subclass of a built-in too; a store's row-sparse
        value becomes a row-sparse NDArray over it, as MXNet hands a RowSparseNDArray)."""
        opt = self.optimizer
        weight_np = as_numpy(weight)
        if opt.numpy_native:
            return (grad if is_row_sparse(grad) else np.asarray(as_numpy(grad))), weight_np
        if isinstance(grad, RowSparse):
            grad = opt.array_views().row_sparse(grad)
        elif not is_row_sparse(grad):
            grad = opt._wrap(np.asarray(as_numpy(grad)))
        return grad, _user_weight(opt, weight_np)

    def _create(self, index: Key, weight: Any) -> Any:
        opt = self.optimizer
        state = opt.create_state_multi_precision(index, weight)
        mp = bool(opt.multi_precision and weight.dtype == np.float16)
        self.multi_precision[index] = mp
        loaded = self.pending.pop(index, None)
        if loaded is not None:
            template = self._named(index, state)
            if set(template) != set(loaded):
                raise OptimizerStateError(
                    f"the loaded state of key {index!r} holds {sorted(loaded)} but {opt.spec} keeps "
                    f"{sorted(template)} for this weight: set the optimizer the state was saved with"
                )
            for name, array in loaded.items():
                target = as_numpy(template[name])
                if target.shape != array.shape:
                    raise OptimizerStateError(
                        f"the loaded state {name!r} of key {index!r} has shape {array.shape} but the weight "
                        f"needs {target.shape}: load the state of this store's keys"
                    )
                np.copyto(target, array, casting="same_kind")
        return state

    def _named(self, index: Key, raw: Any) -> dict[str, Any]:
        names = self.optimizer._leaf_names(raw, self.multi_precision.get(index, False))
        return {n: leaf for n, leaf in zip(names, leaves(raw)) if leaf is not None}

    def named_states(self) -> dict[Key, dict[str, np.ndarray]]:
        """Every index's state as named numpy arrays (views), loaded-but-unused ones included."""
        out = {k: {n: as_numpy(a) for n, a in self._named(k, raw).items()} for k, raw in self.states.items()}
        for key, arrays in self.pending.items():
            out.setdefault(key, arrays)
        return out

    def forget(self, index: Key) -> None:
        for table in (self.states, self.states_synced, self.multi_precision, self.pending):
            table.pop(index, None)

    def sync_state_context(self, state: Any, context: Any) -> Any:
        """MXNet moves states to the weight's device; kvcli keeps one host copy, so the state
        is returned as it is (tuples and lists stay what they are)."""
        if isinstance(state, tuple):
            return tuple(self.sync_state_context(s, context) for s in state)
        if isinstance(state, list):
            return [self.sync_state_context(s, context) for s in state]
        return state


def _device_id(weight: Any) -> int:
    """The device number of a weight's context; 0 for numpy arrays and a store's values
    (MXNet's stores hand their updater values of device 0)."""
    return int(getattr(getattr(weight, "context", None), "device_id", 0))


def _user_weight(opt: "Optimizer", weight: Any) -> Any:
    """The weight as a user optimizer sees it: an NDArray, or for a store's row-sparse value
    a row-sparse NDArray over it (as MXNet hands a RowSparseNDArray)."""
    if isinstance(weight, RowSparse):
        return opt.array_views().row_sparse(weight)
    if not isinstance(weight, np.ndarray):
        return weight  # already an nd array (dense ones were unwrapped by as_numpy)
    return opt._wrap(weight)


def _check_shapes(index: Key, grad: Any, weight: Any, broadcasts: bool) -> None:
    """MXNet's update operators refuse a gradient whose shape is not the weight's (an
    MXNetError), its optimizers in NDArray arithmetic one that does not broadcast to it;
    numpy would broadcast it or fail with its own ValueError."""
    grad_shape, weight_shape = tuple(getattr(grad, "shape", ())), tuple(getattr(weight, "shape", ()))
    if grad_shape != weight_shape and not (broadcasts and _broadcasts_to(grad_shape, weight_shape)):
        raise ShapeMismatchError(
            f"the gradient of index {index!r} has shape {grad_shape} but its weight has shape "
            f"{weight_shape}: give a gradient of the weight's shape")


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False
