"""Write ``mxnet_call_outcomes_reference.json``: what MXNet 1.9.1 returns, or which classes its
error is, for the calls of ``tests/mx/call_programs.py`` (KVStore calls without ``out`` or with
lists of other lengths, their return values, optimizers made with an unknown keyword,
``nd.array`` of strings, optimizer states without an optimizer). ``tests/mx/test_call_outcomes.py``
makes the same calls on kvcli.mx and compares.

Run with MXNet's own interpreter (kvcli never imports MXNet), from anywhere::

    $MXNET_PYTHON tests/data/make_mxnet_call_outcomes_reference.py
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import warnings
from pathlib import Path

import mxnet as mx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import program_module  # noqa: E402

OUT = HERE / "mxnet_call_outcomes_reference.json"
PROGRAMS = HERE.parent / "mx" / "call_programs.py"


def main() -> None:
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    programs = program_module.load(PROGRAMS)
    with tempfile.TemporaryDirectory() as folder:
        outcomes = programs.run_all(mx, folder)
    OUT.write_text(json.dumps({"mxnet_version": mx.__version__, "outcomes": outcomes}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(outcomes)} calls)")


if __name__ == "__main__":
    main()
