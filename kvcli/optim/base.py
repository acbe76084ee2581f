"""MXNet 1.9.1's ``Optimizer`` base class and the registry it registers into, on numpy arrays.

An optimizer is used two ways:

* MXNet's way: ``opt.create_state(index, weight)`` / ``opt.update(index, weight, grad, state)``
  and ``mx.optimizer.get_updater(opt)``, a :class:`kvcli.optim.updater.Updater` that keeps
  one state per index.
* kvcli's way: the optimizer *is* a store updater, ``opt(key, merged, stored)`` (what
  ``kv.set_optimizer(opt)`` installs). It keeps its own per-index states
  (:class:`kvcli.optim.per_index.PerIndexStates`), exposes them as
  named arrays (``opt.states[key] == {"momentum": ...}``), and saves / restores it pickle-free
  through :meth:`Optimizer.state_dict` / :meth:`Optimizer.load_state_dict`.

Built-in optimizers work on numpy arrays in place (float32 arithmetic like MXNet's kernels);
a user subclass sees :class:`kvcli.mx.ndarray.NDArray` views so MXNet code (``weight[:] += ...``,
``nd.zeros(weight.shape, weight.context)``) runs unchanged. This module never imports the
MXNet layer: the views come from :mod:`kvcli.optim.views`, which that layer fills in. The
built-ins are imported by :mod:`kvcli.optim.registry`, above them, never from here.
"""

from __future__ import annotations

import warnings
import inspect
from typing import Any, ClassVar, Mapping

import numpy as np

from kvcli.arrays.core import Key as Key  # int | str: one Key type for stores and optimizers
from kvcli.errors import OptimizerStateError, UpdaterError
from kvcli.optim.checks import (
    check_count,
    device_counts,
    is_builtin,
    leaves,
    show_value,
)
from kvcli.optim.lr_scheduler import LRScheduler
from kvcli.optim.mxfloat import float_param
from kvcli.optim.params import COMMON_PARAMS, Param, init_from_spec, lr_param
from kvcli.optim.per_index import PerIndexStates
from kvcli.optim.simple import StoreUpdater
from kvcli.optim.dispatch import NUMPY_API, accept_ndarrays, astype, copy_cast, defined_by_builtin, wrap_tree
from kvcli.optim.views import ArrayViews, array_views, installed

#: Leaf name of the float32 master copy kept by ``multi_precision`` for float16 weights.
MASTER = "weight32"
# ---------------------------------------------------------------------- registry
#: Name -> class of every optimizer registered so far (MXNet's ``Optimizer.opt_registry``).
REGISTRY: dict[str, type["Optimizer"]] = {}


def register(klass: type["Optimizer"]) -> type["Optimizer"]:
    """Register an optimizer class under its lower-cased class name (MXNet's ``register``)."""
    if not isinstance(klass, type) or not issubclass(klass, Optimizer):
        raise UpdaterError(f"register takes a subclass of Optimizer, not {klass!r}")
    name = klass.__name__.lower()
    if name in REGISTRY and REGISTRY[name] is not klass:
        old = REGISTRY[name]
        warnings.warn(
            f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is overriding existing "
            f"optimizer {old.__module__}.{old.__name__}",
            stacklevel=2,
        )
    REGISTRY[name] = klass
    return klass


# ---------------------------------------------------------------------- the base class
class Optimizer:
    """The base class of every optimizer, with MXNet 1.9.1's constructor and methods.

    ``learning_rate`` defaults to 0.01 unless ``lr_scheduler`` gives it; given both, the
    optimizer's learning rate replaces the scheduler's ``base_lr`` (as in MXNet).
    """

    #: Spec-string arguments beyond :data:`COMMON_PARAMS` (built-ins fill this in).
    spec_params: ClassVar[tuple[Param, ...]] = (lr_param(0.01),)
    #: Names of the leaves of :meth:`create_state`'s result, in order (None leaves included).
    state_names: ClassVar[tuple[str, ...]] = ()
    #: Whether ``create_state_multi_precision`` returns ``(master, state)`` (MXNet's base)
    #: rather than ``(state, master)`` (SGD, NAG, LARS, LBSGD).
    master_first: ClassVar[bool] = True
    #: Built-ins take numpy arrays; user subclasses get kvcli NDArrays (MXNet's API).
    numpy_native: ClassVar[bool] = False
    #: Whether a gradient of another shape that broadcasts to the weight's is used (MXNet's
    #: optimizers written in NDArray arithmetic: AdaGrad, AdaDelta, Adamax, Nadam, DCASGD);
    #: the others' update operators refuse it.
    grad_broadcasts: ClassVar[bool] = False
    opt_registry = REGISTRY

    def __init__(
        self,
        rescale_grad: float = 1.0,
        param_idx2name: dict[int, str] | None = None,
        wd: float = 0.0,
        clip_gradient: float | None = None,
        learning_rate: float | None = None,
        lr_scheduler: Any = None,
        sym: Any = None,
        begin_num_update: int = 0,
        multi_precision: bool = False,
        param_dict: dict[int, Any] | None = None,
    ) -> None:
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        if learning_rate is not None and learning_rate < 0:
            raise UpdaterError(f"learning_rate must not be negative, not {learning_rate!r}; give 0 or more")
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None and lr_scheduler.base_lr != learning_rate:
            # MXNet prints this warning (on stdout, as a printed UserWarning) and lets the
            # optimizer's rate win; a program's output must read the same line for line.
            print(UserWarning("learning rate from ``lr_scheduler`` has been overwritten by ``learning_rate`` in optimizer."))
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult: dict[Any, float] = {}
        self.wd_mult: dict[Any, float] = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts: dict[int, dict[Key, int]] = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise UpdaterError("param_idx2name should be a dict of param indexes to names")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        if not self.numpy_native and installed():
            # kept (and pickled) with the optimizer: unpickling it in another process, such as
            # a dist server, imports the MXNet layer that provides them
            self.__dict__["_kvcli_views"] = array_views()
        self.set_lr_mult({})
        self.set_wd_mult({})

    def _post_init(self) -> None:
        """Set what a built-in's constructor sets beyond its arguments (its generated
        ``__init__`` calls this last)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not is_builtin(cls):
            # a user's class, even a subclass of a built-in, works on NDArrays as in MXNet: its
            # methods get them, and the built-in methods it inherits take them too
            cls.numpy_native = False
        if cls.numpy_native and "spec_params" in cls.__dict__ and "__init__" not in cls.__dict__:
            cls.__init__ = init_from_spec(cls)  # type: ignore[method-assign]
        if cls.numpy_native:  # built-ins: also accept kvcli NDArrays, as MXNet code passes them
            for name in NUMPY_API:
                method = cls.__dict__.get(name)
                if method is not None and not getattr(method, "_kvcli_accepts_ndarrays", False):
                    setattr(cls, name, accept_ndarrays(method, creates=name.startswith("create")))

    # -- MXNet's registry, as static methods too ---------------------------------------
    register = staticmethod(register)

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> "Optimizer":
        """Instantiate a registered optimizer by (case-insensitive) name (MXNet's
        ``Optimizer.create_optimizer``; :func:`kvcli.optim.registry.create` also loads the built-ins)."""
        cls = REGISTRY.get(str(name).lower())
        if cls is None:
            raise UpdaterError(f"unknown optimizer {name!r}: use one of {', '.join(sorted(REGISTRY))}")
        return cls(**kwargs)

    # -- learning rate and per-parameter multipliers ---------------------------------
    @property
    def learning_rate(self) -> float:
        """The current learning rate (the scheduler's at ``num_update`` when there is one)."""
        return self._base_lr()

    def set_learning_rate(self, lr: float) -> None:
        """Set the learning rate; refused (as in MXNet) when a scheduler drives it."""
        if self.lr_scheduler is not None:
            raise UserWarning(
                "LRScheduler of the optimizer has already been defined. Note that set_learning_rate can "
                "mutate the value of the learning rate of the optimizer only when the LRScheduler of the "
                "optimizer is undefined."
            )
        if lr < 0:
            raise UpdaterError(f"learning rate must not be negative, not {lr!r}; give 0 or more")
        self.lr = lr

    def set_lr_scale(self, args_lrscale: Any) -> None:
        """[DEPRECATED in MXNet] use :meth:`set_lr_mult`."""
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult: dict[Any, float]) -> None:
        """Per-parameter learning-rate multipliers, by index or (with ``sym``) by name."""
        self.lr_mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__lr_mult__" in attr[name]:
                    self.lr_mult[name] = float(attr[name]["__lr_mult__"])
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict[Any, float]) -> None:
        """Per-parameter weight-decay multipliers; with ``param_idx2name``, names not ending in
        ``_weight`` or ``_gamma`` get 0 (MXNet's rule)."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith("_weight") or n.endswith("_gamma")):
                self.wd_mult[n] = 0.0
        self._sym_wd_mult()
        self.wd_mult.update(args_wd_mult)

    def _sym_wd_mult(self) -> None:
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])

    def _set_current_context(self, device_id: int) -> None:
        """Switch the per-index update counts to those of device ``device_id``."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index: Key | list[Key] | tuple[Key, ...]) -> None:
        """Count one more update of ``index`` (or of each index of a list); raise ``num_update``."""
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            if idx not in self._index_update_count:
                self._index_update_count[idx] = self.begin_num_update
            self._index_update_count[idx] += 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _base_lr(self) -> float:
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        assert self.lr is not None  # the constructor sets 0.01 when neither is given
        return self.lr

    def _scale(self, values: list[float], indices: list[Key], mult: dict[Any, float], attribute: str) -> list[float]:
        for i, index in enumerate(indices):
            if index in self.param_dict:
                values[i] *= getattr(self.param_dict[index], attribute)
            elif index in mult:
                values[i] *= mult[index]
            elif index in self.idx2name:
                values[i] *= mult.get(self.idx2name[index], 1.0)
        return values

    def _get_lrs(self, indices: list[Key]) -> list[float]:
        """Learning rates of ``indices`` (scheduler or ``lr``, times each lr multiplier)."""
        lr = self._base_lr()
        return self._scale([lr for _ in indices], indices, self.lr_mult, "lr_mult")

    def _get_lr(self, index: Key) -> float:
        """The learning rate of ``index``."""
        return self._get_lrs([index])[0]

    def _get_wds(self, indices: list[Key]) -> list[float]:
        """Weight decays of ``indices`` (``wd`` times each wd multiplier)."""
        return self._scale([self.wd for _ in indices], indices, self.wd_mult, "wd_mult")

    def _get_wd(self, index: Key) -> float:
        """The weight decay of ``index``."""
        return self._get_wds([index])[0]

    # -- state and update (MXNet's API) -----------------------------------------------
    def create_state(self, index: Key, weight: Any) -> Any:
        """The auxiliary state of one weight (momentum, moments, ...); None when there is none."""
        return None

    def create_state_multi_precision(self, index: Key, weight: Any) -> Any:
        """:meth:`create_state`, plus a float32 master copy for a float16 weight under
        ``multi_precision`` (``(master, state)``)."""
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            return (master, self._virtual("create_state", index, master))
        if weight.dtype == np.float16 and not self.multi_precision:
            warnings.warn(
                "Accumulating with float16 in optimizer can lead to poor accuracy or slow convergence. "
                "Consider using multi_precision=True option of the optimizer",
                stacklevel=2,
            )
        return self._virtual("create_state", index, weight)

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        """Update ``weight`` in place from ``grad`` and ``state``."""
        raise UpdaterError(f"{type(self).__name__} does not implement update(index, weight, grad, state)")

    def update_multi_precision(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        """:meth:`update`, through the float32 master copy for a float16 weight (MXNet's base
        class: what its ``Updater`` calls, for every optimizer but SGD, NAG, LARS and LAMB)."""
        if self.multi_precision and weight.dtype == np.float16:
            master, inner = state
            self._virtual("update", index, master, astype(grad, np.float32), inner)
            copy_cast(weight, master)
        else:
            self._virtual("update", index, weight, grad, state)

    def _virtual(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """``self.<name>(*args)`` where MXNet's Python calls the method on ``self`` (so that a
        subclass's override runs): from a built-in's numpy code, an override in a user's class
        gets NDArray views of the arrays (writing them writes the arrays), as MXNet hands it
        NDArrays; a built-in method gets the arguments as they are."""
        method = getattr(self, name)
        if self.numpy_native or defined_by_builtin(type(self), name):
            return method(*args, **kwargs)
        return method(*(wrap_tree(a, None) for a in args), **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("param_dict", None)  # as MXNet: the trainer sets it again
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__ = state
        self.param_dict = {}

    # -- kvcli's store-updater protocol ----------------------------------------------
    @property
    def name(self) -> str:
        """The registered name (``sgd``, ``nag``, ...); a state file records it."""
        return type(self).__name__.lower()

    @property
    def spec(self) -> str:
        """The spec string that re-creates this optimizer (arguments that differ from the
        defaults; see :mod:`kvcli.optim.spec`)."""
        override = self.__dict__.get("_kvcli_spec")
        if override:
            return str(override)
        cls = type(self)
        builtin = is_builtin(cls)
        parts = []
        for p in (*(cls if builtin else Optimizer).spec_params, *COMMON_PARAMS):
            value = getattr(self, p.attribute, p.default)
            if value != p.default and not (p.kwarg == "learning_rate" and value is None):
                parts.append(f"{p.spec}={show_value(value)}")
        if not builtin:
            parts += self._user_args()
        schedule = self.lr_scheduler
        if isinstance(schedule, LRScheduler):
            text = schedule.spec
            if self.lr is not None:  # the optimizer's lr is the schedule's base_lr
                text = ":".join(p for p in text.split(":") if not p.startswith("base_lr="))
            parts.append(f"schedule={text}")
        return self.name + (":" + ",".join(parts) if parts else "")

    def _user_args(self) -> list[str]:
        """A user class's constructor arguments that its instance holds with a non-default value."""
        parts: list[str] = []
        try:
            signature = inspect.signature(type(self).__init__)
        except (TypeError, ValueError):
            return parts
        base = {p.kwarg for p in (*Optimizer.spec_params, *COMMON_PARAMS)}
        for name, parameter in list(signature.parameters.items())[1:]:
            if name in base:
                continue
            if parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
                continue
            value = getattr(self, name, parameter.default)
            if isinstance(value, (bool, int, float, str)) and value != parameter.default:
                parts.append(f"{name}={show_value(value)}")
        return parts

    def _kv(self) -> PerIndexStates:
        updater = self.__dict__.get("_kv_updater")
        if updater is None:
            updater = self.__dict__["_kv_updater"] = PerIndexStates(self)
        return updater

    @property
    def kv_updater(self) -> PerIndexStates:
        """The per-index states this optimizer keeps as a store's updater: what MXNet's
        ``kv._updater`` is after ``kv.set_optimizer(opt)`` (``.states``, ``.optimizer``)."""
        return self._kv()

    @kv_updater.setter
    def kv_updater(self, updater: PerIndexStates) -> None:
        """Run the store's updates through ``updater`` (which takes over the current states
        with :meth:`PerIndexStates.take_over` first: MXNet's Updater in ``kvcli.mx``)."""
        self.__dict__["_kv_updater"] = updater

    def __call__(self, key: Key, merged: Any, stored: np.ndarray) -> None:
        """The store's updater call: update ``stored`` in place with the pushed ``merged``."""
        if stored.dtype.kind != "f":
            raise UpdaterError(
                f"{self.name} cannot update key {key!r} of dtype {stored.dtype}: "
                "optimizers need float weights; init the key with a float array"
            )
        self._kv()(key, merged, stored)

    @property
    def counts(self) -> dict[Key, int]:
        """Updates applied per key (MXNet's ``_index_update_count``)."""
        return self._index_update_count

    @property
    def states(self) -> dict[Key, dict[str, np.ndarray]]:
        """Each key's state as named arrays (views: changing them changes the state)."""
        return self._kv().named_states()

    def reset(self, key: Key) -> None:
        """Forget ``key``'s state and count (the key was re-initialised or deleted)."""
        self._kv().forget(key)
        self._index_update_count.pop(key, None)

    def state_dict(self) -> dict[str, Any]:
        """Copies of the per-key named state arrays and counts, and the optimizer's own
        scalars (``extra``: ``num_update``, schedule position, ...)."""
        return {
            "states": {k: {n: np.array(a) for n, a in s.items()} for k, s in self.states.items()},
            "counts": dict(self._index_update_count),
            "extra": self._extra_state(),
        }

    def load_state_dict(self, state: dict[str, Any], shapes: Mapping[Key, tuple[int, ...]] | None = None) -> None:
        """Replace the state by ``state`` (as from :meth:`state_dict`); checks it first, so on
        an :class:`OptimizerStateError` nothing changed. ``shapes`` (the weights' shapes by
        key, where known) lets the check refuse state arrays that do not fit their weight."""
        pending = self._restore(state, shapes)
        updater = PerIndexStates(self)  # a new object: shallow copies of this optimizer keep theirs
        updater.restore(pending, state["counts"])  # every key the state names (counts of all devices')
        self.__dict__["_kv_updater"] = updater

    def _restore(
        self, state: dict[str, Any], shapes: Mapping[Key, tuple[int, ...]] | None = None
    ) -> dict[Key, dict[str, np.ndarray]]:
        """Check ``state`` whole, then take its counts and scalars; return the named arrays
        per key. Nothing changes unless every check passed."""
        states = {k: {n: np.array(a) for n, a in s.items()} for k, s in state["states"].items()}
        for key, arrays in states.items():
            self._check_state_names(key, set(arrays))
            self._check_state_arrays(key, arrays, (shapes or {}).get(key))
        counts = {k: check_count(c, f"the step count of key {k!r}") for k, c in state["counts"].items()}
        extra = state.get("extra")
        if extra:
            if not isinstance(extra, dict):
                raise OptimizerStateError(f"the optimizer's own numbers are a {type(extra).__name__}, not a table")
            self._check_extra_state(extra, shapes or {})
        # every check passed: only now does the optimizer change
        self._all_index_update_counts = {0: counts}
        self._index_update_count = counts
        if extra:
            self._load_extra_state(extra)
        else:
            self.num_update = max([self.begin_num_update, *counts.values()])
        return states

    def _check_state_arrays(self, key: Key, arrays: dict[str, np.ndarray], shape: tuple[int, ...] | None) -> None:
        """kvcli's optimizers keep float arrays of the weight's shape (a user's optimizer may
        keep anything: its arrays are checked against the state it creates, at first use)."""
        if not is_builtin(type(self)):
            return
        for name, array in arrays.items():
            if array.dtype.kind != "f":
                raise OptimizerStateError(
                    f"the saved state {name!r} of key {key!r} has dtype {array.dtype}; {self.name} keeps float arrays"
                )
            if shape is not None and array.shape != tuple(shape):
                raise OptimizerStateError(
                    f"the saved state {name!r} of key {key!r} has shape {array.shape} but the key's value has "
                    f"shape {tuple(shape)}: load the state saved with these keys"
                )

    def _check_extra_state(self, extra: dict[str, Any], shapes: Mapping[Key, tuple[int, ...]]) -> None:
        """Refuse optimizer-wide numbers :meth:`_load_extra_state` could not use (subclasses
        that keep their own check theirs, then call this)."""
        if "num_update" in extra:
            check_count(extra["num_update"], "num_update")
        if extra.get("device_counts"):
            device_counts(extra["device_counts"])
        schedule = extra.get("lr_scheduler")
        if schedule is not None:
            if not isinstance(schedule, dict):
                raise OptimizerStateError(f"the schedule's state is a {type(schedule).__name__}, not a table")
            check = getattr(self.lr_scheduler, "check_state_dict", None)
            if check is not None:
                check(schedule)

    def _extra_state(self) -> dict[str, Any]:
        """JSON-able optimizer-wide state beyond the per-key arrays (subclasses add theirs)."""
        extra: dict[str, Any] = {"num_update": int(self.num_update)}
        if self.lr_scheduler is not None and hasattr(self.lr_scheduler, "state_dict"):
            extra["lr_scheduler"] = self.lr_scheduler.state_dict()
        if set(self._all_index_update_counts) != {0}:
            # per-device updaters (Gluon's) count each device's steps: keep them all, so a
            # resumed device goes on from its own count (``counts`` holds the current one's)
            current = next(d for d, c in self._all_index_update_counts.items() if c is self._index_update_count)
            extra["device_counts"] = {
                "current": current,
                "devices": [[d, [[type(k).__name__, k, int(n)] for k, n in c.items()]]
                            for d, c in self._all_index_update_counts.items()],
            }
        return extra

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        self.num_update = int(extra.get("num_update", self.num_update))
        devices = extra.get("device_counts")
        if devices:
            self._all_index_update_counts, current = device_counts(devices)
            self._index_update_count = self._all_index_update_counts.setdefault(current, {})
        if extra.get("lr_scheduler") is not None and self.lr_scheduler is not None \
                and hasattr(self.lr_scheduler, "load_state_dict"):
            self.lr_scheduler.load_state_dict(extra["lr_scheduler"])

    def _leaf_names(self, raw: Any, mp: bool) -> list[str]:
        """Names of the leaves of a raw state (path numbers when the class names none)."""
        inner = list(self._state_names())
        names = ([MASTER, *inner] if self.master_first else [*inner, MASTER]) if mp else inner
        count = len(list(leaves(raw)))
        if len(names) != count:
            return [str(i) for i in range(count)]
        return names

    def _state_names(self) -> tuple[str, ...]:
        return self.state_names

    def _check_state_names(self, key: Key, names: set[str]) -> None:
        """Refuse state arrays this optimizer (with these settings) would not keep."""
        allowed = []
        for dtype in (np.float32, np.float16):
            dummy = self._wrap(np.zeros((1,), dtype))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                raw = self.create_state_multi_precision(key, dummy)
            mp = self.multi_precision and dtype == np.float16
            allowed.append({n for n, leaf in zip(self._leaf_names(raw, mp), leaves(raw)) if leaf is not None})
        if names not in allowed:
            raise OptimizerStateError(
                f"the saved state of key {key!r} holds {sorted(names) or 'no arrays'} but {self.spec} keeps "
                f"{sorted(allowed[0]) or 'no arrays'}: set the optimizer the state was saved with"
            )

    def array_views(self) -> ArrayViews:
        """The NDArray views this (user) optimizer works on: those it was made with, else the
        ones the MXNet layer installed in this process."""
        kept = self.__dict__.get("_kvcli_views")
        return kept if kept is not None else array_views()

    def _wrap(self, array: np.ndarray) -> Any:
        if self.numpy_native:
            return array
        return self.array_views().dense(array)

    def __repr__(self) -> str:
        return f"<optimizer {self.spec}>"


def check_optimizer(optimizer: Any) -> "Optimizer | StoreUpdater":
    """What ``set_optimizer`` runs: an optimizer or one of kvcli's updaters (a spec string is
    parsed by the caller first); anything else is refused, naming the fix."""
    if isinstance(optimizer, (Optimizer, StoreUpdater)):
        return optimizer
    raise UpdaterError(
        f"set_optimizer takes an optimizer (kvcli.mx.optimizer.SGD(...)) or a spec string like "
        f"'sgd:lr=0.1', not {type(optimizer).__name__}"
    )


def as_lists(opt: Optimizer, indices: Any, weights: Any, grads: Any, states: Any) -> tuple[list[Any], ...]:
    """The arguments of an ``_update_impl`` as four lists of one length (a single index is
    a list of one, as in MXNet); lists of different lengths are refused."""
    if not isinstance(indices, (list, tuple)):
        return [indices], [weights], [grads], [states]
    if not len(indices) == len(weights) == len(grads) == len(states):
        raise UpdaterError(f"{opt.name}: {len(indices)} indices but {len(weights)} weights, {len(grads)} gradients "
                           f"and {len(states)} states: give one of each per index")
    return list(indices), list(weights), list(grads), list(states)


def sum_sq(array: np.ndarray) -> np.float32:
    """MXNet's ``multi_sum_sq``: squares in the array's own dtype (float16 rounds them),
    accumulated one by one in float32."""
    flat = np.asarray(array).reshape(-1)
    if flat.size == 0:
        return np.float32(0)
    return np.cumsum((flat * flat).astype(np.float32), dtype=np.float32)[-1]


def f32(value: float) -> np.float32:
    """A hyper-parameter as the float32 MXNet's kernels receive: its text read by dmlc-core's
    ``strtof`` (:func:`kvcli.optim.mxfloat.float_param`); a float32 already computed (by a
    kernel, as MXNet's are) is taken as it is."""
    if isinstance(value, np.float32):
        return value
    return float_param(value)

