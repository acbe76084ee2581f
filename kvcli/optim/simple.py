"""The stateless updaters (``assign``, ``sum``, ``scale-add:K``) and user code from a file
(``python:FILE.py:NAME``: a function, an Optimizer subclass, or an Optimizer instance)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, ClassVar

import numpy as np

from kvcli.errors import UpdaterError
from kvcli.arrays.core import Key
from kvcli.optim.checks import format_number


class StoreUpdater:
    """Base of the built-in non-optimizer updaters: a callable with a spec string."""

    #: The spec name (``sum``, ``scale-add``, ...).
    name: ClassVar[str] = ""

    @property
    def spec(self) -> str:
        """The spec string that re-creates this updater with ``parse_updater``."""
        return self.name

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        raise NotImplementedError

    def reset(self, key: Key) -> None:
        """Forget per-key state (the key was re-initialised or deleted)."""

    def __repr__(self) -> str:
        return f"<updater {self.spec}>"


class Assign(StoreUpdater):
    """stored = merged (MXNet's default when no updater is set)."""

    name = "assign"

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        np.copyto(stored, merged)


class Sum(StoreUpdater):
    """stored += merged: every push accumulates."""

    name = "sum"

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        np.add(stored, merged, out=stored)


class ScaleAdd(StoreUpdater):
    """stored += factor * merged."""

    name = "scale-add"

    def __init__(self, factor: float = 1.0) -> None:
        self.factor = factor

    @property
    def spec(self) -> str:
        return f"scale-add:{format_number(self.factor)}"

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        if isinstance(self.factor, float) and stored.dtype.kind in "iub":
            raise UpdaterError(
                f"scale-add:{self.factor} cannot update key {key!r} of dtype {stored.dtype} in place: "
                "use a whole factor or init the key with a float array"
            )
        np.add(stored, merged * self.factor, out=stored, casting="same_kind")


class PythonUpdater(StoreUpdater):
    """``FUNC(key, merged, stored)`` loaded from a Python file named in the spec."""

    name = "python"

    def __init__(self, path: str, function: str, source: bytes | None = None) -> None:
        """``source``: the file's bytes, already read and checked by the caller (a session
        verifies them against its trust record); None reads ``path`` here."""
        self.path = path
        self.function_name = function
        self.function = load_attribute(path, function, source)
        if not callable(self.function):
            raise UpdaterError(f"updater file {path!r}: {function!r} is not callable; define def {function}(key, input, stored)")

    @property
    def spec(self) -> str:
        return f"python:{self.path}:{self.function_name}"

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        self.function(key, merged, stored)


#: Modules of python updaters by (path, sha256 of their source): each is run once per
#: process, not again on every set_updater or push; changed code is a new entry.
_MODULES: dict[tuple[str, str], Any] = {}


def load_attribute(path: str, attribute: str, source: bytes | None = None) -> Any:
    """``attribute`` of the Python file ``path``, compiled from ``source`` when given (so
    what runs is what was checked), else from the file; each version runs once per process."""
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
        try:
            exec(compile(source, str(file), "exec"), module.__dict__)
        except Exception as error:  # user code: report, do not crash
            raise UpdaterError(f"updater file {path!r} failed to load: {type(error).__name__}: {error}") from None
        _MODULES[cache_key] = module
    found = getattr(module, attribute, None)
    if found is None:
        raise UpdaterError(
            f"updater file {path!r} has no function {attribute!r}: define def {attribute}(key, input, stored) "
            "or an Optimizer subclass of that name"
        )
    return found


UpdaterFn = Callable[[Key, np.ndarray, np.ndarray], None]
