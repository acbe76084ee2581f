"""MXNet-style shim: ``import kvcli.mx as mx`` runs KVStore and visualisation code written
for MXNet with only the import line changed.

Loaded at once: ``mx.kv`` (= ``mx.kvstore``), ``mx.nd`` (= ``mx.ndarray``), ``mx.optimizer``,
``mx.cpu(i)`` / ``mx.gpu(i)`` / ``mx.cpu_pinned(i)`` / ``mx.Context`` / ``mx.current_context``,
``mx.MXNetError``, ``mx.AttrScope``, ``mx.np_shape`` / ``mx.is_np_shape`` (off, as MXNet 1.x).
Loaded on first use (see :data:`_LAZY`): ``mx.sym`` / ``mx.symbol``, ``mx.viz`` /
``mx.visualization``, ``mx.context``, ``mx.base``, ``mx.random`` (= ``mx.rnd``), ``mx.util``,
``mx.test_utils``, ``mx.lr_scheduler``, ``mx.attribute``. Each is also importable by MXNet's
module path, e.g. ``import kvcli.mx.kvstore``.

``mx.__version__`` is the MXNet release this layer follows (1.9.1), for MXNet code's version
checks; ``kvcli.__version__`` is kvcli's own. What MXNet 1.9.1 has and kvcli.mx does not
(``mx.gluon``, ``mx.io``, ``mx.nd.crop``, ...) raises one error saying it is outside kvcli's
scope and what to use: :mod:`kvcli.mx.scope_table` declares it, ``docs/mxnet.md`` lists it.
"""

from __future__ import annotations

import kvcli.mx.ndarray as nd
from kvcli.errors import MXNetError
from kvcli.mx import kvstore, optimizer, scope
from kvcli.mx.base import __version__
from kvcli.mx.ndarray import Context, cpu, current_context, gpu
from kvcli.mx.ndarray.context import cpu_pinned
from kvcli.mx.util import is_np_shape, np_shape, set_np_shape, use_np_shape
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
    "rnd": "kvcli.mx.random",
    "test_utils": "kvcli.mx.test_utils",
    "lr_scheduler": "kvcli.mx.lr_scheduler",
    "attribute": "kvcli.mx.attribute",
    "util": "kvcli.mx.util",
}

# names kvcli.mx does not provide raise their scope error (mx.gluon, import kvcli.mx.io, ...)
__getattr__ = scope.guard(__name__, _LAZY, globals())
scope.install_import_guard()
setattr(kvstore, "__getattr__", scope.guard(kvstore.__name__))  # noqa: B010 - a module hook; it has none of its own


__all__ = [
    "AttrScope", "Context", "MXNetError", "__version__", "cpu", "cpu_pinned", "current_context", "gpu",
    "is_np_shape", "kv", "kvstore", "nd", "ndarray", "np_shape", "optimizer", "set_np_shape", "use_np_shape",
    *_LAZY,
]
