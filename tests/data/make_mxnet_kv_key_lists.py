"""Record what MXNet 1.9.1's ``local`` and ``device`` stores do with pushes of key lists
(keys listed twice, out of order, int and str keys, custom updaters, optimizers) into
mxnet_kv_key_lists.json: the plans of ``tests/mx/kv_key_list_programs.py`` and, for each, the
values pulled afterwards, the outputs of a pushpull and the calls a custom updater received.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv)::

    $MXNET_PYTHON tests/data/make_mxnet_kv_key_lists.py
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import program_module  # tests/data/program_module.py, beside this script

HERE = Path(__file__).resolve().parent
OUT = HERE / "mxnet_kv_key_lists.json"
CASES = 48


def main() -> None:
    programs = program_module.load(HERE.parent / "mx" / "kv_key_list_programs.py")
    cases = []
    for seed in range(CASES):
        plan = programs.make_plan(seed)
        cases.append({"plan": plan, "mxnet": programs.run(mx, plan)})
    OUT.write_text(json.dumps({"mxnet": mx.__version__, "cases": cases}) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
