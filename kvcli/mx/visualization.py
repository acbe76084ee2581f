"""``mx.viz`` / ``mx.visualization`` (MXNet's module path ``kvcli.mx.visualization``):
``plot_network`` and ``print_summary`` of :mod:`kvcli.symbol.viz`."""

from kvcli.symbol.viz import *  # noqa: F403 - declared once in kvcli.symbol.viz
from kvcli.symbol.viz import __all__ as __all__
from kvcli.mx.scope import guard as _scope_guard


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
