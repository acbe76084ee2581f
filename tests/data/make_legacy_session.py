"""Record sessions in the formats of older kvcli releases, to test that today's reads them.

Run with the *old* release's kvcli importable, from the repository root::

    PYTHONPATH=/path/to/old/checkout python tests/data/make_legacy_session.py [NAME]

* ``legacy_sessions`` (the default NAME), with a checkout of the last commit before the
  session moved to SQLite (``git archive 1b07402``): ``manifest.json`` + ``data/*.npy``;
* ``legacy_db_sessions``, with a checkout of the last commit before small values moved
  into their database rows (``git archive 95293e0``): ``session.db`` without the ``data``
  column, every value a ``data/*.npy`` file however small.

It writes ``tests/data/NAME/`` (a home with two sessions) and ``tests/data/NAME.json``
(what each key must hold after the migration). tests/session/test_migration.py opens copies
of these folders with today's kvcli.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np

from kvcli.session import Session

OUT = Path(__file__).parent / (sys.argv[1] if len(sys.argv) > 1 else "legacy_sessions")


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    expected: dict[str, dict[str, list]] = {}
    with Session("model", OUT) as session:  # str keys, an optimizer with state
        session.init(["fc1.weight", "fc1.bias", "out"],
                     [np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros(3, np.float32), np.ones(2, np.float64)])
        session.set_updater("sgd:lr=0.5,momentum=0.9")
        session.push(["fc1.weight", "fc1.bias"], [np.ones((2, 3), np.float32), np.full(3, 2, np.float32)])
        session.push(["fc1.weight"], [np.ones((2, 3), np.float32)])
        expected["model"] = {key: session.pull([key])[0][0].tolist() for key in session.keys()}
    with Session("ints", OUT) as session:  # int keys, assign, a deleted key
        session.init([3, 7, 9], [np.full(4, 3, np.int32), np.full(2, 7, np.float16), np.zeros(1, np.uint8)])
        session.push([7], [np.full(2, 8, np.float16)])
        session.delete([9])
        expected["ints"] = {str(key): session.pull([key])[0][0].tolist() for key in session.keys()}
    for lock in OUT.rglob(".lock"):
        lock.unlink()
    (OUT.parent / f"{OUT.name}.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
