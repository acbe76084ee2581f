"""Submodules imported on first use (PEP 562), so that ``import kvcli.mx`` / ``kvcli.mx.ndarray``
stay light: the one implementation of a package's lazy ``__getattr__``."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping, MutableMapping


def submodule_getattr(package: str, table: Mapping[str, str],
                      namespace: MutableMapping[str, Any]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: ``table`` maps an attribute name to the
    module it imports; the module is cached in ``namespace`` (the package's ``globals()``)."""

    def __getattr__(name: str) -> Any:
        if name in table:
            module = importlib.import_module(table[name])
            namespace[name] = module
            return module
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
