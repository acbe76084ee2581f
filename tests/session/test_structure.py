"""Issue 24 item 5 for kvcli/session: one object per file, joined by composition, and no
module reaching into another's ``_private`` names (the package-level check in
tests/test_architecture.py looks only across packages)."""

from __future__ import annotations

import ast
from pathlib import Path

import kvcli.session
from kvcli.session import Session
from kvcli.session.commit import Committer
from kvcli.session.live import LiveStore, Place

PACKAGE = Path(kvcli.session.__file__).parent


def test_no_session_module_imports_another_modules_private_names() -> None:
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kvcli.session"):
                found += [f"{path.name}: {node.module}.{alias.name}" for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert found == []


def test_session_owns_its_parts_instead_of_inheriting_them(tmp_path: Path) -> None:
    assert Session.__mro__ == (Session, object)
    assert LiveStore.__mro__ == (LiveStore, object) and Committer.__mro__ == (Committer, object)
    with Session("s", tmp_path, store_type="local") as session:
        parts = vars(session)
        assert isinstance(parts["_place"], Place) and isinstance(parts["_live"], LiveStore)
        assert isinstance(parts["_committer"], Committer)
        # one record of where the session is, shared by the parts (reset changes the request)
        assert parts["_live"].place is parts["_place"] is parts["_committer"].place
        session.requested_type = None
        assert parts["_place"].requested_type is None
        assert (session.name, session.home, session.path) == ("s", tmp_path, tmp_path / "sessions" / "s")
