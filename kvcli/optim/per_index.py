"""One optimizer state per index, created on first use: the core of MXNet's ``Updater``
(:class:`kvcli.optim.updater.Updater` adds ``get_states`` / ``set_states``) and what an
optimizer runs when a store calls it. Below :mod:`kvcli.optim.base`, which uses it.

``states[index]`` is what ``create_state_multi_precision`` made: for kvcli's built-ins numpy
arrays (None, an array, or tuples of them), which their kernels update in place. With
``views`` (the MXNet layer's Updater, and a store's updater once MXNet code looks at it as
``kv._updater``), it holds what MXNet's ``Updater.states`` holds instead: NDArrays in the same
tuples, each a view of the numpy buffer the kernel updates (no copy per update). MXNet code
may read them, write them (``states[i][:] = 0``) or replace them (``states[i] = ...``): the
kernels take whatever ``states[index]`` holds at the next update.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from kvcli.arrays.core import Key
from kvcli.arrays.sparse import RowSparse
from kvcli.errors import OptimizerStateError, ShapeMismatchError
from kvcli.optim.checks import as_numpy, is_builtin, is_row_sparse, leaves
from kvcli.optim.dispatch import unwrap_tree, wrap_tree
from kvcli.optim.views import ArrayViews

if TYPE_CHECKING:
    from kvcli.optim.base import Optimizer

_GONE = object()  # a state the caller deleted (``del updater.states[i]``)
#: The tables a :class:`PerIndexStates` keeps by index (forgotten, cleared, taken over together).
_BY_INDEX = ("states", "states_synced", "multi_precision", "pending", "_kernel", "_loaded")


class PerIndexStates:
    """``states(index, grad, weight)`` creates each index's state on first use and calls
    ``optimizer.update_multi_precision`` (the core of MXNet's ``Updater``; what an optimizer
    runs as a store updater). ``views``: hold the states as NDArray views (MXNet's form)."""

    def __init__(self, optimizer: "Optimizer", views: ArrayViews | None = None) -> None:
        self.optimizer = optimizer
        self.states: dict[Key, Any] = {}
        self.states_synced: dict[Key, bool] = {}
        #: Whether each index's state carries a float32 master copy.
        self.multi_precision: dict[Key, bool] = {}
        #: Named arrays loaded from a file, checked against the weight at the index's next update.
        self.pending: dict[Key, dict[str, np.ndarray]] = {}
        self.aggregate_updates = optimizer.aggregate_num > 0
        #: The NDArray views ``states`` is shown in (None: the kernels' numpy arrays themselves).
        self.views = views
        #: index -> (``states[index]`` as last seen, its numpy form): the kernels' arrays
        #: without unwrapping the NDArrays at every update.
        self._kernel: dict[Key, tuple[Any, Any]] = {}
        #: index -> the state ``states`` shows for a loaded index until its next update.
        self._loaded: dict[Key, Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        # pickled or copied, an NDArray's buffer and the numpy array cached for it become two
        # arrays: the copy unwraps its states again at its first update
        return {**self.__dict__, "_kernel": {}}

    def take_over(self, other: "PerIndexStates") -> None:
        """Hold ``other``'s states from now on (the same arrays, shown in this object's form:
        how a store's updater becomes MXNet's ``kv._updater`` when MXNet code looks at it)."""
        for table in ("optimizer", *_BY_INDEX):
            setattr(self, table, getattr(other, table))
        if not self._wraps():
            return
        for index, state in list(self.states.items()):
            cached = self._kernel.get(index)
            if cached is not None and cached[0] is state:
                continue  # shown already
            shown = self._shown(index, unwrap_tree(state), None)
            if self._loaded.get(index, _GONE) is state:
                self._loaded[index] = shown
            self.states[index] = shown

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
            if idx not in self.states or idx in self._loaded:
                self._start(idx, weights[i], getattr(w, "context", None))
        update: Any = self.optimizer.update_multi_precision  # one index, or tuples of them
        size = self.optimizer.aggregate_num
        # kvcli's own optimizers update one weight alone exactly as in a tuple of one (the
        # store's path: one key per call), without building the tuples
        single = len(indices) == 1 and self.optimizer.numpy_native
        if single or not self.aggregate_updates or size <= 0:  # (one set from saved states may not aggregate)
            for idx, g, w in zip(indices, grads, weights):
                update(idx, w, g, self._kernel_state(idx))
            return
        by_dtype: dict[Any, list[tuple[Key, Any, Any]]] = {}
        for idx, g, w in zip(indices, grads, weights):
            by_dtype.setdefault(w.dtype, []).append((idx, w, g))
        for group in by_dtype.values():
            for start in range(0, len(group), size):
                chunk_indices, chunk_weights, chunk_grads = zip(*group[start:start + size])
                update(chunk_indices, chunk_weights, chunk_grads, [self._kernel_state(i) for i in chunk_indices])

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

    # -- making a state ------------------------------------------------------------------
    def _start(self, index: Key, weight: Any, context: Any) -> None:
        """Give ``index`` its state at its first update: a new one, or the one loaded for it
        (kept as it is when it fits the weight, else checked and copied into a new one)."""
        if index in self._loaded:
            loaded = self._loaded.pop(index)
            current = self.states.get(index, _GONE)
            if current is not loaded:  # the caller replaced (or deleted) the loaded state
                self.pending.pop(index, None)
                if current is not _GONE:
                    self.states_synced[index] = True
                    return  # theirs is the state, as in MXNet
            elif self._fits(index, weight):
                self.pending.pop(index, None)
                self.states_synced[index] = True
                if context is not None and self._wraps():  # as MXNet: onto the weight's device
                    self.states[index] = self.sync_state_context(loaded, context)
                return
        try:
            raw = self._create(index, weight)
        except BaseException:
            self.states.pop(index, None)  # a loaded state that does not fit is not kept either
            raise
        self.states[index] = self._shown(index, raw, context)
        self.states_synced[index] = True

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

    def _fits(self, index: Key, weight: Any) -> bool:
        """Whether the state loaded for ``index`` is the one a kvcli optimizer keeps for
        ``weight`` (its arrays, each of the weight's shape and the dtype it would make)."""
        mp = bool(self.optimizer.multi_precision and weight.dtype == np.float16)
        if self.multi_precision.get(index, False) != mp:
            return False
        template = self._template(index, np.dtype(weight.dtype))
        kinds = {name: as_numpy(leaf).dtype for name, leaf in self._named(index, template).items()}
        loaded = self.pending.get(index, {})
        return set(kinds) == set(loaded) and all(
            array.shape == tuple(weight.shape) and array.dtype == kinds[name] for name, array in loaded.items())

    def _template(self, index: Key, dtype: np.dtype) -> Any:
        """The state a kvcli optimizer makes for a 1-element weight of ``dtype``: its layout."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # float16 without multi_precision: MXNet warns at creation only
            return self.optimizer.create_state_multi_precision(index, np.zeros((1,), dtype))

    def restore(self, pending: dict[Key, dict[str, np.ndarray]], indices: Any = ()) -> None:
        """Take the named arrays of loaded states (and ``indices`` whose state holds none).
        As MXNet's ``set_states``, ``states`` shows them at once, in the layout the optimizer
        makes (a kvcli optimizer's); the arrays are checked against each weight at its next
        update. A user optimizer's loaded state is made at its next update."""
        self.pending = pending
        opt = self.optimizer
        if not (opt.numpy_native and is_builtin(type(opt))):
            return  # a user's state may be anything: only its own create_state makes it
        for index in [*pending, *(i for i in indices if i not in pending)]:
            arrays = pending.get(index, {})
            first = next(iter(arrays.values()), None)
            dtype = np.dtype(first.dtype) if first is not None else np.dtype(np.float32)
            for candidate in dict.fromkeys((dtype, np.dtype(np.float16))):
                raw = self._template(index, candidate)
                mp = bool(opt.multi_precision and candidate == np.float16)
                names = opt._leaf_names(raw, mp)
                if {n for n, leaf in zip(names, leaves(raw)) if leaf is not None} == set(arrays):
                    state = _with_leaves(raw, iter(names), arrays)
                    self.multi_precision[index] = mp
                    self.states[index] = self._loaded[index] = self._shown(index, state, None)
                    self.states_synced[index] = False
                    break

    # -- what the kernels and MXNet code see ------------------------------------------------
    def _wraps(self) -> bool:
        """Whether ``states`` holds views of the kernels' numpy arrays (a user optimizer's
        states are what its own ``create_state`` made: already NDArrays, kept as they are)."""
        return self.views is not None and self.optimizer.numpy_native

    def _shown(self, index: Key, raw: Any, context: Any) -> Any:
        """``raw`` as ``states`` holds it: NDArray views on ``context`` when :attr:`views` is set."""
        if not self._wraps():
            return raw
        assert self.views is not None
        shown = wrap_tree(raw, context, self.views)
        self._kernel[index] = (shown, raw)
        return shown

    def _kernel_state(self, index: Key) -> Any:
        """``states[index]`` as the optimizer's update takes it: a built-in's numpy arrays (the
        buffers of the NDArrays shown, or of whatever MXNet code put there since)."""
        state = self.states[index]
        if not self._wraps():
            return state
        cached = self._kernel.get(index)
        if cached is not None and cached[0] is state:
            return cached[1]
        raw = unwrap_tree(state)
        if not _has_list(state):  # a list may change in place: unwrapped again at every update
            self._kernel[index] = (state, raw)
        return raw

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
        for table in _BY_INDEX:
            getattr(self, table).pop(index, None)

    def clear(self) -> None:
        """Forget every index's state."""
        for table in _BY_INDEX:
            getattr(self, table).clear()

    def sync_state_context(self, state: Any, context: Any) -> Any:
        """MXNet's: ``state`` on ``context`` (an NDArray on another device is copied there;
        tuples and lists stay what they are; numpy arrays, kvcli's host copy, are returned)."""
        if isinstance(state, tuple):
            return tuple(self.sync_state_context(s, context) for s in state)
        if isinstance(state, list):
            return [self.sync_state_context(s, context) for s in state]
        move = getattr(state, "as_in_context", None)
        return move(context) if move is not None else state


def _has_list(state: Any) -> bool:
    return isinstance(state, list) or (isinstance(state, tuple) and any(_has_list(s) for s in state))


def _with_leaves(raw: Any, names: Any, arrays: dict[str, np.ndarray]) -> Any:
    """``raw``'s layout with its leaves, named by ``names`` in order, replaced by ``arrays``."""
    if isinstance(raw, tuple):
        return tuple(_with_leaves(r, names, arrays) for r in raw)
    if isinstance(raw, list):
        return [_with_leaves(r, names, arrays) for r in raw]
    name = next(names)
    return None if raw is None else arrays[name]


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
