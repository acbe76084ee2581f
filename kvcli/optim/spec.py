"""Updater spec strings: ``name:arg=value,...`` <-> updater objects, and the help list.

``nag:lr=0.1,momentum=0.9``, ``adam:lr=0.01,schedule=cosine:max_update=1000:final_lr=0.001``,
``rmsprop:centered=true``, ``python:FILE.py:NAME`` ... The arguments of every optimizer come
from one table (each class's ``spec_params`` plus :data:`~kvcli.optim.base.COMMON_PARAMS`);
parsing, spec strings and :func:`spec_help` all read it.
"""

from __future__ import annotations

import inspect

import math
from typing import Any

from kvcli.errors import OptimizerArgumentError, UpdaterError
from kvcli.optim.base import Optimizer, check_optimizer
from kvcli.optim.checks import format_number
from kvcli.optim.checks import show_value as show_value  # re-exported: the CLI completes defaults with it
from kvcli.optim.lr_scheduler import SCHEDULE_HELP, parse_schedule
from kvcli.optim.params import COMMON_PARAMS, Param
from kvcli.optim.registry import builtin_optimizers as builtin_optimizers
from kvcli.optim.registry import registered
from kvcli.optim.simple import Assign, PythonUpdater, ScaleAdd, Sum, load_attribute

#: Other names accepted for an argument (MXNet's keyword names and common spellings).
ALIASES = {"learning_rate": "lr", "epsilon": "eps", "lr_scheduler": "schedule"}
_SIMPLE = "assign, sum, scale-add:K, python:FILE.py:NAME"
_BOOLS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


def params_of(cls: type[Optimizer]) -> tuple[Param, ...]:
    """Every spec argument of ``cls``: its own, then the common ones."""
    return (*cls.spec_params, *COMMON_PARAMS)


def spec_help() -> str:
    """The list of updaters and optimizer arguments that ``kvcli set-updater --help`` shows."""
    lines = [f"{_SIMPLE}, or an optimizer NAME:ARG=VALUE,ARG=VALUE,... (e.g. nag:lr=0.1,momentum=0.9); "
             "the optimizers and their arguments (defaults):"]
    for name, cls in builtin_optimizers().items():
        if cls.__name__ == "ccSGD":
            continue  # MXNet's deprecated alias of sgd; still accepted
        args = " ".join(f"{p.spec}={show_value(p.default)}" for p in cls.spec_params)
        lines.append(f"{name} {args}")
    common = " ".join(f"{p.spec}={show_value(p.default)}" for p in COMMON_PARAMS)
    lines.append(f"every optimizer also takes {common} schedule=KIND:ARG=V:... ({SCHEDULE_HELP})")
    return "  ·  ".join(lines)


def parse_updater(spec: str) -> Any:
    """Turn a spec string into an updater; raises :class:`UpdaterError` naming the fix."""
    text = spec.strip()
    name, _, rest = text.partition(":")
    name = name.strip().lower()
    if name == "assign" and not rest:
        return Assign()
    if name == "sum" and not rest:
        return Sum()
    if name == "scale-add":
        return ScaleAdd(_parse_number(rest, spec) if rest else 1.0)
    if name == "python":
        path, sep, attribute = rest.rpartition(":")
        if not sep or not path or not attribute:
            raise UpdaterError(f"updater spec {spec!r}: write python:FILE.py:FUNCTION")
        return python_updater(path, attribute)
    cls = registered().get(name)
    if cls is None:
        raise UpdaterError(
            f"updater spec {spec!r} does not parse: {name!r} is not an updater or optimizer; "
            f"use one of {_SIMPLE}, {', '.join(builtin_optimizers())}"
        )
    return cls(**_parse_args(cls, rest, spec))


def create_optimizer(name: str, **kwargs: Any) -> Optimizer:
    """MXNet's ``mx.optimizer.create(name, learning_rate=..., ...)`` (kvcli's spec names are
    accepted too, e.g. ``lr=``)."""
    cls = registered().get(str(name).lower())
    if cls is None:
        raise UpdaterError(f"unknown optimizer {name!r}: use one of {', '.join(sorted(registered()))}")
    if cls.__module__.startswith("kvcli.optim"):
        kwargs = {_kwarg(cls, k): v for k, v in kwargs.items()}
    return cls(**kwargs)


def as_optimizer(optimizer: Any) -> Any:
    """Accept what ``set_optimizer`` may be given: an optimizer, an updater, or a spec string."""
    return parse_updater(optimizer) if isinstance(optimizer, str) else check_optimizer(optimizer)


# ---------------------------------------------------------------------- helpers
def python_updater(path: str, attribute: str, source: bytes | None = None) -> Any:
    """The updater a ``python:PATH:NAME`` spec names: a function ``NAME(key, input, stored)``,
    or an Optimizer class (instantiated) or instance; ``source`` as for :func:`load_attribute`."""
    found = load_attribute(path, attribute, source)
    spec = f"python:{path}:{attribute}"
    if isinstance(found, type) and issubclass(found, Optimizer):
        try:
            opt = found()
        except Exception as error:  # user code: report
            raise UpdaterError(f"updater spec {spec!r}: {attribute}() failed: {type(error).__name__}: {error}") from None
    elif isinstance(found, Optimizer):
        opt = found
    else:
        return PythonUpdater(path, attribute, source)
    opt.__dict__["_kvcli_spec"] = spec
    return opt


def _param(cls: type[Optimizer], name: str, spec: str) -> Param:
    wanted = ALIASES.get(name, name)
    for p in params_of(cls):
        if wanted in (p.spec, p.kwarg) or name in (p.spec, p.kwarg):
            return p
    raise UpdaterError(
        f"updater spec {spec!r}: {cls.__name__.lower()} has no parameter {name!r}: use "
        + ", ".join([*(p.spec for p in params_of(cls)), "schedule"])
    )


_OBJECT_KWARGS = ("lr_scheduler", "param_idx2name", "sym", "param_dict")


def _kwarg(cls: type[Optimizer], name: str) -> str:
    """The constructor keyword for ``name`` (a keyword, a spec name or an alias)."""
    if name in _OBJECT_KWARGS or any(name == p.kwarg for p in params_of(cls)):
        return name
    try:
        return _param(cls, name, "").kwarg
    except UpdaterError:  # a TypeError too, as MXNet's constructor raises for an unknown keyword
        raise OptimizerArgumentError(
            f"{cls.__name__.lower()} has no parameter {name!r}: use "
            + ", ".join([*(p.kwarg for p in params_of(cls)), *_OBJECT_KWARGS])
        ) from None


def _parse_args(cls: type[Optimizer], text: str, spec: str) -> dict[str, Any]:
    builtin = cls.__module__.startswith("kvcli.optim")
    values: dict[str, Any] = {}
    schedule = None
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, raw = item.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep:
            raise UpdaterError(f"updater spec {spec!r}: {item!r} is not NAME=VALUE (e.g. {cls.__name__.lower()}:lr=0.1)")
        if ALIASES.get(name, name) == "schedule":
            schedule = raw
            continue
        if builtin:
            p = _param(cls, name, spec)
            values[p.kwarg] = _value(p, raw, spec)
        elif any(ALIASES.get(name, name) in (p.spec, p.kwarg) for p in params_of(Optimizer)):
            p = _param(Optimizer, name, spec)  # the base class's arguments, typed
            values[p.kwarg] = _value(p, raw, spec)
        else:  # a user's registered optimizer: pass numbers, booleans and words through
            values[name] = _loose(raw, spec)
    lr = values.get("learning_rate")
    if lr is not None and lr < 0:
        raise UpdaterError(f"updater spec {spec!r}: lr must not be negative, not {format_number(lr)}; give lr=0 or more")
    if schedule is not None:
        values["lr_scheduler"] = _schedule(cls, schedule, lr, spec)
    return values


def _schedule(cls: type[Optimizer], schedule: str, lr: float | None, spec: str) -> Any:
    """The spec's schedule, starting at the rate the optimizer will use. MXNet's rule: an
    optimizer's ``learning_rate`` (given, or its own default, e.g. Adam's 0.001) overrides the
    schedule's ``base_lr``; a spec that names a different ``base_lr`` would be silently
    overridden, so it is refused, naming the fix."""
    default = inspect.signature(cls.__init__).parameters.get("learning_rate")
    rate = lr if lr is not None else (None if default is None else default.default)
    scheduler = parse_schedule(schedule, rate)
    if rate is not None and scheduler.base_lr != rate:
        raise UpdaterError(
            f"updater spec {spec!r}: the schedule's base_lr={format_number(scheduler.base_lr)} would be overridden by "
            f"the optimizer's lr={format_number(rate)} (MXNet's rule); give lr={format_number(scheduler.base_lr)} "
            "instead of base_lr")
    return scheduler


def _value(p: Param, raw: str, spec: str) -> Any:
    if p.kind == "bool":
        if raw.lower() not in _BOOLS:
            raise UpdaterError(f"updater spec {spec!r}: {p.spec} must be true or false, not {raw!r}")
        return _BOOLS[raw.lower()]
    if p.kind == "str":
        if p.choices and raw not in p.choices:
            raise UpdaterError(f"updater spec {spec!r}: {p.spec} must be one of {', '.join(p.choices)}, not {raw!r}")
        return raw
    if p.kind == "optional" and raw.lower() == "none":
        return None
    number = _parse_number(raw, spec)
    if p.kind == "int":
        if not isinstance(number, int):
            raise UpdaterError(f"updater spec {spec!r}: {p.spec} must be a whole number, not {raw!r}")
        return number
    return float(number)


def _loose(raw: str, spec: str) -> Any:
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    if raw.lower() == "none":
        return None
    try:
        return _parse_number(raw, spec)
    except UpdaterError:
        return raw


def _parse_number(text: str, spec: str) -> float | int:
    text = text.strip()
    try:
        number: float | int = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            raise UpdaterError(f"updater spec {spec!r}: {text!r} is not a number") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise UpdaterError(f"updater spec {spec!r}: {text!r} is not a finite number")
    return number
