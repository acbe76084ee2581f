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


def test_a_store_option_is_named_in_python_by_the_library_and_by_its_flag_by_the_cli(
        tmp_path: Path, kv) -> None:
    """The library says ``address``; the CLI says ``--ray-address`` (output.STORE_OPTION_DESTS)."""
    from kvcli.errors import SessionError
    from kvcli.session import Session

    with pytest.raises(SessionError) as caught:
        Session("x", tmp_path, store_type="local", store_options={"address": "10.0.0.1:6379"})
    assert str(caught.value) == "address does not apply to the 'local' store"
    result = kv("--type", "local", "--ray-address", "10.0.0.1:6379", "init", "w", "1")
    assert result.code == 1 and result.out == ""
    assert "--ray-address does not apply to the 'local' store" in result.err
    with pytest.raises(SessionError) as caught:
        Session("x", tmp_path, store_type="dist_sync", store_options={"num_devices": 2})
    assert str(caught.value) == "num_devices does not apply to the 'dist_sync' store (it takes address, num_servers)"
