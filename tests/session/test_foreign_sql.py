"""Issue 32 item 3: ``session.db`` runs only kvcli's SQL. A database holding anything but
kvcli's tables and indexes (a trigger, a view, another table) is refused on opening, in one
line naming the repair, before any of its SQL can run; ``reset`` builds a new one; and every
statement has a deadline."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import SessionError
from kvcli.session import Session, db
from tests.runner import run_kvcli

NOT_OURS = "it is not a kvcli session database"

#: Issue 32: ``meta`` becomes a view whose recursive query never ends (every command reads meta).
ENDLESS_VIEW = (
    "ALTER TABLE meta RENAME TO meta_real",
    "CREATE VIEW meta AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
    "SELECT name, value FROM meta_real WHERE NOT EXISTS (SELECT 1 FROM r WHERE n = 0)",
)
#: Issue 32: a trigger that silently zeroes every value a push writes into its row.
ZEROING_TRIGGER = (
    "CREATE TRIGGER zero AFTER UPDATE ON keys BEGIN "
    "UPDATE keys SET data = zeroblob(length(NEW.data)) WHERE pos = NEW.pos; END",
)


def plant(home: Path, statements: tuple[str, ...]) -> Path:
    path = home / "sessions" / "default" / db.DB
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path


def schema(path: Path) -> set[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        return {(kind, name) for kind, name in conn.execute("SELECT type, name FROM sqlite_master")}
    finally:
        conn.close()


def one_line_refusal(done: object, home: Path) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)  # type: ignore[attr-defined]
    stderr = done.stderr  # type: ignore[attr-defined]
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    assert NOT_OURS in stderr and "run `kvcli reset` to start the session over" in stderr


def test_an_endless_view_is_refused_at_once_and_reset_rebuilds_the_database(tmp_path: Path) -> None:
    assert run_kvcli("init", "w", "[1, 2, 3]", home=tmp_path).returncode == 0
    path = plant(tmp_path, ENDLESS_VIEW)
    for command in (["pull", "w"], ["push", "w", "[4, 5, 6]"], ["keys"], ["show"]):
        started = time.monotonic()
        done = run_kvcli(*command, home=tmp_path, timeout=30)  # the old code hung here for ever
        assert time.monotonic() - started < 20
        one_line_refusal(done, tmp_path)
        assert "the view 'meta', which kvcli never makes" in done.stderr
    listed = run_kvcli("--json", "sessions", home=tmp_path, timeout=30)
    assert listed.returncode == 0 and NOT_OURS in listed.stdout
    reset = run_kvcli("reset", "--yes", home=tmp_path, timeout=30)
    assert reset.returncode == 0, reset.stderr
    assert schema(path) == {("table", "meta"), ("table", "keys"), ("index", "sqlite_autoindex_meta_1"),
                            ("index", "sqlite_autoindex_keys_1"), ("index", "keys_file"), ("index", "keys_spare"),
                            ("index", "keys_residual")}
    assert run_kvcli("init", "w", "[7, 8]", home=tmp_path).returncode == 0
    assert "[7. 8.]" in run_kvcli("pull", "w", home=tmp_path).stdout


def test_a_trigger_rewriting_pushes_is_refused_and_does_not_survive_reset(tmp_path: Path) -> None:
    assert run_kvcli("init", "w", "[1, 2, 3]", home=tmp_path).returncode == 0
    path = plant(tmp_path, ZEROING_TRIGGER)
    pushed = run_kvcli("push", "w", "[4, 5, 6]", home=tmp_path)
    one_line_refusal(pushed, tmp_path)  # the old code acknowledged it, and the pull gave zeros
    assert "the trigger 'zero'" in pushed.stderr
    assert ("trigger", "zero") in schema(path)  # nothing was changed
    assert run_kvcli("reset", "--yes", home=tmp_path).returncode == 0
    assert ("trigger", "zero") not in schema(path)  # the old reset kept it
    assert run_kvcli("init", "w", "[1, 2, 3]", home=tmp_path).returncode == 0
    assert run_kvcli("push", "w", "[4, 5, 6]", home=tmp_path).returncode == 0
    assert "[4. 5. 6.]" in run_kvcli("pull", "w", home=tmp_path).stdout


@pytest.mark.parametrize("statement, what", [
    ("CREATE TABLE extra (x)", "the table 'extra'"),
    ("CREATE INDEX keys_dtype ON keys (dtype)", "the index 'keys_dtype'"),
    ("CREATE VIEW everything AS SELECT * FROM keys", "the view 'everything'"),
    ("CREATE TRIGGER log AFTER INSERT ON meta BEGIN SELECT 1; END", "the trigger 'log'"),
])
def test_anything_but_kvcli_tables_and_indexes_is_refused(tmp_path: Path, statement: str, what: str) -> None:
    with Session("default", tmp_path) as session:
        session.init(["w"], [np.ones(3, np.float32)])
    plant(tmp_path, (statement,))
    for command in (lambda s: s.pull(["w"]), lambda s: s.push(["w"], [np.zeros(3, np.float32)]), Session.keys):
        with Session("default", tmp_path) as session:
            with pytest.raises(SessionError, match=rf"{what}, which kvcli never makes: {NOT_OURS}.*Session.reset"):
                command(session)


def test_a_table_redefined_with_other_columns_is_refused(tmp_path: Path) -> None:
    with Session("default", tmp_path) as session:
        session.init(["w"], [np.ones(3, np.float32)])
    plant(tmp_path, ("ALTER TABLE keys ADD COLUMN note TEXT DEFAULT 'x'",))
    with pytest.raises(SessionError, match=rf"its table 'keys' is not defined as kvcli defines it: {NOT_OURS}"):
        Session("default", tmp_path).pull(["w"])


@pytest.mark.timeout(30)
def test_every_statement_has_a_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Session("default", tmp_path) as session:
        session.init(["w"], [np.ones(3, np.float32)])
    monkeypatch.setattr(db, "STATEMENT_SECONDS", 0.5)
    conn = db.connect(tmp_path / "sessions" / "default", 5.0, write=False)
    assert conn is not None
    endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="interrupted") as raised:
        conn.execute(endless).fetchall()
    assert 0.5 <= time.monotonic() - started < 5
    assert conn.execute("SELECT count(*) FROM keys").fetchone() == (1,)  # the next statement has its own
    conn.close()
    message = str(db.db_error(tmp_path / db.DB, raised.value))
    assert "a statement did not finish within 0.5 s: it is damaged or not a kvcli session database" in message
