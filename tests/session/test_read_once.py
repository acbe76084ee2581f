"""What a one-shot command costs its session (issue 36, item 3): an assign push starts no
store and imports no optimizer, and the database is read once (the schema once, the meta rows
once, the rows of the keys touched), counted statement by statement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from kvcli.session import Session

PROBE = """
import json, sys
import numpy as np
from kvcli.session import Session
from kvcli.session import db
statements = []
connect = db.open_db
def traced(*args, **kwargs):
    conn = connect(*args, **kwargs)
    conn.set_trace_callback(statements.append)
    return conn
db.open_db = traced
with Session("s", sys.argv[1]) as session:
    getattr(session, sys.argv[2])(["w"], *([[np.full(3, 2, np.float32)]] if sys.argv[2] == "push" else []))
    store = session.store
print(json.dumps({"store": store is not None, "statements": statements,
                  "modules": sorted(m for m in sys.modules if m.startswith(("kvcli.optim", "kvcli.store.")))}))
"""


def _probe(home: Path, operation: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, str(home), operation], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def _session(home: Path) -> None:
    with Session("s", home) as session:
        session.init(["w", "big"], [np.ones(3, np.float32), np.ones(5000, np.float32)])


def test_an_assign_push_starts_no_store_and_imports_no_optimizer(tmp_path: Path) -> None:
    _session(tmp_path)
    found = _probe(tmp_path, "push")
    assert found["store"] is False and found["modules"] == ["kvcli.store.registry"]
    with Session("s", tmp_path) as session:
        assert session.pull(["w"])[0][0].tolist() == [2.0, 2.0, 2.0] and session.updater == "assign"
        assert [e.version for e in session.entries()] == [2, 1]


def test_a_push_reads_the_schema_and_the_meta_rows_once(tmp_path: Path) -> None:
    _session(tmp_path)
    statements = _probe(tmp_path, "push")["statements"]
    reads = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "PRAGMA TABLE_INFO"))]
    assert sum("sqlite_master" in s for s in reads) == 1
    assert sum("FROM meta" in s for s in reads) == 1
    assert not any("table_info" in s or s.startswith("CREATE") for s in statements)
    written = [s.split("VALUES ('")[1].split("'")[0] for s in statements if "INTO meta" in s]
    assert written == ["generation", "updated"]  # the meta fields that changed, no others
    # 6 reads, BEGIN, 2 meta rows, 1 key row, COMMIT and the count of files (crash leftovers)
    assert len(statements) <= 12, statements


def test_a_pull_reads_the_schema_and_the_meta_rows_once(tmp_path: Path) -> None:
    _session(tmp_path)
    statements = _probe(tmp_path, "pull")["statements"]
    assert sum("sqlite_master" in s for s in statements) == 1 and sum("FROM meta" in s for s in statements) == 1
    assert len(statements) <= 6, statements
