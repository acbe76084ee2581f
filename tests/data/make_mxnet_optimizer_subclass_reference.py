"""Write ``mxnet_optimizer_subclass_reference.json``: what the optimizer-subclassing programs of
``tests/optim/subclass_programs.py`` return on real MXNet 1.9.1 (final weights, states, and
which method ran with which argument types). ``tests/optim/test_subclass_dispatch.py`` runs the
same programs on kvcli.mx and compares.

Run with MXNet's own interpreter (kvcli never imports MXNet), from anywhere::

    $MXNET_PYTHON tests/data/make_mxnet_optimizer_subclass_reference.py
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import mxnet as mx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import program_module  # noqa: E402

OUT = HERE / "mxnet_optimizer_subclass_reference.json"
PROGRAMS = HERE.parent / "optim" / "subclass_programs.py"


def main() -> None:
    logging.disable(logging.WARNING)  # MXNet's storage-fallback notices
    programs = program_module.load(PROGRAMS)
    results = {"mxnet_version": mx.__version__, "programs": programs.run_all(mx)}
    OUT.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(results['programs'])} programs)")


if __name__ == "__main__":
    main()
