"""``mx.viz`` / ``mx.visualization`` (MXNet's module path ``kvcli.mx.visualization``):
``plot_network`` and ``print_summary`` of :mod:`kvcli.symbol.viz`."""

from kvcli.symbol.viz import *  # noqa: F403 - declared once in kvcli.symbol.viz
from kvcli.symbol.viz import __all__ as __all__
