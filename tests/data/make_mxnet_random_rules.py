"""Record MXNet 1.9.1's answers to the questions of ``tests/nd/random_rule_programs.py``
(which random draws repeat which after ``mx.random.seed``: per context, per seed, samplers
and shuffle) into mxnet_random_rules.json.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv)::

    $MXNET_PYTHON tests/data/make_mxnet_random_rules.py
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import program_module  # tests/data/program_module.py, beside this script

HERE = Path(__file__).resolve().parent
OUT = HERE / "mxnet_random_rules.json"


def main() -> None:
    programs = program_module.load(HERE.parent / "nd" / "random_rule_programs.py")
    answers = programs.relations(mx)
    OUT.write_text(json.dumps({"mxnet": mx.__version__, "relations": answers}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(answers)} answers, {sum(answers.values())} yes)")


if __name__ == "__main__":
    main()
