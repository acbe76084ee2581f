"""MXNet-style shim: ``import kvcli.mx as mx`` runs KVStore and visualisation code written
for MXNet with only the import line changed.

Loaded at once: ``mx.kv`` (= ``mx.kvstore``), ``mx.nd`` (= ``mx.ndarray``), ``mx.optimizer``,
``mx.cpu(i)`` / ``mx.gpu(i)`` / ``mx.Context`` / ``mx.current_context``, ``mx.MXNetError``.
Loaded on first use (see :data:`_LAZY`): ``mx.sym`` / ``mx.symbol``, ``mx.viz`` /
``mx.visualization``, ``mx.context``, ``mx.base``, ``mx.random``, ``mx.test_utils``.
Each is also importable by MXNet's module path, e.g. ``import kvcli.mx.kvstore``.
"""

from __future__ import annotations

from kvcli import __version__
from kvcli._lazy import submodule_getattr
import kvcli.mx.ndarray as nd
from kvcli.errors import MXNetError
from kvcli.mx import kvstore, optimizer
from kvcli.mx.ndarray import Context, cpu, current_context, gpu
from kvcli.symbol.attrs import AttrScope

kv = kvstore  # MXNet's mx.kv: an attribute only (`import mxnet.kv` fails there too)
ndarray = nd

#: Attributes imported on first use, by the module that provides them. One entry per name;
#: other parts of kvcli add theirs here (e.g. ``"lr_scheduler"``).
_LAZY: dict[str, str] = {
    "sym": "kvcli.mx.symbol",
    "symbol": "kvcli.mx.symbol",
    "viz": "kvcli.mx.visualization",
    "visualization": "kvcli.mx.visualization",
    "context": "kvcli.mx.context",
    "base": "kvcli.mx.base",
    "random": "kvcli.mx.random",
    "test_utils": "kvcli.mx.test_utils",
    "lr_scheduler": "kvcli.mx.lr_scheduler",
    "attribute": "kvcli.mx.attribute",
}


__getattr__ = submodule_getattr("kvcli.mx", _LAZY, globals())


__all__ = [
    "AttrScope", "Context", "MXNetError", "__version__", "cpu", "current_context", "gpu", "kv", "kvstore", "nd",
    "ndarray", "optimizer", *_LAZY,
]
