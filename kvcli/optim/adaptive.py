"""MXNet 1.9.1's adaptive optimizers: Adam, Adamax, Nadam, FTML, LAMB, AdaGrad, RMSProp
(plain and centered), AdaDelta, Ftrl — numpy float32 in the order of MXNet's kernels."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from kvcli.errors import UpdaterError
from kvcli.optim import kernels
from kvcli.optim.base import Key, as_lists, f32, register
from kvcli.optim.mxfloat import tuple_param
from kvcli.optim.blocks import blockwise
from kvcli.optim.checks import check_number, is_row_sparse
from kvcli.optim.params import LAZY_UPDATE, Param, beta_params, eps_param, lr_param
from kvcli.optim.sgd import SGD, NumpyOptimizer, update_rows


def _zeros(weight: Any, dtype: Any = None) -> np.ndarray:
    return np.zeros(weight.shape, dtype or weight.dtype)


def _float32_state(name: str, weight: np.ndarray) -> None:
    """Refuse, as MXNet does, to update a non-float32 weight with float32 state (MXNet makes
    these optimizers' state float32 whatever the weight, then its operators refuse the mix)."""
    if weight.dtype != np.float32:
        raise UpdaterError(
            f"{name} keeps float32 state and cannot update a {weight.dtype} weight (MXNet 1.9.1 refuses it too: "
            "Incompatible attr ... expected float32): use a float32 weight, or multi_precision=True for float16"
        )


@register
class Adam(NumpyOptimizer):
    """Adam (``adam_update``, bias correction folded into the learning rate); with a
    row-sparse gradient and ``lazy_update`` only the listed rows and their moments change."""

    spec_params = (lr_param(0.001), *beta_params(0.9, 0.999), eps_param(1e-8), LAZY_UPDATE)
    state_names = ("mean", "var")

    def create_state(self, index: Key, weight: Any) -> Any:
        return (_zeros(weight), _zeros(weight))

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr *= math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)

        def kernel(w: np.ndarray, g: np.ndarray, mean: np.ndarray, var: np.ndarray) -> None:
            # MXNet's adam_update, in the weight's dtype
            rescale, wd_, b1, b2, eps, lr_ = (kernels.arg(v, w) for v in
                                              (self.rescale_grad, wd, self.beta1, self.beta2, self.epsilon, lr))
            one, bound = w.dtype.type(1), kernels.clip_bound(self.clip_gradient, w)
            g = g * rescale + w * wd_
            if bound is not None:
                g = kernels.clip(g, bound)
            mean[...] = b1 * mean + (one - b1) * g
            var[...] = b2 * var + (one - b2) * g * g
            w -= lr_ * mean / (np.sqrt(var) + eps)

        mean, var = state
        if is_row_sparse(grad) and self.lazy_update:
            update_rows(kernel, np.asarray(grad.indices, np.int64), weight, np.asarray(grad.data, weight.dtype), mean, var)
        else:
            blockwise(kernel, weight, self._dense(grad, weight), mean, var)


@register
class Adamax(NumpyOptimizer):
    """AdaMax, Adam's infinity-norm variant: ``u = max(beta2*u, |g|)``."""

    grad_broadcasts = True  # MXNet updates it in NDArray arithmetic

    spec_params = (lr_param(0.002), *beta_params(0.9, 0.999, "infinity-norm decay"))
    state_names = ("mean", "var")

    create_state = Adam.create_state

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr /= 1.0 - self.beta1**t
        s = self._s
        g = self._python_clip(self._dense(grad, weight) * s(self.rescale_grad, weight) + weight * s(wd, weight))
        m_t, u_t = state
        m_t *= s(self.beta1, m_t)
        m_t += g * s(1.0 - self.beta1, g)
        np.maximum(u_t * s(self.beta2, u_t), np.abs(g), out=u_t)
        weight -= (m_t * s(lr, m_t)) / u_t


@register
class Nadam(NumpyOptimizer):
    """Nesterov Adam. Its momentum schedule ``m_schedule`` is one number for the whole
    optimizer, multiplied at every update of any key (as in MXNet)."""

    grad_broadcasts = True  # MXNet updates it in NDArray arithmetic

    spec_params = (lr_param(0.001), *beta_params(0.9, 0.999), eps_param(1e-8),
                   Param("schedule_decay", "schedule_decay", "float", 0.004, "momentum schedule decay"))
    state_names = ("mean", "var")
    schedule_decay: float

    def _post_init(self) -> None:
        self.m_schedule = 1.0

    create_state = Adam.create_state

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        s = self._s
        g = self._python_clip(self._dense(grad, weight) * s(self.rescale_grad, weight) + weight * s(wd, weight))
        momentum_t = self.beta1 * (1.0 - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1.0 - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * momentum_t
        m_schedule_next = self.m_schedule * momentum_t_1
        m_t, v_t = state
        m_t *= s(self.beta1, m_t)
        m_t += g * s(1.0 - self.beta1, g)
        v_t *= s(self.beta2, v_t)
        v_t += (g * s(1.0 - self.beta2, g)) * g
        grad_prime = g / s(1.0 - self.m_schedule, g)
        m_t_prime = m_t / s(1.0 - m_schedule_next, m_t)
        v_t_prime = v_t / s(1.0 - pow(self.beta2, t), v_t)
        m_t_bar = grad_prime * s(1.0 - momentum_t, grad_prime) + m_t_prime * s(momentum_t_1, m_t_prime)
        weight -= (m_t_bar * s(lr, m_t_bar)) / (np.sqrt(v_t_prime) + s(self.epsilon, v_t_prime))

    def _extra_state(self) -> dict[str, Any]:
        return {**super()._extra_state(), "m_schedule": self.m_schedule}

    def _check_extra_state(self, extra: dict[str, Any], shapes: Mapping[Key, tuple[int, ...]]) -> None:
        check_number(extra.get("m_schedule", 1.0), "Nadam's m_schedule")
        super()._check_extra_state(extra, shapes)

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        super()._load_extra_state(extra)
        self.m_schedule = float(extra.get("m_schedule", 1.0))


@register
class FTML(NumpyOptimizer):
    """Follow the Moving Leader (``ftml_update``)."""

    spec_params = (lr_param(0.01, positional=False), *beta_params(0.6, 0.999), eps_param(1e-8))
    state_names = ("prev_d", "prev_v", "prev_z")

    def create_state(self, index: Key, weight: Any) -> Any:
        return (_zeros(weight), _zeros(weight), _zeros(weight))

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        w = weight
        lr, wd, b1, b2, rescale = (kernels.arg(v, w) for v in (
            self._get_lr(index), self._get_wd(index), self.beta1, self.beta2, self.rescale_grad))
        eps = kernels.scalar(self.epsilon, w)  # ftml_update's epsilon is its one double argument
        t, one = w.dtype.type(self._index_update_count[index]), w.dtype.type(1)
        g = rescale * self._dense(grad, weight) + wd * weight
        bound = kernels.clip_bound(self.clip_gradient, w)
        if bound is not None:
            g = kernels.clip(g, bound)
        d, v, z = state
        v[...] = b2 * v + (one - b2) * np.square(g)
        d_t = (one - kernels.power(b1, t)) / lr * (np.sqrt(v / (one - kernels.power(b2, t))) + eps)
        z[...] = b1 * z + (one - b1) * g - (d_t - b1 * d) * weight
        d[...] = d_t
        weight[...] = -z / d_t


@register
class LAMB(NumpyOptimizer):
    """Layer-wise adaptive moments (MXNet's ``multi_lamb_update``, the path its Updater takes)."""

    spec_params = (
        lr_param(0.001), *beta_params(0.9, 0.999), eps_param(1e-6),
        Param("lower_bound", "lower_bound", "optional", None, "lower bound of the weight norm"),
        Param("upper_bound", "upper_bound", "optional", None, "upper bound of the weight norm"),
        Param("bias_correction", "bias_correction", "bool", True, "correct the moments' bias"),
    )
    state_names = ("mean", "var")
    lower_bound: float | None
    upper_bound: float | None
    bias_correction: bool

    def _post_init(self) -> None:
        self.aggregate_num = 45  # MXNet's LAMB aggregates up to 45 weights per call

    create_state = Adam.create_state

    def _step(self, w: np.ndarray, grad: np.ndarray, state: Any, norm_weight: np.ndarray,
              rate: float, decay: float, count: int) -> None:
        """MXNet's ``multi_lamb_update`` for one weight (``multi_mp_lamb_update``: ``w`` is the
        float32 master copy), in its MPDType, ``w``'s dtype: the rates come as a tuple, the
        step is kept in float32 (its ``temp_g``), and the norms are float32 sums of squares."""
        kind = w.dtype.type
        lr, wd, t, one = kind(tuple_param(rate)), kind(tuple_param(decay)), kind(count), kind(1)
        b1, b2, eps = (kernels.arg(v, w) for v in (self.beta1, self.beta2, self.epsilon))
        g = kernels.float_times(f32(self.rescale_grad), grad.astype(kind, copy=False))
        bound = kernels.clip_bound(self.clip_gradient, w)
        if bound is not None:
            g = kernels.clip(g, bound)
        mean, var = state
        mean[...] = b1 * mean + (one - b1) * g
        var[...] = b2 * var + (one - b2) * g * g
        if self.bias_correction:
            m_hat = mean / (one - kernels.power(b1, t))
            v_hat = var / (one - kernels.power(b2, t))
        else:
            m_hat, v_hat = mean, var
        if kind is np.float32:
            # the kernel's plain ``sqrt`` is C's double one: for float32 the step is computed in
            # double, ``wd * w`` (a float product) included, and rounded once (measured)
            step = (m_hat.astype(np.float64) / (np.sqrt(v_hat.astype(np.float64)) + np.float64(eps))
                    + (wd * w).astype(np.float64)).astype(np.float32)
        else:
            step = (m_hat / (np.sqrt(v_hat) + eps) + wd * w).astype(np.float32)
        r1 = np.sqrt(kernels.sum_sq(norm_weight))
        r2 = np.sqrt(kernels.sum_sq(step))
        if self.lower_bound:
            r1 = max(r1, f32(self.lower_bound))
        if self.upper_bound:
            r1 = min(r1, f32(self.upper_bound))
        r = one if r1 == 0 or r2 == 0 else kind(np.float32(r1 / r2))
        w -= kernels.float_times_array(lr * r, step)

    # one weight, or (as MXNet's aggregated ``multi_lamb_update``) lists of them; as SGD's,
    # both go straight to _update_impl (a subclass's ``update`` is not called here)
    update = SGD.update
    update_multi_precision = SGD.update_multi_precision

    def _update_impl(self, index: Key | list[Key], weight: Any, grad: Any, state: Any,
                     multi_precision: bool = False) -> None:
        """Count each index and take its rate, weight decay and step count, then step each
        weight (MXNet's order for a list of indices)."""
        indices, weights, grads, states = as_lists(self, index, weight, grad, state)
        settings = []
        for i in indices:
            self._update_count(i)
            settings.append((self._get_lr(i), self._get_wd(i), self._index_update_count[i]))
        for w, g, st, (lr, wd, count) in zip(weights, grads, states, settings):
            if multi_precision:
                master, inner = st
                self._step(master, self._dense(g, w).astype(np.float32), inner, w, lr, wd, count)
                w[...] = master
            else:
                self._step(w, self._dense(g, w), st, w, lr, wd, count)


@register
class AdaGrad(NumpyOptimizer):
    """AdaGrad. A row-sparse gradient updates only its rows (MXNet's sparse
    ``adagrad_update``, which has no weight decay: it needs ``wd=0``)."""

    grad_broadcasts = True  # MXNet updates it in NDArray arithmetic

    spec_params = (lr_param(0.01, positional=False), eps_param(1e-7, "eps", attr="float_stable_eps"))
    state_names = ("history",)
    float_stable_eps: float

    def create_state(self, index: Key, weight: Any) -> Any:
        return np.zeros(weight.shape, np.float32)

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        _float32_state("adagrad", weight)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if is_row_sparse(grad):
            if wd != 0:
                raise UpdaterError(
                    f"adagrad cannot apply wd={self.wd} to a row-sparse gradient (MXNet's sparse adagrad "
                    "has no weight decay): use wd=0 or push a dense gradient"
                )

            def kernel(w: np.ndarray, g: np.ndarray, history: np.ndarray) -> None:
                g = self._rescaled_clipped(g)
                history += g * g
                w -= g / np.sqrt(history + kernels.arg(self.float_stable_eps, w)) * kernels.arg(lr, w)

            update_rows(kernel, np.asarray(grad.indices, np.int64), weight, np.asarray(grad.data, weight.dtype), state)
            return
        s = self._s
        g = self._python_clip(grad * s(self.rescale_grad, grad))
        state += np.square(g)
        div = g / np.sqrt(state + s(self.float_stable_eps, state))
        weight += (div + weight * s(wd, weight)) * s(-lr, weight)


@register
class RMSProp(NumpyOptimizer):
    """RMSProp (``rmsprop_update``) or, with ``centered``, Graves' variant
    (``rmspropalex_update``); ``clip_weights`` clips the updated weight."""

    spec_params = (
        lr_param(0.001),
        Param("gamma1", "gamma1", "float", 0.9, "decay of the squared-gradient average"),
        Param("gamma2", "gamma2", "float", 0.9, "momentum (centered only)"),
        eps_param(1e-8),
        Param("centered", "centered", "bool", False, "Graves' centered variant"),
        Param("clip_weights", "clip_weights", "optional", None, "clip weights to [-c, c]"),
    )
    gamma1: float
    gamma2: float
    centered: bool
    clip_weights: float | None

    def _state_names(self) -> tuple[str, ...]:
        return ("n", "g", "delta") if self.centered else ("n",)

    def create_state(self, index: Key, weight: Any) -> Any:
        count = 3 if self.centered else 1
        return tuple(np.zeros(weight.shape, np.float32) for _ in range(count))

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        _float32_state("rmsprop", weight)
        self._update_count(index)
        lr, wd = f32(self._get_lr(index)), f32(self._get_wd(index))
        g1, one, eps = f32(self.gamma1), f32(1), f32(self.epsilon)
        g = f32(self.rescale_grad) * self._dense(grad, weight) + wd * weight
        c = self._kernel_clip()
        if c is not None:
            g = np.clip(g, f32(-c), f32(c))
        cw = self.clip_weights if self.clip_weights and self.clip_weights >= 0 else None
        if not self.centered:
            (n,) = state
            n[...] = (one - g1) * (g * g) + g1 * n
            new = weight - lr * (g / np.sqrt(n + eps))
        else:
            n, mean_g, delta = state
            n[...] = (one - g1) * g * g + g1 * n
            mean_g[...] = (one - g1) * g + g1 * mean_g
            delta[...] = f32(self.gamma2) * delta - (lr * g / np.sqrt(n - mean_g * mean_g + eps))
            new = weight + delta
        if cw is not None:
            new = np.clip(new, f32(-cw), f32(cw))
        weight[...] = new


@register
class AdaDelta(NumpyOptimizer):
    """AdaDelta (no learning rate: ``rho`` and ``epsilon`` set the step)."""

    grad_broadcasts = True  # MXNet updates it in NDArray arithmetic

    spec_params = (lr_param(0.01, positional=False), Param("rho", "rho", "float", 0.9, "decay of the running averages"),
                   eps_param(1e-5))
    state_names = ("acc_g", "acc_delta")
    rho: float

    def create_state(self, index: Key, weight: Any) -> Any:
        return (np.zeros(weight.shape, np.float32), np.zeros(weight.shape, np.float32))

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        _float32_state("adadelta", weight)
        wd = self._get_wd(index)  # before the count, as MXNet
        self._update_count(index)
        s = self._s  # MXNet's Python, operation by operation
        g = self._python_clip(self._dense(grad, weight) * s(self.rescale_grad, weight))
        acc_g, acc_delta = state
        acc_g *= s(self.rho, acc_g)
        acc_g += (g * s(1.0 - self.rho, g)) * g
        current_delta = np.sqrt(acc_delta + s(self.epsilon, acc_delta)) / np.sqrt(acc_g + s(self.epsilon, acc_g)) * g
        acc_delta *= s(self.rho, acc_delta)
        acc_delta += (current_delta * s(1.0 - self.rho, current_delta)) * current_delta
        weight -= current_delta + weight * s(wd, weight)


@register
class Ftrl(NumpyOptimizer):
    """Follow the regularized leader, proximal (``ftrl_update``). On a dense weight MXNet
    updates every row even for a row-sparse gradient, and so does kvcli; on a row-sparse
    weight with a row-sparse gradient (MXNet's sparse kernel) only the gradient's rows change."""

    spec_params = (
        lr_param(0.1),
        Param("lamda1", "lamda1", "float", 0.01, "L1 regularization"),
        Param("beta", "beta", "float", 1.0, "per-coordinate rate offset"),
    )
    state_names = ("z", "n")

    def __init__(self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if learning_rate is not None and learning_rate < 0:
            raise UpdaterError(f"learning_rate must not be negative, not {learning_rate!r}; give 0 or more")
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index: Key, weight: Any) -> Any:
        return (np.zeros(weight.shape, np.float32), np.zeros(weight.shape, np.float32))

    def update(self, index: Key, weight: Any, grad: Any, state: Any) -> None:
        _float32_state("ftrl", weight)
        self._update_count(index)
        z, n = state
        self._kernel(index, weight, self._dense(grad, weight), z, n)

    def update_row_sparse_weight(self, index: Key, weight: np.ndarray, grad: Any, state: Any) -> None:
        """:meth:`update` for a row-sparse weight (given dense): lazy on a row-sparse gradient."""
        if not is_row_sparse(grad):
            self._virtual("update", index, weight, grad, state)
            return
        self._update_count(index)
        rows = np.asarray(grad.indices, np.int64)
        update_rows(lambda w, g, z, n: self._kernel(index, w, g, z, n), rows, weight,
              np.asarray(grad.data, weight.dtype), *state)

    def _kernel(self, index: Key, weight: np.ndarray, grad: np.ndarray, z: np.ndarray, n: np.ndarray) -> None:
        wd, lr = f32(self._get_wd(index)), f32(self._get_lr(index))
        g = self._rescaled_clipped(grad)
        z += g - (np.sqrt(n + np.square(g)) - np.sqrt(n)) * weight / lr
        n += np.square(g)
        lamda1 = f32(self.lamda1)
        weight[...] = (kernels.sign(z) * lamda1 - z) / ((f32(self.beta) + np.sqrt(n)) / lr + wd) * (np.abs(z) > lamda1)
