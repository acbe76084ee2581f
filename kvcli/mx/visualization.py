"""``import kvcli.mx.visualization`` (MXNet's module path) gives ``kvcli.symbol.viz`` (``mx.viz``): the very same
module object, so ``kvcli.mx.visualization is kvcli.symbol.viz``."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("kvcli.symbol.viz")
