"""``import kvcli.mx.ndarray`` (MXNet's module path) gives the ``kvcli.nd`` module (``mx.nd``): the very same
module object, so ``kvcli.mx.ndarray is kvcli.nd``."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("kvcli.nd")
