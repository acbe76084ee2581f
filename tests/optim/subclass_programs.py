"""Programs that subclass MXNet's optimizers, written once and run on real MXNet 1.9.1
(``tests/data/make_mxnet_optimizer_subclass_reference.py`` records what they return) and on
``kvcli.mx`` (``tests/optim/test_subclass_dispatch.py`` replays them and compares).

Each program takes the ``mx`` module and returns JSON-able results: the final weights and a
log of which method ran with which argument types. They follow the ways real code subclasses
an optimizer (MXNet's ``example/dsd/sparse_sgd.py`` prunes weights in an SGD subclass's
``update``; others override ``update_multi_precision``, ``create_state``, ``_get_lr``), and
how MXNet 1.9.1 dispatches them: its ``Updater`` calls ``update_multi_precision``, which SGD,
NAG, LARS and LAMB route to their own ``_update_impl``, while the other optimizers reach
``update`` through the base class. This is kvcli's code (nothing of MXNet's is copied).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

SHAPE = (3, 4)
STEPS = 3


def _weight(shape: tuple[int, ...] = SHAPE, phase: float = 0.0, dtype: str = "float32") -> np.ndarray:
    n = int(np.prod(shape))
    return (np.linspace(-1.0, 1.0, n) + 0.3 * np.cos(np.arange(n) * 1.1 + phase)).reshape(shape).astype(dtype)


def _grad(step: int, shape: tuple[int, ...] = SHAPE, dtype: str = "float32") -> np.ndarray:
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + 1.3 * step) * 0.8 + 0.05).reshape(shape).astype(dtype)


def _kind(value: Any, mx: Any) -> str:
    """A value's kind as a log names it (the class of an NDArray, whichever framework)."""
    if isinstance(value, mx.nd.NDArray):
        return "NDArray:" + value.stype
    if isinstance(value, (tuple, list)):
        return type(value).__name__ + "[" + ",".join(_kind(v, mx) for v in value) + "]"
    return type(value).__name__


def _arrays(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_arrays(v) for v in value]
    if value is None:
        return None
    return value.asnumpy().astype(np.float64).tolist()


def _through_store(mx: Any, opt: Any, steps: int = STEPS, dtype: str = "float32") -> list[Any]:
    """``kv.set_optimizer(opt)``, init one key, push gradients, pull: MXNet's local store."""
    kv = mx.kv.create("local")
    kv.set_optimizer(opt)
    kv.init(3, mx.nd.array(_weight(dtype=dtype), dtype=dtype))
    out = mx.nd.zeros(SHAPE, dtype=dtype)
    for step in range(steps):
        kv.push(3, mx.nd.array(_grad(step, dtype=dtype), dtype=dtype))
    kv.pull(3, out=out)
    return _arrays(out)


def _through_updater(mx: Any, opt: Any, count: int = 1, steps: int = STEPS, dtype: str = "float32",
                     as_list: bool = False) -> dict[str, Any]:
    """``get_updater(opt)`` on ``count`` weights, one call per weight or one call with lists."""
    updater = mx.optimizer.get_updater(opt)
    weights = [mx.nd.array(_weight(phase=i, dtype=dtype), dtype=dtype) for i in range(count)]
    for step in range(steps):
        grads = [mx.nd.array(_grad(step + i, dtype=dtype), dtype=dtype) for i in range(count)]
        if as_list:
            updater(list(range(count)), grads, weights)
        else:
            for i in range(count):
                updater(i, grads[i], weights[i])
    return {"weights": _arrays(weights), "num_update": opt.num_update,
            "state_kinds": [_kind(updater.states[i], mx) for i in range(count)]}


# ---------------------------------------------------------------------- the programs
def pruning_sgd(mx: Any) -> dict[str, Any]:
    """An SGD subclass that prunes in ``update`` with a ``topk`` mask (the DSD example's way):
    MXNet's Updater never calls that ``update``; calling it directly does, on NDArrays."""
    log: list[Any] = []

    class PruningSGD(mx.optimizer.SGD):
        def __init__(self, keep: int, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.keep = keep
            self.masks: dict[Any, Any] = {}

        def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
            assert isinstance(weight, mx.nd.NDArray) and isinstance(grad, mx.nd.NDArray)
            log.append(["update", _kind(index, mx), _kind(weight, mx), _kind(state, mx), str(weight.context) != ""])
            if index not in self.masks:
                self.masks[index] = mx.nd.topk(mx.nd.abs(weight), axis=None, ret_typ="mask", k=self.keep)
            weight[:] = weight * self.masks[index]
            grad[:] = grad * self.masks[index]
            if state is not None:
                state[:] = state * self.masks[index]
            log.append(["mask", weight.asnumpy().astype(np.float64).tolist()])
            super().update(index, weight, grad, state)

    results: dict[str, Any] = {}
    opt = PruningSGD(keep=5, learning_rate=0.1, momentum=0.9, wd=0.01)
    results["store"] = _through_store(mx, opt)
    results["updater"] = _through_updater(mx, PruningSGD(keep=5, learning_rate=0.1, momentum=0.9), count=2)
    results["log_after_updates"] = list(log)
    direct = PruningSGD(keep=5, learning_rate=0.1, momentum=0.9)
    weight = mx.nd.array(_weight())
    state = direct.create_state(0, weight)
    for step in range(STEPS):
        direct.update(0, weight, mx.nd.array(_grad(step)), state)
    results["direct"] = {"weight": _arrays(weight), "state": _arrays(state), "num_update": direct.num_update}
    results["log"] = log
    return results


def _logging_subclass(mx: Any, base: Any, method: str, log: list[Any]) -> Any:
    """A subclass of ``base`` whose ``method`` logs its argument kinds and calls the base's."""

    def logged(self: Any, index: Any, weight: Any, grad: Any, state: Any) -> None:
        weights = weight if isinstance(weight, (tuple, list)) else [weight]
        log.append([method, _kind(index, mx), _kind(weight, mx), _kind(grad, mx), _kind(state, mx),
                    [float(w.asnumpy().astype(np.float64).sum()) for w in weights]])
        getattr(base, method)(self, index, weight, grad, state)

    return type("Logged" + base.__name__, (base,), {method: logged})


#: (optimizer, constructor arguments) of every built-in the override programs subclass.
OPTIMIZERS: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
    ("SGD", {"learning_rate": 0.1}),
    ("NAG", {"learning_rate": 0.1, "momentum": 0.9}),
    ("LARS", {"learning_rate": 0.1, "momentum": 0.9, "eta": 0.01}),
    ("LAMB", {"learning_rate": 0.01}),
    ("Adam", {"learning_rate": 0.01, "wd": 0.01}),
    ("RMSProp", {"learning_rate": 0.01}),
    ("Signum", {"learning_rate": 0.01}),
    ("FTML", {"learning_rate": 0.01}),
    ("AdaGrad", {"learning_rate": 0.1}),
    ("Ftrl", {"learning_rate": 0.1}),
    ("LBSGD", {"learning_rate": 0.1, "momentum": 0.9}),
    ("DCASGD", {"learning_rate": 0.1}),
]


def overrides(mx: Any) -> dict[str, Any]:
    """For each built-in: a subclass overriding ``update``, then one overriding
    ``update_multi_precision``, driven through a store, an updater (per weight and with a list
    of five weights: SGD's aggregation makes tuples of up to four) and with float16 weights
    under ``multi_precision``."""
    results: dict[str, Any] = {}
    for name, kwargs in OPTIMIZERS:
        base = getattr(mx.optimizer, name)
        for method in ("update", "update_multi_precision"):
            log: list[Any] = []
            cls = _logging_subclass(mx, base, method, log)
            label = f"{name}:{','.join(sorted(kwargs))}:{method}"
            run: dict[str, Any] = {"store": _through_store(mx, cls(**kwargs))}
            run["updater"] = _through_updater(mx, cls(**kwargs), count=2)
            run["updater_list"] = _through_updater(mx, cls(**kwargs), count=5, steps=2, as_list=True)
            # MXNet 1.9.1's DCASGD has no multi-precision path, and its multi-precision LBSGD
            # swaps master copy and momentum (kvcli updates the master copy: docs/mxnet-layer.md, Differences)
            if name not in ("DCASGD", "LBSGD"):
                run["mp_float16"] = _through_updater(mx, cls(multi_precision=True, **kwargs), count=1, steps=2,
                                                     dtype="float16")
            run["log"] = log
            results[label] = run
    return results


def create_state_override(mx: Any) -> dict[str, Any]:
    """``create_state`` overridden on SGD (reached through ``create_state_multi_precision``)
    and on Adam: it runs on an NDArray weight and its NDArray state is what ``update`` gets."""
    log: list[Any] = []
    results: dict[str, Any] = {}
    for name, kwargs in (("SGD", {"learning_rate": 0.1, "momentum": 0.5}), ("Adam", {"learning_rate": 0.01})):
        base = getattr(mx.optimizer, name)

        def create_state(self: Any, index: Any, weight: Any, _base: Any = base) -> Any:
            log.append(["create_state", _name(self), _kind(index, mx), _kind(weight, mx), str(weight.dtype)])
            state = _base.create_state(self, index, weight)
            log.append(["created", _kind(state, mx)])
            return state

        cls = type("Own" + name, (base,), {"create_state": create_state})
        results[name] = {"store": _through_store(mx, cls(**kwargs)),
                         "mp": _through_updater(mx, cls(multi_precision=True, **kwargs), steps=2, dtype="float16")}
    results["log"] = log
    return results


def _name(opt: Any) -> str:
    return type(opt).__name__


def lr_override(mx: Any) -> dict[str, Any]:
    """``_get_lr`` / ``_get_lrs`` overridden (a per-index rate): the built-in kernels use it."""

    class HalfForOdd(mx.optimizer.Adam):
        def _get_lr(self, index: Any) -> float:
            return super()._get_lr(index) * (0.5 if index % 2 else 1.0)

    class HalfForOddSGD(mx.optimizer.SGD):
        def _get_lrs(self, indices: Any) -> list[float]:
            return [lr * (0.5 if i % 2 else 1.0) for lr, i in zip(super()._get_lrs(indices), indices)]

    return {"adam": _through_updater(mx, HalfForOdd(learning_rate=0.01), count=2),
            "sgd": _through_updater(mx, HalfForOddSGD(learning_rate=0.1, momentum=0.9), count=2)}


def plain_user_optimizer(mx: Any) -> dict[str, Any]:
    """A subclass of the base class (no built-in below it), with a row-sparse gradient too."""
    log: list[Any] = []

    @mx.optimizer.register
    class DecayedStep(mx.optimizer.Optimizer):
        def create_state(self, index: Any, weight: Any) -> Any:
            return mx.nd.zeros(weight.shape, weight.context, dtype=weight.dtype)

        def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
            log.append(["update", _kind(index, mx), _kind(weight, mx), _kind(grad, mx), _kind(state, mx)])
            self._update_count(index)
            state[:] = 0.5 * state + grad
            weight[:] = weight - self._get_lr(index) * state

    results: dict[str, Any] = {"store": _through_store(mx, mx.optimizer.create("decayedstep", learning_rate=0.1)),
                               "mp": _through_updater(mx, DecayedStep(multi_precision=True), steps=2, dtype="float16")}
    kv = mx.kv.create("local")
    kv.set_optimizer(DecayedStep(learning_rate=0.1))
    kv.init(0, mx.nd.array(_weight()))
    rows = np.array([0, 2])
    kv.push(0, mx.nd.sparse.row_sparse_array((_grad(0)[rows], rows), shape=SHAPE))
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    results["row_sparse_grad"] = _arrays(out)
    results["log"] = log
    return results


PROGRAMS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "pruning_sgd": pruning_sgd,
    "overrides": overrides,
    "create_state_override": create_state_override,
    "lr_override": lr_override,
    "plain_user_optimizer": plain_user_optimizer,
}


def run_all(mx: Any) -> dict[str, Any]:
    """Every program's results, by name."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: program(mx) for name, program in PROGRAMS.items()}
