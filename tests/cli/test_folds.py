"""Ideas written once in the CLI: the session path (kvcli.session.names.session_folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvcli.cli import completion
from kvcli.cli.core import GlobalOptions
from kvcli.session.names import home_folder, session_folder


def test_every_front_end_finds_a_session_through_one_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KVCLI_HOME", str(tmp_path / "env-home"))
    assert home_folder("~/h") == tmp_path / "h"
    assert home_folder(None) == tmp_path / "env-home"  # KVCLI_HOME when no home is given
    assert session_folder("~/h") == tmp_path / "h" / "sessions"
    assert session_folder("~/h", "s1") == tmp_path / "h" / "sessions" / "s1"
    assert GlobalOptions(home="~/h").home_path() == tmp_path / "h"
    assert GlobalOptions().home_path() == tmp_path / "env-home"
    (tmp_path / "h" / "sessions" / "s1").mkdir(parents=True)
    (tmp_path / "h" / "sessions" / "s2").mkdir()
    assert completion.session_names("~/h") == ["s1", "s2"]
