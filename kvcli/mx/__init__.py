"""MXNet-style shim: ``import kvcli.mx as mx`` runs KVStore and visualisation code written
for MXNet with only the import line changed.

``mx.kv.create``, ``mx.cpu(i)`` / ``mx.gpu(i)``, ``mx.nd``, ``mx.optimizer``, and (loaded on
first use) ``mx.sym`` / ``mx.symbol`` and ``mx.viz``.
"""

from __future__ import annotations

import importlib
from typing import Any

from kvcli import __version__
from kvcli import nd
from kvcli.mx import kv, optimizer
from kvcli.mx import lr_scheduler  # noqa: E402
from kvcli.nd import Context, cpu, current_context, gpu

kvstore = kv
ndarray = nd

_LAZY = {"sym": "kvcli.symbol.build", "symbol": "kvcli.symbol.build", "viz": "kvcli.symbol.viz"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        globals()[name] = module
        return module
    raise AttributeError(f"module 'kvcli.mx' has no attribute {name!r}")


__all__ = [
    "Context", "__version__", "cpu", "current_context", "gpu", "kv", "kvstore", "nd", "ndarray",
    "lr_scheduler", "optimizer", "sym", "symbol", "viz",
]
