"""Record sessions in the format of kvcli before SQLite (``manifest.json`` + ``data/*.npy``).

Run with the *old* release's kvcli importable (a checkout of the last commit before the
session moved to SQLite, e.g. ``git archive 1b07402``), from the repository root::

    PYTHONPATH=/path/to/old/checkout python tests/data/make_legacy_session.py

It writes ``tests/data/legacy_sessions/`` (a home with two sessions) and
``tests/data/legacy_sessions.json`` (what each key must hold after the migration).
tests/session/test_migration.py opens copies of these folders with today's kvcli.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from kvcli.session import Session

OUT = Path(__file__).parent / "legacy_sessions"


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
    (OUT.parent / "legacy_sessions.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
