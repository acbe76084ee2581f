"""The one table of optimizer arguments: each built-in's ``spec_params`` (plus
:data:`COMMON_PARAMS`) names its constructor arguments, their spec-string names, kinds,
defaults and help, and the constructor itself is made from it (:func:`init_from_spec`)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvcli.optim.base import Optimizer


@dataclass(frozen=True)
class Param:
    """One constructor argument as a spec string names it (the one table of arguments).

    ``kind`` is ``float``, ``int``, ``bool``, ``str`` or ``optional`` (a float or ``none``).
    """

    spec: str
    kwarg: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    #: The instance attribute holding the value, when it is not ``kwarg``.
    attr: str = ""
    #: Whether MXNet's constructor names it (positionally, in the table's order); if not, it
    #: reaches the base class through ``**kwargs`` and the base class's default applies.
    positional: bool = True

    @property
    def attribute(self) -> str:
        return self.attr or ("lr" if self.kwarg == "learning_rate" else self.kwarg)


COMMON_PARAMS: tuple[Param, ...] = (
    Param("wd", "wd", "float", 0.0, "L2 weight decay"),
    Param("rescale_grad", "rescale_grad", "float", 1.0, "multiply the gradient first"),
    Param("clip_gradient", "clip_gradient", "optional", None, "clip the gradient to [-c, c]"),
    Param("multi_precision", "multi_precision", "bool", False, "float32 master copy of float16 weights"),
    Param("begin_num_update", "begin_num_update", "int", 0, "initial update count"),
)


def lr_param(default: float | None, positional: bool = True) -> Param:
    """``learning_rate``; ``positional=False`` where MXNet's constructor leaves it to ``**kwargs``."""
    return Param("lr", "learning_rate", "float", default, "learning rate", positional=positional)


def eps_param(default: float, kwarg: str = "epsilon", attr: str = "") -> Param:
    return Param("eps", kwarg, "float", default, "small value that avoids division by zero", attr=attr)


def beta_params(beta1: float, beta2: float, second: str = "second-moment decay") -> tuple[Param, Param]:
    return (Param("beta1", "beta1", "float", beta1, "first-moment decay"),
            Param("beta2", "beta2", "float", beta2, second))


def momentum_param(default: float = 0.0) -> Param:
    return Param("momentum", "momentum", "float", default, "momentum")


LAZY_UPDATE = Param("lazy_update", "lazy_update", "bool", True, "row-sparse: update listed rows only")


def init_from_spec(cls: type["Optimizer"]) -> Any:
    """MXNet's constructor for a built-in, made from its ``spec_params`` (the one table of its
    arguments): the positional ones in the table's order, each stored on its attribute, the
    rest passed to the base class; then :meth:`Optimizer._post_init`."""
    named = tuple(p for p in cls.spec_params if p.positional)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(named):
            raise TypeError(f"{cls.__name__}() takes at most {len(named)} positional arguments ({len(args)} given)")
        values = {p.kwarg: p.default for p in named}
        for p, arg in zip(named, args):
            if p.kwarg in kwargs:
                raise TypeError(f"{cls.__name__}() got multiple values for argument {p.kwarg!r}")
            values[p.kwarg] = arg
        for p in named:
            if p.kwarg in kwargs:
                values[p.kwarg] = kwargs.pop(p.kwarg)
        if "learning_rate" in values:
            kwargs["learning_rate"] = values.pop("learning_rate")
        super(cls, self).__init__(**kwargs)
        for p in named:
            if p.kwarg in values:
                setattr(self, p.attribute, values[p.kwarg])
        self._post_init()

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # what help() shows
        [inspect.Parameter("self", kind), *(inspect.Parameter(p.kwarg, kind, default=p.default) for p in named),
         inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
    return __init__
