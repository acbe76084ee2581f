"""Updaters: how a push changes a stored value, as persistable spec strings.

An updater is called as ``updater(key, merged, stored)`` and changes ``stored`` in place
(MXNet's signature). The built-in ones are named by a spec string that survives a restart:

==========================  ==================================================================
``assign``                  stored = merged (the default)
``sum``                     stored += merged
``scale-add:K``             stored += K * merged (the seed tutorial's custom updater, K=2)
``sgd:lr=0.1,momentum=0.9`` MXNet 1.9.1's SGD (also ``wd``, ``rescale_grad``, ``clip_gradient``)
``adam:lr=0.001,...``       MXNet 1.9.1's Adam (``beta1``, ``beta2``, ``eps``, ``wd``, ...)
``python:FILE.py:FUNC``     FUNC(key, merged, stored) from FILE.py, loaded only when named
==========================  ==================================================================

Optimizer state (momentum, Adam moments, step counts) is saved with :func:`save_state` as a
``.npz`` archive that is read back without pickle.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, ClassVar

import numpy as np

from kvcli.errors import OptimizerStateError, UpdaterError

Key = Any  # int | str, as in kvcli.store.base

STATE_FORMAT = 1


class Updater:
    """Base of the built-in updaters: a callable with a spec string and (maybe) state."""

    #: The spec name (``sum``, ``sgd``, ...).
    name: ClassVar[str] = ""

    @property
    def spec(self) -> str:
        """The spec string that re-creates this updater with :func:`parse_updater`."""
        return self.name

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        raise NotImplementedError

    def reset(self, key: Key) -> None:
        """Forget per-key state (the key was re-initialised or deleted)."""

    def __repr__(self) -> str:
        return f"<updater {self.spec}>"


class Assign(Updater):
    """stored = merged (MXNet's default when no updater is set)."""

    name = "assign"

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        np.copyto(stored, merged)


class Sum(Updater):
    """stored += merged: every push accumulates."""

    name = "sum"

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        np.add(stored, merged, out=stored)


class ScaleAdd(Updater):
    """stored += factor * merged."""

    name = "scale-add"

    def __init__(self, factor: float = 1.0) -> None:
        self.factor = factor

    @property
    def spec(self) -> str:
        return f"scale-add:{_format_number(self.factor)}"

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        if isinstance(self.factor, float) and stored.dtype.kind in "iub":
            raise UpdaterError(
                f"scale-add:{self.factor} cannot update key {key!r} of dtype {stored.dtype} in place: "
                "use a whole factor or init the key with a float array"
            )
        np.add(stored, merged * self.factor, out=stored, casting="same_kind")


class Optimizer(Updater):
    """An updater with per-key state and MXNet's common hyper-parameters.

    ``rescale_grad`` multiplies the pushed gradient first; ``clip_gradient`` (when set and
    non-zero, as in MXNet) then clips it to ``[-clip, clip]``; ``wd`` is L2 weight decay.
    """

    #: Hyper-parameters in spec order: (spec name, attribute, default).
    params: ClassVar[tuple[tuple[str, str, float | None], ...]] = ()
    #: Names of the per-key state arrays.
    state_names: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **hyper: float | None) -> None:
        for spec_name, attribute, default in self.params:
            value = hyper.pop(attribute, default)
            setattr(self, attribute, None if value is None else float(value))
        if hyper:
            raise UpdaterError(
                f"{self.name} has no parameter {sorted(hyper)[0]!r}: use "
                + ", ".join(spec for spec, _, _ in self.params)
            )
        self.states: dict[Key, dict[str, np.ndarray]] = {}
        self.counts: dict[Key, int] = {}

    @property
    def spec(self) -> str:
        parts = []
        for spec_name, attribute, default in self.params:
            value = getattr(self, attribute)
            if value != default:
                parts.append(f"{spec_name}={_format_number(value)}")
        return self.name + (":" + ",".join(parts) if parts else "")

    def reset(self, key: Key) -> None:
        self.states.pop(key, None)
        self.counts.pop(key, None)

    def _gradient(self, merged: np.ndarray) -> np.ndarray:
        grad = merged * self.rescale_grad
        if self.clip_gradient:  # MXNet: 0 and None both mean "no clipping"
            np.clip(grad, -self.clip_gradient, self.clip_gradient, out=grad)
        return grad

    def _state(self, key: Key, weight: np.ndarray) -> dict[str, np.ndarray]:
        state = self.states.get(key)
        if state is None or any(a.shape != weight.shape for a in state.values()):
            state = {name: np.zeros_like(weight) for name in self.state_names}
            self.states[key] = state
        return state

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        if stored.dtype.kind != "f":
            raise UpdaterError(
                f"{self.name} cannot update key {key!r} of dtype {stored.dtype}: "
                "optimizers need float weights; init the key with a float array"
            )
        self.counts[key] = self.counts.get(key, 0) + 1
        self.step(key, merged, stored, self._state(key, stored))

    def step(self, key: Key, grad: np.ndarray, weight: np.ndarray, state: dict[str, np.ndarray]) -> None:
        raise NotImplementedError

    # -- state ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Per-key state arrays and step counts (copies)."""
        return {
            "states": {k: {n: a.copy() for n, a in s.items()} for k, s in self.states.items()},
            "counts": dict(self.counts),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Replace the state with ``state`` (as from :meth:`state_dict`)."""
        self.states = {k: {n: np.array(a) for n, a in s.items()} for k, s in state["states"].items()}
        self.counts = {k: int(c) for k, c in state["counts"].items()}


_COMMON = (("wd", "wd", 0.0), ("rescale_grad", "rescale_grad", 1.0), ("clip_gradient", "clip_gradient", None))


class SGD(Optimizer):
    """MXNet 1.9.1's SGD (``sgd_update`` / ``sgd_mom_update``).

    Without momentum: ``w = (1 - lr*wd) * w - lr * g``. With momentum:
    ``m = momentum*m - lr*wd*w - lr*g; w += m``, where ``g`` is the rescaled, clipped gradient.
    """

    name = "sgd"
    params = (("lr", "learning_rate", 0.01), ("momentum", "momentum", 0.0), *_COMMON)
    learning_rate: float
    momentum: float
    wd: float
    rescale_grad: float
    clip_gradient: float | None

    @property
    def state_names(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("momentum",) if self.momentum > 0 else ()

    def step(self, key: Key, grad: np.ndarray, weight: np.ndarray, state: dict[str, np.ndarray]) -> None:
        lr, wd = self.learning_rate, self.wd
        g = self._gradient(grad)
        if self.momentum > 0:
            mom = state["momentum"]
            mom *= self.momentum
            mom -= lr * wd * weight
            mom -= lr * g
            weight += mom
        else:
            weight[...] = (1 - lr * wd) * weight - lr * g


class Adam(Optimizer):
    """MXNet 1.9.1's Adam (``adam_update`` with the bias correction folded into lr).

    ``g = rescale*grad + wd*w`` (then clipped); ``m = b1*m + (1-b1)*g``;
    ``v = b2*v + (1-b2)*g*g``; ``w -= lr_t * m / (sqrt(v) + eps)`` with
    ``lr_t = lr * sqrt(1 - b2**t) / (1 - b1**t)``.
    """

    name = "adam"
    params = (
        ("lr", "learning_rate", 0.001),
        ("beta1", "beta1", 0.9),
        ("beta2", "beta2", 0.999),
        ("eps", "epsilon", 1e-8),
        *_COMMON,
    )
    state_names = ("mean", "var")
    learning_rate: float
    beta1: float
    beta2: float
    epsilon: float
    wd: float
    rescale_grad: float
    clip_gradient: float | None

    def step(self, key: Key, grad: np.ndarray, weight: np.ndarray, state: dict[str, np.ndarray]) -> None:
        t = self.counts[key]
        lr = self.learning_rate * math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)
        g = grad * self.rescale_grad + self.wd * weight
        if self.clip_gradient:
            np.clip(g, -self.clip_gradient, self.clip_gradient, out=g)
        mean, var = state["mean"], state["var"]
        mean *= self.beta1
        mean += (1.0 - self.beta1) * g
        var *= self.beta2
        var += (1.0 - self.beta2) * np.square(g)
        weight -= lr * mean / (np.sqrt(var) + self.epsilon)


class PythonUpdater(Updater):
    """``FUNC(key, merged, stored)`` loaded from a Python file named in the spec."""

    name = "python"

    def __init__(self, path: str, function: str, source: bytes | None = None) -> None:
        """``source``: the file's bytes, already read and checked by the caller (a session
        verifies them against its trust record); None reads ``path`` here."""
        self.path = path
        self.function_name = function
        self.function = _load_function(path, function, source)

    @property
    def spec(self) -> str:
        return f"python:{self.path}:{self.function_name}"

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        self.function(key, merged, stored)


OPTIMIZERS: dict[str, type[Optimizer]] = {"sgd": SGD, "adam": Adam}
_ALIASES = {"learning_rate": "lr", "epsilon": "eps"}
SPEC_HELP = "assign, sum, scale-add:K, sgd:lr=0.1,momentum=0.9, adam:lr=0.001, python:FILE.py:FUNC"


def parse_updater(spec: str) -> Updater:
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
    if name in OPTIMIZERS:
        return OPTIMIZERS[name](**_parse_params(OPTIMIZERS[name], rest, spec))
    if name == "python":
        path, sep, function = rest.rpartition(":")
        if not sep or not path or not function:
            raise UpdaterError(f"updater spec {spec!r}: write python:FILE.py:FUNCTION")
        return PythonUpdater(path, function)
    raise UpdaterError(f"updater spec {spec!r} does not parse: use one of {SPEC_HELP}")


def create_optimizer(name: str, **kwargs: float | None) -> Optimizer:
    """MXNet's ``mx.optimizer.create(name, learning_rate=..., ...)``."""
    cls = OPTIMIZERS.get(name.lower())
    if cls is None:
        raise UpdaterError(f"unknown optimizer {name!r}: use one of {', '.join(OPTIMIZERS)}")
    attributes = {_attribute_of(cls, k): v for k, v in kwargs.items()}
    return cls(**attributes)


def as_optimizer(optimizer: Any) -> Updater:
    """Accept what ``set_optimizer`` may be given: an updater, a spec string, or a name."""
    if isinstance(optimizer, Updater):
        return optimizer
    if isinstance(optimizer, str):
        return parse_updater(optimizer)
    raise UpdaterError(
        f"set_optimizer takes an optimizer (kvcli.mx.optimizer.SGD(...)) or a spec string like "
        f"'sgd:lr=0.1', not {type(optimizer).__name__}"
    )


def save_state(updater: Any, path: Path, include_spec: bool = False) -> None:
    """Write ``updater``'s state to ``path`` (``.npz``, pickle-free, atomic replace)."""
    state = updater.state_dict()
    keys = sorted(set(state["states"]) | set(state["counts"]), key=lambda k: (isinstance(k, str), k))
    meta = {
        "format": STATE_FORMAT,
        "updater": updater.name,
        "spec": updater.spec if include_spec else None,
        "keys": [[type(k).__name__, k] for k in keys],
        "counts": [state["counts"].get(k, 0) for k in keys],
    }
    arrays = {"__meta__": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
    for index, key in enumerate(keys):
        for name, array in state["states"].get(key, {}).items():
            arrays[f"state/{index}/{name}"] = array
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_state(path: Path, updater: Any) -> Any:
    """Read a file written by :func:`save_state` into ``updater`` (or the one it names).

    Returns the updater that now holds the state.
    """
    try:
        with np.load(path, allow_pickle=False) as archive:
            meta = json.loads(bytes(archive["__meta__"]).decode())
            arrays = {name: archive[name] for name in archive.files if name != "__meta__"}
    except FileNotFoundError:
        raise OptimizerStateError(f"optimizer state file {str(path)!r} does not exist") from None
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as error:
        raise OptimizerStateError(
            f"{str(path)!r} is not an optimizer state file written by kvcli ({error})"
        ) from None
    if meta.get("format") != STATE_FORMAT:
        raise OptimizerStateError(f"{str(path)!r} has state format {meta.get('format')!r}; expected {STATE_FORMAT}")
    if meta.get("spec"):
        updater = parse_updater(meta["spec"])
    if updater is None or not hasattr(updater, "load_state_dict"):
        raise OptimizerStateError(
            f"cannot load {str(path)!r}: set the optimizer first (set_optimizer or set_updater('{meta['updater']}:...'))"
        )
    if updater.name != meta["updater"]:
        raise OptimizerStateError(
            f"{str(path)!r} holds {meta['updater']} state but the updater is {updater.name}: "
            f"set_updater('{meta['updater']}:...') first"
        )
    keys = [int(k) if kind == "int" else str(k) for kind, k in meta["keys"]]
    states: dict[Key, dict[str, np.ndarray]] = {}
    for name, array in arrays.items():
        _, index, state_name = name.split("/", 2)
        states.setdefault(keys[int(index)], {})[state_name] = array
    updater.load_state_dict({"states": states, "counts": dict(zip(keys, meta["counts"]))})
    return updater


# ---------------------------------------------------------------------- helpers
def _attribute_of(cls: type[Optimizer], name: str) -> str:
    spec_name = _ALIASES.get(name, name)
    for spec, attribute, _ in cls.params:
        if spec_name in (spec, attribute):
            return attribute
    raise UpdaterError(
        f"{cls.name} has no parameter {name!r}: use " + ", ".join(spec for spec, _, _ in cls.params)
    )


def _parse_params(cls: type[Optimizer], text: str, spec: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, raw = item.partition("=")
        if not sep:
            raise UpdaterError(f"updater spec {spec!r}: {item!r} is not NAME=VALUE (e.g. {cls.name}:lr=0.1)")
        values[_attribute_of(cls, name.strip())] = _parse_number(raw, spec)
    return values


def _parse_number(text: str, spec: str) -> float:
    text = text.strip()
    try:
        number = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            raise UpdaterError(f"updater spec {spec!r}: {text!r} is not a number") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise UpdaterError(f"updater spec {spec!r}: {text!r} is not a finite number")
    return number


def _format_number(value: float | None) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


#: Modules of python updaters by (path, sha256 of their source): each is run once per
#: process, not again on every set_updater or push; changed code is a new entry.
_MODULES: dict[tuple[str, str], Any] = {}


def _load_function(path: str, function: str, source: bytes | None = None) -> Callable[..., Any]:
    import hashlib
    import types

    file = Path(path).expanduser()
    if source is None:
        if not file.is_file():
            raise UpdaterError(f"updater file {path!r} does not exist: give the path of a .py file")
        try:
            source = file.read_bytes()
        except OSError as error:
            raise UpdaterError(f"updater file {path!r} cannot be read ({error.strerror})") from None
    cache_key = (str(file), hashlib.sha256(source).hexdigest())
    module = _MODULES.get(cache_key)
    if module is None:
        module = types.ModuleType(f"kvcli_user_updater_{cache_key[1][:16]}")
        module.__file__ = str(file)
        try:  # compiled from the bytes given, so what runs is what was checked
            exec(compile(source, str(file), "exec"), module.__dict__)
        except Exception as error:  # user code: report, do not crash
            raise UpdaterError(f"updater file {path!r} failed to load: {type(error).__name__}: {error}") from None
        _MODULES[cache_key] = module
    found = getattr(module, function, None)
    if not callable(found):
        raise UpdaterError(f"updater file {path!r} has no function {function!r}: define def {function}(key, input, stored)")
    return found
