"""``import kvcli.mx.kvstore`` (MXNet's module path) gives the ``mx.kv`` module
(``create``, ``KVStore``, ``KVStoreBase``): the very same module object, so ``kvcli.mx.kvstore is kvcli.mx.kv``."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("kvcli.mx.kv")
