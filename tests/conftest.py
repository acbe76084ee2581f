"""Shared test setup: no test ever touches the real user data folder."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_kvcli_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point KVCLI_HOME at a fresh folder (tests that need their own pass --home or set it)."""
    home = tmp_path_factory.mktemp("kvcli-home")
    monkeypatch.setenv("KVCLI_HOME", str(home))
    # the per-user key that trusts python: updaters lives outside every home: keep it per test too
    monkeypatch.setenv("KVCLI_TRUST_KEY", str(home.parent / (home.name + "-trust.key")))
    monkeypatch.delenv("KVCLI_SESSION", raising=False)
    monkeypatch.delenv("KVCLI_TEST_CRASH_POINT", raising=False)
    # warm device workers of the tests' device sessions go soon after their last command
    monkeypatch.setenv("KVCLI_DEVICE_IDLE", "3")
    return home

