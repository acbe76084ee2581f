"""Record what MXNet 1.9.1's ``test_utils.assert_almost_equal`` and ``almost_equal`` do with
the calls of ``tests/mx/almost_equal_cases.py`` (pass or fail, the lines a failure prints,
its message, the numpy print options left) into mxnet_almost_equal_reference.json.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv)::

    $MXNET_PYTHON tests/data/make_mxnet_almost_equal_reference.py
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import program_module  # tests/data/program_module.py, beside this script

HERE = Path(__file__).resolve().parent
OUT = HERE / "mxnet_almost_equal_reference.json"


def main() -> None:
    cases = program_module.load(HERE.parent / "mx" / "almost_equal_cases.py")
    results = {name: cases.run(mx, expression) for name, expression in cases.CASES.items()}
    OUT.write_text(json.dumps({"mxnet": mx.__version__, "cases": results}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(results)} cases, {sum('error' in r for r in results.values())} failures)")


if __name__ == "__main__":
    main()
