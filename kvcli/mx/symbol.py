"""``mx.sym`` / ``mx.symbol`` (MXNet's module path ``kvcli.mx.symbol``): every public name of
:mod:`kvcli.symbol.build`, which implements MXNet's symbol API."""

from kvcli.symbol.build import *  # noqa: F403 - the symbol API, declared once in kvcli.symbol.build
from kvcli.symbol.build import __all__ as __all__
from kvcli.mx.scope import guard as _scope_guard


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
