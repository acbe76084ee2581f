"""MXNet attribute strings: parse them (``"(3, 3)"``, ``"True"``, ``"[1,2]"``) and write them.

MXNet stores every operator parameter as a string in the JSON; each era spelled them a bit
differently (``"(3,3)"``, ``"[3, 3]"``, ``"3"`` for a 1-tuple, ``"1"``/``"True"`` for a bool).
These helpers accept all of them so the shape rules can stay simple.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Mapping, Optional

from kvcli.errors import AttrError, SymbolError

_INT_RE = re.compile(r"-?\d+")
_NUM_RE = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


# The names Attrs.int and Attrs.float shadow the builtins inside the class body.
_Int = int
_Float = float


class Attrs:
    """Typed read access to one node's string attributes.

    ``Attrs(node.attrs).int("num_hidden")`` raises :class:`AttrError` when the attribute is
    missing and no default is given, so a malformed file becomes one clear message.
    """

    __slots__ = ("_raw",)

    def __init__(self, raw: Mapping[str, str]) -> None:
        self._raw = raw

    def __contains__(self, key: str) -> bool:
        value = self._raw.get(key)
        return value is not None and str(value).strip() not in ("", "None")

    def get(self, key: str, default: Optional[str] = None) -> Optional[str]:
        value = self._raw.get(key)
        return default if value is None else str(value)

    def _need(self, key: str) -> str:
        if key not in self:
            raise AttrError(f"missing attribute '{key}'")
        return str(self._raw[key]).strip()

    def int(self, key: str, default: Optional[int] = None) -> int:
        return self._number(key, default, lambda text: int(float(text)), "an integer")

    def _number(self, key: str, default: Any, convert: Any, kind: str) -> Any:
        if key not in self:
            if default is None:
                raise AttrError(f"missing attribute '{key}'")
            return default
        text = self._need(key)
        try:
            return convert(text)
        except (ValueError, OverflowError):
            raise AttrError(f"attribute '{key}' should be {kind}, got {text!r}") from None

    def float(self, key: str, default: Optional[float] = None) -> float:
        return self._number(key, default, float, "a number")

    def bool(self, key: str, default: bool = False) -> bool:
        if key not in self:
            return default
        text = self._need(key).lower()
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise AttrError(f"attribute '{key}' should be True or False, got {text!r}")

    def ints(self, key: str, default: Optional[tuple[_Int, ...]] = None) -> tuple[_Int, ...]:
        """A tuple of ints: ``"(3, 3)"``, ``"[3,3]"``, ``"3"`` and ``"(3,)"`` all work."""
        if key not in self:
            if default is None:
                raise AttrError(f"missing attribute '{key}'")
            return default
        return parse_int_tuple(self._need(key), key)

    def optional_ints(self, key: str) -> Optional[tuple[_Int, ...]]:
        """Like :meth:`ints` but ``None`` (and ``"()"``) when absent or empty."""
        if key not in self:
            return None
        value = parse_int_tuple(self._need(key), key)
        return value or None

    def floats(self, key: str, default: tuple[_Float, ...] = ()) -> tuple[_Float, ...]:
        if key not in self:
            return default
        return tuple(float(x) for x in _NUM_RE.findall(self._need(key)))

    def str(self, key: str, default: Optional[str] = None) -> str:
        if key not in self:
            if default is None:
                raise AttrError(f"missing attribute '{key}'")
            return default
        return self._need(key)


#: digits past which an integer attribute is refused unparsed (int64 has 19; larger ones are
#: refused later with their value, so only absurd lengths stop here)
_MAX_INT_CHARS = 64


def parse_int_tuple(text: str, key: str = "value") -> tuple[_Int, ...]:
    """``"(1, -1, 0)"`` → ``(1, -1, 0)``; refuses anything that is not a list of integers."""
    body = text.strip().strip("()[]").replace(" ", "")
    if not body:
        return ()
    parts = [p for p in body.split(",") if p != ""]
    out = []
    for part in parts:
        if part.endswith("L"):  # Python 2 longs in some old files: "(1L, 3L)"
            part = part[:-1]
        if not _INT_RE.fullmatch(part):
            raise AttrError(f"attribute '{key}' should be a tuple of integers, got {text!r}")
        if len(part) > _MAX_INT_CHARS:  # Python refuses to parse over 4,300 digits; MXNet's are int64
            raise AttrError(f"attribute '{key}' holds an integer of {len(part):,} digits; MXNet's are 64-bit")
        out.append(int(part))
    return tuple(out)


def parse_shape_hint(text: str) -> Optional[tuple[_Int, ...]]:
    """A ``__shape__`` hint such as ``"(10, 0, 5, 5)"`` (0 = unknown dim); ``None`` if unparsable."""
    try:
        return parse_int_tuple(text, "__shape__")
    except AttrError:
        return None


def format_value(value: Any) -> str:
    """Write a Python value the way MXNet's Python frontend stores it in the JSON."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if hasattr(value, "__name__") and not isinstance(value, str):  # numpy dtypes, e.g. np.float32
        return str(value.__name__)
    return str(value)


# ----------------------------------------------------------------------------- hidden keys
#: MXNet's hidden attribute keys (``kHiddenKeys`` of its C API): given plainly (``attr=``,
#: :class:`AttrScope`, ``Variable(attr=)``, ``_set_attr``) each is stored as ``__key__``, and
#: ``list_attr`` / ``attr_dict`` / ``attr`` show it under both names.
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")


def stored_key(key: str, value: Any, exact: bool = False) -> str:
    """The key MXNet stores an attribute under: ``__lr_mult__`` for ``lr_mult`` (for an
    operator's attributes, any key that starts with a hidden key; with ``exact``, as for
    ``Variable`` and ``_set_attr``, the hidden key itself); a key that ends with one
    (``fc1_weight_lr_mult``) is refused with MXNet's advice."""
    for hidden in HIDDEN_KEYS:
        if key == hidden or (key.startswith(hidden) and not exact):
            return f"__{key}__"
        if key.endswith(hidden) and key != hidden:
            # from Variable, ``key=fc1_weight_lr_mult`` -> the input ``fc1_weight`` and ``lr_mult``
            raise SymbolError(f"setting variable attributes with {key} is deprecated: use "
                              f"w = Variable(name, {hidden}={value}) and give it as the operator's input "
                              f"{key[:len(key) - len(hidden) - 1]}=w")
    return key


def with_plain_keys(attrs: Mapping[str, str]) -> dict[str, str]:
    """``attrs`` plus each stored hidden key under its plain name (MXNet's ``list_attr``)."""
    listed = dict(attrs)
    for hidden in HIDDEN_KEYS:
        stored = f"__{hidden}__"
        if stored in attrs:
            listed[hidden] = attrs[stored]
    return listed


class AttrScope:
    """MXNet's ``mx.AttrScope``: attributes every symbol made inside ``with AttrScope(...):``
    gets (operators, the variables they create, and ``Variable``); nested scopes add to the
    outer one's, and an ``attr=`` given to a symbol wins over the scope's."""

    _current = threading.local()

    def __init__(self, **kwargs: str) -> None:
        self._old_scope: Optional[AttrScope] = None
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise SymbolError(f"AttrScope: attribute {key} must be a string, not {type(value).__name__}: "
                                  f"write {key}={str(value)!r}")
        self._attr = kwargs

    def get(self, attr: Optional[Mapping[str, str]]) -> dict[str, str]:
        """The scope's attributes updated with ``attr`` (those given to the symbol)."""
        merged = dict(self._attr)
        merged.update(attr or {})
        return merged

    @classmethod
    def active(cls) -> "AttrScope":
        """The scope in force in this thread (an empty one outside any ``with``)."""
        scope = getattr(cls._current, "value", None)
        if scope is None:
            scope = cls._current.value = AttrScope()
        return scope

    def __enter__(self) -> "AttrScope":
        self._old_scope = AttrScope.active()
        self._attr = {**self._old_scope._attr, **self._attr}
        AttrScope._current.value = self
        return self

    def __exit__(self, *exc: object) -> None:
        AttrScope._current.value = self._old_scope
