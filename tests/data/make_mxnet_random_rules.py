"""Record MXNet 1.9.1's answers to the questions of ``tests/nd/random_rule_programs.py``
(which random draws repeat which after ``mx.random.seed``: per context, per seed, samplers
and shuffle) into mxnet_random_rules.json.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv)::

    $MXNET_PYTHON tests/data/make_mxnet_random_rules.py
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import mxnet as mx

HERE = Path(__file__).resolve().parent
OUT = HERE / "mxnet_random_rules.json"
PROGRAMS = HERE.parent / "nd" / "random_rule_programs.py"


def main() -> None:
    spec = importlib.util.spec_from_file_location("random_rule_programs", PROGRAMS)
    assert spec is not None and spec.loader is not None
    programs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(programs)
    answers = programs.relations(mx)
    OUT.write_text(json.dumps({"mxnet": mx.__version__, "relations": answers}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(answers)} answers, {sum(answers.values())} yes)")


if __name__ == "__main__":
    main()
