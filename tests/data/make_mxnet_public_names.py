"""Write ``mxnet_public_names.json``: every public name of the MXNet 1.9.1 modules kvcli.mx
provides (the package itself, kvstore, optimizer, lr_scheduler, ndarray with sparse and random,
symbol, visualization, base, context, util, test_utils, random, attribute), as real MXNet 1.9.1
has them. ``tests/mx/test_scope.py`` checks that kvcli's scope table
(``kvcli/mx/scope_table.py``) declares each one supported or unsupported.

A public name is one that does not start with ``_``, except what a module merely imported
from outside MXNet under its own name (``os``, ``OrderedDict``, numpy's functions): those are
not MXNet's API. Aliases of outside objects (``mx_real_t = numpy.float32``) are MXNet's.

Run with MXNet's own interpreter (kvcli never imports MXNet)::

    $MXNET_PYTHON tests/data/make_mxnet_public_names.py
"""

from __future__ import annotations

import importlib
import inspect
import json
import types
from pathlib import Path

import mxnet as mx

OUT = Path(__file__).resolve().with_name("mxnet_public_names.json")
MODULES = ("mxnet", "mxnet.kvstore", "mxnet.optimizer", "mxnet.lr_scheduler", "mxnet.ndarray",
           "mxnet.ndarray.sparse", "mxnet.ndarray.random", "mxnet.symbol", "mxnet.visualization", "mxnet.base",
           "mxnet.context", "mxnet.util", "mxnet.test_utils", "mxnet.random", "mxnet.attribute")


def kind(value: object) -> str:
    if isinstance(value, types.ModuleType):
        return "module"
    if inspect.isclass(value):
        return "class"
    return "function" if callable(value) else "value"


def is_mxnets(name: str, value: object) -> bool:
    """Whether ``name`` is part of MXNet's API rather than an import from elsewhere."""
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] == "mxnet"
    origin = getattr(value, "__module__", None)
    # MXNet's generated operators say they come from "ndarray" / "symbol"
    if not isinstance(origin, str) or origin.split(".")[0] in ("mxnet", "ndarray", "symbol"):
        return True
    return getattr(value, "__name__", None) != name  # an alias MXNet gives an outside object


def main() -> None:
    names = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        public = {}
        for name in sorted(dir(module)):
            if name.startswith("_"):
                continue
            value = getattr(module, name)
            if is_mxnets(name, value):
                public[name] = kind(value)
        names[module_name] = public
    OUT.write_text(json.dumps({"mxnet_version": mx.__version__, "modules": names}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}: " + ", ".join(f"{m} {len(n)}" for m, n in names.items()))


if __name__ == "__main__":
    main()
