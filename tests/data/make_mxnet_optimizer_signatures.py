"""Write ``mxnet_optimizer_signatures.json``: the constructor arguments (names, order,
defaults) of every optimizer MXNet 1.9.1 registers, so kvcli's generated constructors can be
checked against them, positional order included.

Run with MXNet's own interpreter (kvcli never imports MXNet)::

    $MXNET_PYTHON tests/data/make_mxnet_optimizer_signatures.py
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import mxnet as mx

OUT = Path(__file__).with_name("mxnet_optimizer_signatures.json")


def main() -> None:
    table = {}
    for name, cls in sorted(mx.optimizer.Optimizer.opt_registry.items()):
        params = inspect.signature(cls.__init__).parameters.values()
        named = [p for p in params if p.name != "self" and p.kind is p.POSITIONAL_OR_KEYWORD]
        table[name] = {"class": cls.__name__, "args": [[p.name, p.default] for p in named]}
    OUT.write_text(json.dumps({"mxnet": mx.__version__, "optimizers": table}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(table)} optimizers)")


if __name__ == "__main__":
    main()
