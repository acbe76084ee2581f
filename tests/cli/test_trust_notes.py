"""`show` warns about a session that runs Python code; `import` says it adopted none."""

from __future__ import annotations

from pathlib import Path

from .conftest import Runner


def test_show_warns_and_import_adopts_no_code(kv: Runner, tmp_path: Path) -> None:
    code = tmp_path / "upd.py"
    code.write_text("def f(key, pushed, stored):\n    stored += pushed\n")
    assert kv("init", "w", "zeros(2)").code == 0
    assert kv("set-updater", f"python:{code}:f").code == 0
    shown = kv("show")
    assert shown.code == 0 and "warning: " in shown.err and str(code) in shown.err
    assert kv("export", str(tmp_path / "out")).code == 0
    imported = kv("--session", "other", "import", str(tmp_path / "out"))
    assert imported.code == 0
    assert "not adopted" in imported.err and "updater assign" in imported.err
