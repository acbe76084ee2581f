"""kvcli.mx's scope at run time: MXNet names kvcli does not provide raise one error saying so.

:mod:`kvcli.mx.scope_table` declares, for every public name of the MXNet 1.9.1 modules kvcli.mx
provides, whether kvcli supports it. This module applies it:

* :func:`guard` is a module's ``__getattr__``: a declared-unsupported name (``mx.gluon``,
  ``mx.nd.crop``) raises :class:`~kvcli.errors.OutOfScopeError` with the table's advice;
* :func:`install_import_guard` makes ``import kvcli.mx.gluon`` and ``from kvcli.mx.ndarray
  import crop`` raise the same message (:class:`~kvcli.errors.OutOfScopeImportError`);
* :mod:`kvcli.mx.docs` writes the compatibility page, ``docs/mxnet.md``, from the table.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from functools import cache
from typing import Any, Callable, Mapping, MutableMapping, Optional, Sequence

from kvcli.errors import OutOfScopeError, OutOfScopeImportError
from kvcli.mx.scope_table import TABLE, Module, Unsupported

_PREFIX = "kvcli.mx"


@cache
def modules() -> dict[str, Module]:
    """The table's modules by kvcli module name (``kvcli.mx.ndarray``)."""
    return {m.kvcli: m for m in TABLE}


@cache
def _unsupported() -> dict[tuple[str, str], Unsupported]:
    return {(m.kvcli, name): g for m in TABLE for g in m.unsupported for name in g.names}


def mxnet_path(kvcli_module: str, name: str) -> str:
    """``mxnet.ndarray.crop`` for (``kvcli.mx.ndarray``, ``crop``)."""
    return "mxnet" + kvcli_module[len(_PREFIX):] + "." + name


def why_not(kvcli_module: str, name: str) -> Optional[str]:
    """The one-line error for a declared-unsupported name of a kvcli.mx module, else None."""
    found = _unsupported().get((kvcli_module, name))
    if found is None:
        return None
    return f"{mxnet_path(kvcli_module, name)} is outside kvcli's scope: {found.advice}"


def out_of_scope(kvcli_module: str, name: str) -> OutOfScopeError:
    """The error for a declared-unsupported name (it must be one: see :func:`why_not`)."""
    message = why_not(kvcli_module, name)
    assert message is not None, (kvcli_module, name)
    return OutOfScopeError(message, module=mxnet_path(kvcli_module, name).rpartition(".")[0], name=name)


def guard(module_name: str, lazy: Mapping[str, str] | None = None,
          namespace: MutableMapping[str, Any] | None = None) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` (PEP 562) for ``module_name``: names in ``lazy`` are
    submodules imported on first use (cached in ``namespace``, the module's ``globals()``);
    a name the scope table declares unsupported raises its :class:`OutOfScopeError`; any
    other missing name is an ``AttributeError`` as usual."""

    module = sys.modules.get(module_name)
    if module is not None and not hasattr(module, "__path__"):
        # an empty package path makes ``from kvcli.mx.optimizer import NDabs`` ask the import
        # guard (Python asks it only for packages), so that statement gets the scope error too
        # rather than Python's own "cannot import name"; no submodule is ever found there
        module.__path__ = []

    def __getattr__(name: str) -> Any:
        if lazy is not None and name in lazy:
            module = importlib.import_module(lazy[name])
            if namespace is not None:
                namespace[name] = module
            return module
        if why_not(module_name, name) is not None:
            raise out_of_scope(module_name, name)
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    return __getattr__


class _ImportGuard(importlib.abc.MetaPathFinder):
    """Refuses ``import kvcli.mx.<name>`` of a declared-unsupported name with its message (an
    ``ImportError``, as an import statement raises); finds nothing else (the usual finders do)."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Any = None
                  ) -> Optional[importlib.machinery.ModuleSpec]:
        package, _, name = fullname.rpartition(".")
        if package.startswith(_PREFIX):
            message = why_not(package, name)
            if message is not None:
                raise OutOfScopeImportError(message, name=fullname)
        return None


def install_import_guard() -> None:
    """Put the import guard on ``sys.meta_path`` (once): it only answers for kvcli.mx names."""
    if not any(isinstance(finder, _ImportGuard) for finder in sys.meta_path):
        sys.meta_path.append(_ImportGuard())
