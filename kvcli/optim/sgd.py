"""The SGD family of MXNet 1.9.1: SGD (and its alias ccSGD), NAG, Signum, LARS, LBSGD,
DCASGD, SGLD, and MXNet's Test — numpy float32 in the order of MXNet's kernels."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from kvcli.errors import OptimizerStateError, UpdaterError
from kvcli.arrays.kinds import DTYPES
from kvcli.arrays import random as random_streams
from kvcli.optim import kernels
from kvcli.optim.base import Key, Optimizer, as_lists, register
from kvcli.optim.mxfloat import tuple_param
from kvcli.optim.blocks import blockwise
from kvcli.optim.checks import check_count, check_number, densify, is_row_sparse
from kvcli.optim.params import LAZY_UPDATE, Param, lr_param, momentum_param


class NumpyOptimizer(Optimizer):
    """Base of the built-ins: numpy arrays, clipping as MXNet's kernels do it."""

    numpy_native = True
    # Arguments several built-ins take, as their generated constructors store them (each
    # class's ``spec_params`` says which it takes; the class-specific ones are declared there).
    beta1: float
    beta2: float
    epsilon: float
    momentum: float
    lazy_update: bool

    def _kernel_clip(self) -> float | None:
        """Kernels clip when Python passed a truthy ``clip_gradient`` and it is >= 0."""
        c = self.clip_gradient
        return float(c) if c and c >= 0 else None

    def _python_clip(self, grad: np.ndarray) -> np.ndarray:
        """Python-side optimizers clip (MXNet's ``clip`` operator, its bounds read as float32
        arguments) whenever ``clip_gradient`` is not None (0 included)."""
        if self.clip_gradient is not None:
            grad = np.clip(grad, kernels.arg(-self.clip_gradient, grad), kernels.arg(self.clip_gradient, grad))
        return grad

    def _rescaled_clipped(self, grad: np.ndarray) -> np.ndarray:
        """A kernel's ``clip(rescale_grad * grad)`` (unclipped when it does not clip)."""
        g = kernels.arg(self.rescale_grad, grad) * grad
        bound = kernels.clip_bound(self.clip_gradient, grad)
        return kernels.clip(g, bound) if bound is not None else g

    def _s(self, value: Any, like: np.ndarray) -> Any:
        """A Python-side scalar operation's number (``grad * rescale_grad``), as MXNet's."""
        return kernels.scalar(value, like)

    @staticmethod
    def _dense(grad: Any, weight: np.ndarray) -> np.ndarray:
        return densify(grad, weight.dtype) if is_row_sparse(grad) else grad


def update_rows(kernel: Any, indices: np.ndarray, weight: np.ndarray, grad_rows: np.ndarray, *states: Any) -> None:
    """Run an elementwise ``kernel(w, g, *states)`` on the listed rows only (a lazy update)."""
    w = weight[indices]
    parts = [None if s is None else s[indices] for s in states]
    kernel(w, grad_rows, *parts)
    weight[indices] = w
    for state, part in zip(states, parts):
        if state is not None:
            state[indices] = part


def state_then_master(opt: Optimizer, index: Key, weight: Any) -> Any:
    """``(state, master)`` for a float16 weight under multi_precision (the SGD family's order)."""
    if opt.multi_precision and weight.dtype == np.float16:
        master = weight.astype(np.float32)
        return (opt._virtual("create_state", index, master), master)
    return Optimizer.create_state_multi_precision(opt, index, weight)


def sgd_step(opt: NumpyOptimizer, index: Key, weight: np.ndarray, grad: Any, mom: np.ndarray | None,
             lr: Any, wd: Any, momentum: float, lazy: bool, aggregated: bool = False, preloaded: bool = False) -> None:
    """One SGD step (:func:`kvcli.optim.kernels.sgd`) on a dense or row-sparse gradient,
    lazily when asked (MXNet's rules)."""
    def kernel(w: np.ndarray, g: np.ndarray, m: np.ndarray | None) -> None:
        kernels.sgd(w, g, m, lr, wd, momentum, opt.rescale_grad, opt.clip_gradient, aggregated, preloaded)

    if is_row_sparse(grad) and lazy:
        rows = np.asarray(grad.indices, dtype=np.int64)
        update_rows(kernel, rows, weight, np.asarray(grad.data, dtype=weight.dtype), mom)
    else:
        blockwise(kernel, weight, opt._dense(grad, weight), mom)


@register
class SGD(NumpyOptimizer):
    """SGD with momentum and weight decay (``sgd_update`` / ``sgd_mom_update``); with a
    row-sparse gradient and ``lazy_update`` only the listed rows (and their momentum) change."""

    spec_params = (lr_param(0.01, positional=False), momentum_param(), LAZY_UPDATE)
    state_names = ("momentum",)
    master_first = False

    def _post_init(self) -> None:
        self.aggregate_num = 4  # MXNet's MXNET_OPTIMIZER_AGGREGATION_SIZE default

    def create_state_multi_precision(self, index: Key, weight: Any) -> Any:
        return state_then_master(self, index, weight)

    def create_state(self, index: Key, weight: Any) -> Any:
        return np.zeros(weight.shape, weight.dtype) if self.momentum != 0.0 else None

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        self._virtual("_update_impl", index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        # as MXNet: straight to _update_impl, so a subclass's ``update`` is not called here
        first = weight[0] if isinstance(index, (list, tuple)) else weight
        self._virtual("_update_impl", index, weight, grad, state,
                      multi_precision=bool(self.multi_precision and first.dtype == np.float16))

    def _update_impl(self, indices: Any, weights: Any, grads: Any, states: Any, multi_precision: bool = False) -> None:
        """One weight or (aggregated) lists of them: every index is counted, then each weight
        takes one step at its rate (MXNet's order, through ``_get_lrs`` / ``_get_wds``). Dense
        weights and gradients go through MXNet's aggregated kernels (their rates read as a
        tuple), a sparse one through the single-weight kernels."""
        indices, weights, grads, states = as_lists(self, indices, weights, grads, states)
        aggregated = not any(is_row_sparse(g) for g in grads)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        rates: list[Any] = lrs
        decays: list[Any] = wds
        if aggregated:  # the aggregated kernels read their rates as a tuple argument
            rates, decays = [tuple_param(v) for v in lrs], [tuple_param(v) for v in wds]
        momentum = self.momentum if self.momentum > 0 else 0.0
        for index, weight, grad, state, lr, wd in zip(indices, weights, grads, states, rates, decays):
            if multi_precision:
                mom, master = state
                g = self._dense(grad, weight).astype(np.float32)  # mp kernels have no sparse form
                kernels.sgd(master, g, mom if self.momentum > 0 else None, lr, wd, momentum, self.rescale_grad,
                            self.clip_gradient, aggregated)
                weight[...] = master
            else:
                mom = state if self.momentum > 0 else None
                sgd_step(self, index, weight, grad, mom, lr, wd, momentum, self.lazy_update, aggregated)


@register
class ccSGD(SGD):  # noqa: N801 - MXNet's registered (deprecated) name
    """MXNet's deprecated alias of :class:`SGD`."""


@register
class NAG(NumpyOptimizer):
    """Nesterov accelerated SGD (``nag_mom_update``; plain ``sgd_update`` without momentum)."""

    spec_params = (lr_param(0.01, positional=False), momentum_param())
    state_names = ("momentum",)
    master_first = False

    create_state_multi_precision = state_then_master

    def create_state(self, index: Key, weight: Any) -> Any:
        return np.zeros(weight.shape, weight.dtype) if self.momentum != 0.0 else None

    def _step(self, index: Key, w: np.ndarray, grad: Any, mom: np.ndarray | None, aliased: bool = True) -> None:
        """``nag_mom_update`` (``sgd_update`` without momentum), MXNet's single-weight kernels.
        MXNet's kernel writes the weight in place first, so the momentum sees the new weight;
        on a row-sparse weight its dense fallback computes into a temporary array and the
        momentum sees the old one (``aliased=False``)."""
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = self._dense(grad, w).astype(w.dtype, copy=False)
        if mom is None or self.momentum <= 0:
            kernels.sgd(w, g, None, lr, wd, 0.0, self.rescale_grad, self.clip_gradient, aggregated=False)
            return
        kernels.nag(w, g, mom, lr, wd, self.momentum, self.rescale_grad, self.clip_gradient, aliased)

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        self._virtual("_update_impl", index, weight, grad, state, multi_precision=False)

    def _update_impl(self, index: Key, weight: Any, grad: Any, state: Any, multi_precision: bool = False) -> None:
        if multi_precision:
            mom, master = state
            self._step(index, master, self._dense(grad, weight).astype(np.float32), mom)
            weight[...] = master
        else:
            self._step(index, weight, grad, state)

    def update_row_sparse_weight(self, index: Key, weight: np.ndarray, grad: Any, state: Any) -> None:
        """:meth:`update` for a row-sparse or CSR weight (given dense): MXNet has no sparse
        NAG kernel and runs the dense one on copies, so the momentum sees the old weight."""
        self._step(index, weight, grad, state, aliased=False)

    def update_multi_precision(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        # as MXNet: straight to _update_impl, so a subclass's ``update`` is not called here
        mp = self.multi_precision and weight.dtype == np.float16 and isinstance(state, (tuple, list))
        self._virtual("_update_impl", index, weight, grad, state, multi_precision=bool(mp))


@register
class Signum(NumpyOptimizer):
    """Signum (``signum_update``); signSGD (``signsgd_update``) when momentum is 0."""

    spec_params = (lr_param(0.01), momentum_param(0.9), Param("wd_lh", "wd_lh", "float", 0.0, "decoupled weight decay"))
    state_names = ("momentum",)
    wd_lh: float

    def create_state(self, index: Key, weight: Any) -> Any:
        return np.zeros(weight.shape, weight.dtype) if self.momentum != 0.0 else None

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        if state is None and self.wd_lh:
            # MXNet passes wd_lh to signsgd_update, which has no such argument
            raise UpdaterError(f"signum: momentum 0 runs signSGD, which takes no wd_lh ({self.wd_lh}): MXNet "
                               "1.9.1 refuses it too (Cannot find argument 'wd_lh'); give momentum > 0 or wd_lh=0")
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = self._dense(grad, weight)
        if state is None:  # signSGD ignores rescale_grad and clip_gradient, as MXNet's kernel
            kernels.signsgd(weight, g, lr, wd)
            return
        kernels.signum(weight, g, state, lr, wd, self.momentum, self.rescale_grad, self.clip_gradient,
                       self.wd_lh if self.wd_lh else 0.0)


@register
class DCASGD(NumpyOptimizer):
    """Delay-compensated asynchronous SGD.

    MXNet 1.9.1 fails with ``momentum > 0`` on any weight of more than one element (it tests
    an NDArray for truth); kvcli runs the documented update ``mom = momentum*mom - lr*(g +
    wd*w + lamda*g*g*(w - w_prev))``.
    """

    grad_broadcasts = True  # MXNet updates it in NDArray arithmetic

    spec_params = (lr_param(0.01, positional=False), momentum_param(),
                   Param("lamda", "lamda", "float", 0.04, "delay compensation"))
    state_names = ("momentum", "previous_weight")
    lamda: float

    def _post_init(self) -> None:
        self.weight_previous: dict[Key, Any] = {}

    def create_state(self, index: Key, weight: Any) -> Any:
        momentum = np.zeros(weight.shape, weight.dtype) if self.momentum != 0.0 else None
        return (momentum, np.array(weight, copy=True))

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        s = self._s
        g = self._python_clip(self._dense(grad, weight) * s(self.rescale_grad, weight))
        mom, previous = state
        # MXNet's Python: -lr * (grad + wd * weight + lamda * grad * grad * (weight - previous))
        step = (g + weight * s(wd, weight) + ((g * s(self.lamda, weight)) * g) * (weight - previous)) * s(-lr, weight)
        if mom is not None:
            mom *= s(self.momentum, weight)
            mom += step
            step = mom
        previous[...] = weight
        weight += step


@register
class SGLD(NumpyOptimizer):
    """Stochastic gradient Langevin dynamics: ``w += -lr/2*(g + wd*w) + N(0, sqrt(lr))``.

    The noise is ``mx.random.normal(0, sqrt(lr), weight.shape, dtype=weight.dtype)`` on the
    current context, as in MXNet: ``mx.random.seed`` makes it repeatable (the numbers are
    kvcli's, not MXNet's).
    """

    spec_params = (lr_param(0.01, positional=False),)
    state_names = ("unused",)  # create_state returns None

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = self._python_clip(self._dense(grad, weight) * self._s(self.rescale_grad, weight))
        weight += (g + weight * self._s(wd, weight)) * self._s(-lr / 2, weight)
        # the current context's stream, shared with mx.random (MXNet draws one value for a scalar)
        noise = random_streams.stream().normal(0.0, math.sqrt(lr), size=weight.shape or (1,))
        weight += np.asarray(noise).astype(weight.dtype)


@register
class LARS(NumpyOptimizer):
    """Layer-wise adaptive rate scaling on top of SGD (MXNet's ``multi_lars`` + preloaded
    multi-SGD for dense gradients; ``_get_lars`` + lazy SGD for row-sparse ones)."""

    spec_params = (
        lr_param(0.01, positional=False), momentum_param(), LAZY_UPDATE,
        Param("eta", "eta", "float", 0.001, "LARS coefficient"),
        Param("eps", "eps", "float", 0.0, "LARS epsilon"),
        Param("momentum_correction", "momentum_correction", "bool", True, "scale momentum when lr changes"),
    )
    state_names = ("momentum",)
    master_first = False
    _NO_LARS = ("gamma", "beta", "bias")
    eta: float
    eps: float
    momentum_correction: bool

    def _post_init(self) -> None:
        self.aggregate_num = 4
        self.skip = 0
        self.last_lr: float | None = None
        self.cur_lr: float | None = None

    create_state_multi_precision = state_then_master
    create_state = SGD.create_state

    def _get_lrs(self, indices: list[Key]) -> list[float]:
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self._base_lr()
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return self._scale([lr for _ in indices], indices, self.lr_mult, "lr_mult")

    def set_wd_mult(self, args_wd_mult: dict[Any, float]) -> None:
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith("_weight")}
        self._sym_wd_mult()
        self.wd_mult.update(args_wd_mult)

    def _skips_lars(self, index: Key) -> bool:
        name = self.idx2name[index] if index in self.idx2name else str(index)
        return name.endswith(self._NO_LARS)

    def _lars_lr(self, index: Key, weight: np.ndarray, grad: Any, lr: float, wd: float, aggregate: bool) -> Any:
        """The layer's rate: MXNet's ``multi_sum_sq`` + ``multi_lars`` kernels (float32, the
        rates and weight decays given as float32 arrays) when the call's gradients are all
        dense, its ``_get_lars`` (Python floats) otherwise."""
        if not aggregate:
            if self._skips_lars(index):
                return lr
            w_norm = float(np.linalg.norm(np.asarray(weight).astype(np.float32)))
            data = grad.data if is_row_sparse(grad) else grad
            g_norm = float(np.linalg.norm(np.asarray(data, np.float32) * kernels.arg(self.rescale_grad, np.float32(0))))
            if w_norm > 0 and g_norm > 0:
                return self.eta * w_norm / (g_norm + wd * w_norm + self.eps) * lr
            return lr
        lr32, wd32 = np.float32(lr), np.float32(wd)  # nd.array([...], dtype='float32')
        if self._skips_lars(index):
            return lr32
        g_sq = kernels.sum_sq(grad)
        w32 = np.sqrt(kernels.sum_sq(weight))
        if w32 > 0 and g_sq > 0:
            f32 = np.float32(0)
            eta, eps, rescale = (kernels.arg(v, f32) for v in (self.eta, self.eps, self.rescale_grad))
            return np.float32(lr32 * eta * w32 / (np.sqrt(g_sq) * rescale + wd32 * w32 + eps))
        return lr32

    # as SGD's: both go straight to _update_impl (a subclass's ``update`` is not called here)
    update = SGD.update
    update_multi_precision = SGD.update_multi_precision

    def _update_impl(self, indices: Any, weights: Any, grads: Any, states: Any, multi_precision: bool = False) -> None:
        """One weight or (aggregated) lists of them, in MXNet's order: count every index, one
        ``_get_lrs`` for the call (it moves the momentum correction's rates), then per weight
        its LARS rate (on the weight and gradient as given: float16 ones under
        ``multi_precision``) and an SGD step (of the float32 master copy under it)."""
        indices, weights, grads, states = as_lists(self, indices, weights, grads, states)
        aggregate = not any(is_row_sparse(g) for g in grads)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        momentum = self.momentum
        assert self.cur_lr is not None and self.last_lr is not None  # _get_lrs above set both
        if self.momentum > 0 and self.momentum_correction and self.last_lr != 0:
            momentum = self.momentum * (self.cur_lr / self.last_lr)
        for index, weight, grad, state, lr, wd in zip(indices, weights, grads, states, lrs, wds):
            lr = self._lars_lr(index, weight, grad, lr, wd, aggregate)
            if aggregate:
                wd = np.float32(wd)  # the preloaded kernels' float32 array
            if multi_precision:
                mom, master = state
                g32 = self._dense(grad, weight).astype(np.float32)
                sgd_step(self, index, master, g32, mom if self.momentum > 0 else None, lr, wd, momentum, False,
                         aggregate, preloaded=aggregate)
                weight[...] = master
            else:
                sgd_step(self, index, weight, grad, state if self.momentum > 0 else None, lr, wd, momentum,
                         self.lazy_update, aggregate, preloaded=aggregate)

    def _extra_state(self) -> dict[str, Any]:
        # the rates of the last two updates drive the momentum correction
        return {**super()._extra_state(), "last_lr": self.last_lr, "cur_lr": self.cur_lr}

    def _check_extra_state(self, extra: dict[str, Any], shapes: Mapping[Key, tuple[int, ...]]) -> None:
        for name in ("last_lr", "cur_lr"):
            check_number(extra.get(name), f"LARS's {name}", optional=True)
        super()._check_extra_state(extra, shapes)

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        super()._load_extra_state(extra)
        last, cur = extra.get("last_lr"), extra.get("cur_lr")
        self.last_lr = None if last is None else float(last)
        self.cur_lr = None if cur is None else float(cur)



_WARMUP = ("linear", "power2", "sqrt", "lars")


@register
class LBSGD(NumpyOptimizer):
    """Large-batch SGD: gradients accumulate over ``batch_scale`` pushes, the learning rate
    warms up (``warmup_strategy``) or follows LARS.

    In MXNet 1.9.1 ``multi_precision`` LBSGD swaps its master copy and momentum (its state is
    ``(momentum, master)`` but the base class reads ``(master, state)``); kvcli updates the
    float32 master copy as SGD does.
    """

    spec_params = (
        lr_param(0.01, positional=False),
        momentum_param(),
        Param("warmup_strategy", "warmup_strategy", "str", "linear", "lr warm-up", _WARMUP),
        Param("warmup_epochs", "warmup_epochs", "int", 5, "warm-up epochs"),
        Param("batch_scale", "batch_scale", "int", 1, "pushes per macro-batch"),
        Param("updates_per_epoch", "updates_per_epoch", "int", 32, "updates per epoch"),
        Param("begin_epoch", "begin_epoch", "int", 0, "first epoch"),
        Param("num_epochs", "num_epochs", "int", 60, "epochs"),
    )
    state_names = ("momentum",)
    master_first = False

    def __init__(self, momentum: float = 0.0, multi_precision: bool = False, warmup_strategy: str = "linear",
                 warmup_epochs: int = 5, batch_scale: int = 1, updates_per_epoch: int = 32, begin_epoch: int = 0,
                 num_epochs: int = 60, **kwargs: Any) -> None:
        super().__init__(multi_precision=multi_precision, **kwargs)
        self.momentum = momentum
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.begin_epoch = begin_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads: dict[Key, dict[str, Any]] = {}
        self.adaptive = False
        self.admult = 1

    create_state_multi_precision = state_then_master
    create_state = SGD.create_state

    def _get_lbmult(self, nup: int) -> float:
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        if self.warmup_strategy == "linear":
            return 1.0 + (maxmult - 1) * nup / nwup
        if self.warmup_strategy == "power2":
            return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        if self.warmup_strategy == "sqrt":
            return 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        return 1.0

    @staticmethod
    def _lars(weight: np.ndarray, g: np.ndarray, wd: float) -> float:
        weight2 = float(np.multiply(weight, weight).sum())
        grad2 = float(np.multiply(g, g).sum())
        lars = math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18))
        return min(max(lars, 0.01), 100.0)

    def _cumulate(self, grad: np.ndarray, index: Key) -> dict[str, Any]:
        cgrad = self.cumgrads.get(index)
        if cgrad and cgrad["num_cums"] > 0:
            cgrad = {"cum_grad": cgrad["cum_grad"] + grad, "num_cums": cgrad["num_cums"] + 1}
        else:
            # A copy: the store may reuse the pushed buffer for the next push.
            cgrad = {"cum_grad": np.array(grad, copy=True), "num_cums": self.init_updates + 1}
        self.cumgrads[index] = cgrad
        return cgrad

    def _step(self, index: Key, weight: np.ndarray, grad: np.ndarray, mom: np.ndarray | None) -> None:
        lr, wd = self._get_lr(index), self._get_wd(index)  # before the count, as MXNet
        self._update_count(index)
        cgrad = self._cumulate(grad, index)
        if cgrad["num_cums"] % self.batch_scale != 0:
            # MXNet runs sgd_update(lr=0, wd=wd) here: the weight stays (unless the gradient is not finite)
            kernels.sgd(weight, grad, None, 0.0, wd, 0.0, 1.0, None, aggregated=False)
            return
        g = cgrad["cum_grad"] / self._s(self.batch_scale, weight)
        if self.warmup_strategy == "lars":
            lr *= self._lars(weight, g, wd)
        else:
            lr *= self._get_lbmult(cgrad["num_cums"])
        # MXNet's sgd_mom_update / sgd_update (single-weight kernels)
        kernels.sgd(weight, g, mom if mom is not None and self.momentum > 0 else None, lr, wd,
                    self.momentum if self.momentum > 0 else 0.0, self.rescale_grad, self.clip_gradient,
                    aggregated=False)
        self.cumgrads[index]["cum_grad"] = 0

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        self._step(index, weight, self._dense(grad, weight), state)

    def update_multi_precision(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        if self.multi_precision and weight.dtype == np.float16:
            mom, master = state
            self._step(index, master, self._dense(grad, weight).astype(np.float32), mom)
            weight[...] = master
        else:
            self._virtual("update", index, weight, grad, state)

    def reset(self, key: Key) -> None:
        super().reset(key)
        self.cumgrads.pop(key, None)

    def _extra_state(self) -> dict[str, Any]:
        extra = super()._extra_state()
        extra["cumgrads"] = [
            [type(k).__name__, k, c["num_cums"], np.asarray(c["cum_grad"]).tolist(), str(np.asarray(c["cum_grad"]).dtype)]
            for k, c in self.cumgrads.items()
        ]
        return extra

    def _check_extra_state(self, extra: dict[str, Any], shapes: Mapping[Key, tuple[int, ...]]) -> None:
        self._read_cumgrads(extra, shapes)
        super()._check_extra_state(extra, shapes)

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        super()._load_extra_state(extra)
        self.cumgrads = self._read_cumgrads(extra, {})

    @staticmethod
    def _read_cumgrads(extra: dict[str, Any], shapes: Mapping[Key, tuple[int, ...]]) -> dict[Key, dict[str, Any]]:
        """The accumulated gradients a state file keeps: each a number (0 after a step) or an
        array of its key's shape (where ``shapes`` knows it)."""
        entries = extra.get("cumgrads", [])
        if not isinstance(entries, list):
            raise OptimizerStateError("LBSGD's accumulated gradients are not a list")
        cumgrads: dict[Key, dict[str, Any]] = {}
        for entry in entries:
            if not isinstance(entry, list) or len(entry) != 5 or entry[0] not in ("int", "str") \
                    or entry[4] not in DTYPES or entry[4] == "bool":
                raise OptimizerStateError(f"LBSGD's accumulated gradient {repr(entry)[:60]} is malformed")
            kind, key, num_cums, cum_grad, dtype = entry
            if not (isinstance(key, str) if kind == "str" else isinstance(key, int) and not isinstance(key, bool)):
                raise OptimizerStateError(f"LBSGD's accumulated gradient names the key {repr(key)[:40]} as {kind}")
            count = check_count(num_cums, f"LBSGD's accumulation count of key {key!r}")
            try:
                with np.errstate(over="raise", invalid="raise"):
                    array = np.asarray(cum_grad, dtype=dtype)
            except (ValueError, TypeError, OverflowError, FloatingPointError):
                raise OptimizerStateError(f"LBSGD's accumulated gradient of key {key!r} is not a {dtype} array") from None
            shape = shapes.get(key)
            if array.ndim and shape is not None and array.shape != tuple(shape):
                raise OptimizerStateError(
                    f"LBSGD's accumulated gradient of key {key!r} has shape {array.shape}, the key {tuple(shape)}"
                )
            cumgrads[key] = {"num_cums": count, "cum_grad": array if array.ndim else array.item()}
        return cumgrads



@register
class Test(NumpyOptimizer):
    """MXNet's ``Test`` optimizer, which MXNet's own KVStore tests set on their servers:
    ``w += rescale_grad * g``, with the state a copy of the weight. It takes no learning
    rate, weight decay or clipping (they are accepted and unused) and counts no updates,
    as in MXNet."""

    spec_params = (lr_param(0.01, positional=False),)  # MXNet's base default, as for every optimizer
    state_names = ("weight",)

    def create_state(self, index: Key, weight: Any) -> Any:
        return np.zeros(weight.shape, np.float32)  # MXNet's zeros(): float32 whatever the weight

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        g = self._dense(grad, weight)
        weight += g * self._s(self.rescale_grad, g)  # MXNet's scalar op: in the gradient's dtype
        state[...] = weight
