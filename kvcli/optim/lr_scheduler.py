"""MXNet 1.9.1's learning-rate schedules: ``scheduler(num_update) -> lr``, with warm-up.

Factor and multi-factor schedules keep a position (they are called with a growing
``num_update``); :meth:`LRScheduler.state_dict` saves it so a resumed optimizer continues
exactly. Each schedule also has a spec string (``factor:step=100:factor=0.5``) that
:func:`parse_schedule` reads back.
"""

from __future__ import annotations

from math import cos, pi
from typing import Any, ClassVar

from kvcli.errors import OptimizerStateError, UpdaterError
from kvcli.optim.checks import MAX_COUNT, check_count, check_number



#: The mutable attributes that count updates or steps (whole numbers, see ``check_state_dict``).
_COUNTERS = ("count", "cur_step_ind")


def _info(message: str, *args: Any) -> None:
    """MXNet logs each rate change at INFO (logging is imported only then: fast start-up)."""
    import logging

    logging.getLogger(__name__).info(message, *args)


class LRScheduler:
    """Base class: ``base_lr`` and the warm-up (``warmup_steps`` updates rising from
    ``warmup_begin_lr``, ``linear`` or ``constant``)."""

    #: The schedule's name in a spec string.
    kind: ClassVar[str] = ""
    #: Attributes that change as the schedule runs (saved with the optimizer state).
    mutable: ClassVar[tuple[str, ...]] = ("base_lr",)

    def __init__(self, base_lr: float = 0.01, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        self.base_lr = base_lr
        if not isinstance(warmup_steps, int):
            raise UpdaterError(f"warmup_steps must be a whole number, not {warmup_steps!r}")
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise UpdaterError("Base lr has to be higher than warmup_begin_lr")
        if self.warmup_steps < 0:
            raise UpdaterError("Warmup steps has to be positive or 0")
        if warmup_mode not in ("linear", "constant"):
            raise UpdaterError("Supports only linear and constant modes of warmup")
        self.warmup_mode = warmup_mode
        self._init_args: dict[str, Any] = {}

    def get_warmup_lr(self, num_update: int) -> float:
        """The learning rate during warm-up (``num_update < warmup_steps``)."""
        assert num_update < self.warmup_steps
        if self.warmup_mode == "linear":
            increase = (self.warmup_final_lr - self.warmup_begin_lr) * float(num_update) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update: int) -> float:
        raise NotImplementedError("must override this")

    # -- kvcli: persistence and spec strings ----------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The attributes that change as the schedule runs."""
        return {name: getattr(self, name) for name in self.mutable}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.check_state_dict(state)
        for name in self.mutable:
            if name in state:
                value = state[name]
                setattr(self, name, float(value) if name == "base_lr" else int(value) if name in _COUNTERS else value)

    def check_state_dict(self, state: dict[str, Any]) -> None:
        """Refuse a saved position this schedule cannot take (a rate that is not a finite
        number, a count out of range, anything but a plain number or word for a subclass's
        own attribute): :class:`OptimizerStateError`, nothing changed."""

        for name in self.mutable:
            if name not in state:
                continue
            value = state[name]
            if name == "base_lr":
                check_number(value, "the schedule's base_lr")
            elif name in _COUNTERS:
                if check_count(value, f"the schedule's {name}") > self._most(name):
                    raise OptimizerStateError(f"the schedule's {name} is {value}, more than its {self._most(name)} steps")
            elif value is not None and not isinstance(value, (bool, int, float, str)):
                raise OptimizerStateError(f"the schedule's {name} is a {type(value).__name__}, not a number")

    def _most(self, name: str) -> int:
        """The largest value the mutable counter ``name`` can reach (a multi-factor schedule's
        position is at most its number of steps)."""
        steps = getattr(self, "step", None)
        if name == "cur_step_ind" and isinstance(steps, list):
            return len(steps)

        return MAX_COUNT

    @property
    def spec(self) -> str:
        """``kind:arg=value:...`` (only arguments that differ from their default)."""
        parts = [self.kind]
        for name, value in self._init_args.items():
            if isinstance(value, list):
                value = "/".join(_number(v) for v in value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                value = _number(value)
            parts.append(f"{name}={value}")
        return ":".join(parts)

    def _decay_over(self, max_update: int, final_lr: float) -> None:
        """Poly and cosine: decay to ``final_lr`` over ``max_update`` updates (after warm-up)."""
        if not isinstance(max_update, int):
            raise UpdaterError(f"max_update must be a whole number, not {max_update!r}")
        if max_update < 1:
            raise UpdaterError("maximum number of updates must be strictly positive")
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = max_update - self.warmup_steps

    def _remember(self, args: dict[str, Any], defaults: dict[str, Any]) -> None:
        self._init_args = {k: v for k, v in args.items() if k not in defaults or v != defaults[k]}

    def __repr__(self) -> str:
        return f"<lr_scheduler {self.spec}>"


class FactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` every ``step`` updates, never below ``stop_factor_lr``."""

    kind = "factor"
    mutable = ("base_lr", "count")

    def __init__(self, step: int, factor: float = 1, stop_factor_lr: float = 1e-8, base_lr: float = 0.01,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0, warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise UpdaterError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise UpdaterError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0
        self._remember(
            dict(step=step, factor=factor, stop_factor_lr=stop_factor_lr, base_lr=base_lr, warmup_steps=warmup_steps,
                 warmup_begin_lr=warmup_begin_lr, warmup_mode=warmup_mode),
            dict(factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"),
        )

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:
            self.count += self.step
            before = self.base_lr
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                _info("Update[%d]: now learning rate arrived at %0.5e, will not change in the future",
                          num_update, self.base_lr)
            else:
                _info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
            if self.base_lr == before:
                # a fixed point (factor 1, or held at stop_factor_lr): the remaining turns
                # would only advance count, so advance it at once (a count loaded far behind
                # num_update must not loop for ages)
                self.count += self.step * ((num_update - self.count - 1) // self.step)
                break
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` after each update count listed in ``step``."""

    kind = "multifactor"
    mutable = ("base_lr", "count", "cur_step_ind")

    def __init__(self, step: list[int], factor: float = 1, base_lr: float = 0.01, warmup_steps: int = 0,
                 warmup_begin_lr: float = 0, warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or len(step) < 1:
            raise UpdaterError(f"step must be a non-empty list of update counts, not {step!r}")
        for i, _step in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise UpdaterError("Schedule step must be an increasing integer list")
            if _step < 1:
                raise UpdaterError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise UpdaterError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0
        self._remember(
            dict(step=list(step), factor=factor, base_lr=base_lr, warmup_steps=warmup_steps,
                 warmup_begin_lr=warmup_begin_lr, warmup_mode=warmup_mode),
            dict(factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"),
        )

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update > self.step[self.cur_step_ind]:
                self.count = self.step[self.cur_step_ind]
                self.cur_step_ind += 1
                self.base_lr *= self.factor
                _info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
            else:
                return self.base_lr
        return self.base_lr


class PolyScheduler(LRScheduler):
    """Polynomial decay from ``base_lr`` to ``final_lr`` over ``max_update`` updates."""

    kind = "poly"

    def __init__(self, max_update: int, base_lr: float = 0.01, pwr: float = 2, final_lr: float = 0,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0, warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.power = pwr
        self.base_lr_orig = self.base_lr
        self._decay_over(max_update, final_lr)
        self._remember(
            dict(max_update=max_update, base_lr=base_lr, pwr=pwr, final_lr=final_lr, warmup_steps=warmup_steps,
                 warmup_begin_lr=warmup_begin_lr, warmup_mode=warmup_mode),
            dict(base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"),
        )

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * pow(
                1 - float(num_update - self.warmup_steps) / float(self.max_steps), self.power
            )
        return self.base_lr


class CosineScheduler(LRScheduler):
    """Cosine decay from ``base_lr`` to ``final_lr`` over ``max_update`` updates."""

    kind = "cosine"

    def __init__(self, max_update: int, base_lr: float = 0.01, final_lr: float = 0, warmup_steps: int = 0,
                 warmup_begin_lr: float = 0, warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.base_lr_orig = base_lr
        self._decay_over(max_update, final_lr)
        self._remember(
            dict(max_update=max_update, base_lr=base_lr, final_lr=final_lr, warmup_steps=warmup_steps,
                 warmup_begin_lr=warmup_begin_lr, warmup_mode=warmup_mode),
            dict(base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"),
        )

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * (
                1 + cos(pi * (num_update - self.warmup_steps) / self.max_steps)
            ) / 2
        return self.base_lr


SCHEDULES: dict[str, type[LRScheduler]] = {
    cls.kind: cls for cls in (FactorScheduler, MultiFactorScheduler, PolyScheduler, CosineScheduler)
}
#: Arguments each schedule takes in a spec string: name -> kind (``int``, ``float``, ``ints``, ``mode``).
SCHEDULE_ARGS: dict[str, dict[str, str]] = {
    "factor": {"step": "int", "factor": "float", "stop_factor_lr": "float"},
    "multifactor": {"step": "ints", "factor": "float"},
    "poly": {"max_update": "int", "pwr": "float", "final_lr": "float"},
    "cosine": {"max_update": "int", "final_lr": "float"},
}
_WARMUP_ARGS = {"base_lr": "float", "warmup_steps": "int", "warmup_begin_lr": "float", "warmup_mode": "mode"}
SCHEDULE_HELP = (
    "factor:step=N[:factor=F][:stop_factor_lr=F], multifactor:step=N1/N2/..[:factor=F], "
    "poly:max_update=N[:pwr=F][:final_lr=F], cosine:max_update=N[:final_lr=F]; "
    "each also takes warmup_steps=N, warmup_begin_lr=F, warmup_mode=linear|constant"
)


def parse_schedule(text: str, base_lr: float | None = None) -> LRScheduler:
    """``factor:step=100:factor=0.5`` -> a :class:`FactorScheduler` (``base_lr`` given
    separately is the optimizer's ``lr``)."""
    kind, *items = [part.strip() for part in text.split(":")]
    cls = SCHEDULES.get(kind.lower())
    if cls is None:
        raise UpdaterError(f"schedule {text!r}: unknown schedule {kind!r}; use {SCHEDULE_HELP}")
    allowed = {**SCHEDULE_ARGS[cls.kind], **_WARMUP_ARGS}
    kwargs: dict[str, Any] = {}
    for item in filter(None, items):
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep:
            raise UpdaterError(f"schedule {text!r}: {item!r} is not NAME=VALUE (e.g. {cls.kind}:step=100)")
        if name not in allowed:
            raise UpdaterError(f"schedule {text!r}: {cls.kind} has no argument {name!r}; use {', '.join(allowed)}")
        kwargs[name] = _value(allowed[name], raw.strip(), text)
    if base_lr is not None:
        kwargs.setdefault("base_lr", base_lr)
    required = {"factor": "step", "multifactor": "step", "poly": "max_update", "cosine": "max_update"}[cls.kind]
    if required not in kwargs:
        raise UpdaterError(f"schedule {text!r}: {cls.kind} needs {required}=N")
    return cls(**kwargs)


def _value(kind: str, raw: str, text: str) -> Any:
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind == "ints":
            return [int(v) for v in raw.split("/")]
    except ValueError:
        raise UpdaterError(f"schedule {text!r}: {raw!r} is not a {'list of whole numbers' if kind == 'ints' else kind}") from None
    if raw not in ("linear", "constant"):
        raise UpdaterError(f"schedule {text!r}: warmup_mode must be linear or constant, not {raw!r}")
    return raw


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)
