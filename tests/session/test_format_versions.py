"""A session or export whose key names hold ``:`` (a checkpoint's ``arg:fc1_weight``)
declares format 3, so a kvcli that reads only format 2 says "upgrade kvcli" and never calls
it corrupted (whose remedy, ``reset``, would drop it)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import SessionError
from kvcli.session import Session, manifest as manifest_module
from kvcli.session.db import load_raw


def test_a_session_with_colon_keys_is_written_as_format_3_and_its_export_says_so(tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session:
        session.init(["arg:fc1_weight"], [np.ones(3, np.float32)])
        session.export(tmp_path / "with_colon")
        raw = load_raw(session.path)
        assert raw is not None and raw["format_version"] == 3
    with Session("plain", tmp_path / "home") as session:
        session.init(["w"], [np.ones(3, np.float32)])
        session.export(tmp_path / "plain")
    assert json.loads((tmp_path / "with_colon" / "manifest.json").read_text())["format_version"] == 3
    assert json.loads((tmp_path / "plain" / "manifest.json").read_text())["format_version"] == 1


def test_a_reader_of_format_2_says_upgrade_not_corrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Session("s", tmp_path / "home") as session:
        session.init(["arg:fc1_weight"], [np.ones(3, np.float32)])
    monkeypatch.setattr(manifest_module, "FORMAT_VERSION", 2)  # as an older kvcli reads
    with pytest.raises(SessionError, match=r"written by a newer kvcli \(session format 3, this kvcli reads 2\): "
                                           r"upgrade kvcli"):
        with Session("s", tmp_path / "home") as session:
            session.pull(["arg:fc1_weight"])
