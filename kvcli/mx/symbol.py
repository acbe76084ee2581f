"""``mx.sym`` / ``mx.symbol`` (MXNet's module path ``kvcli.mx.symbol``): every public name of
:mod:`kvcli.symbol.build`, which implements MXNet's symbol API."""

from kvcli.symbol.build import *  # noqa: F403 - the symbol API, declared once in kvcli.symbol.build
from kvcli.symbol.build import __all__ as __all__
