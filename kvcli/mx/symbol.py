"""``import kvcli.mx.symbol`` (MXNet's module path) gives ``kvcli.symbol.build`` (``mx.sym``): the very same
module object, so ``kvcli.mx.symbol is kvcli.symbol.build``."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("kvcli.symbol.build")
