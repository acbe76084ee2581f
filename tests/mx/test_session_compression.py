"""The session and the CLI remember gradient compression; the values are MXNet's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import SessionError, UnsupportedError, CompressionError
from kvcli.session import Session
from tests.session.legacy import read_manifest, write_legacy


KVCLI = Path(sys.executable).parent / "kvcli"


def test_session_remembers_compression_and_residuals_like_mxnet(tmp_path, ref) -> None:
    """Steps 0-2 in one Session, 3-4 in a new one (a new store, as a new process would
    make): the residuals come back from disk, so every pull equals MXNet's, bit for bit."""
    run = ref["compression"]["two_devices"]
    steps = list(zip(run["grads"], run["pulled"]))

    def push_and_check(session: Session, part: list) -> None:
        for step, want in part:
            session.push(["w"], [[np.array(g, np.float32) for g in step]])
            got = session.pull(["w"])[0][0]
            assert got.tobytes() == np.array(want, np.float32).tobytes()

    with Session("c", tmp_path, store_type="device", store_options={"num_devices": 2}) as session:
        session.init(["w"], [np.array(run["init"], np.float32)])
        assert session.set_compression("2bit:threshold=0.25") == "2bit:threshold=0.25"
        push_and_check(session, steps[:3])
    manifest = read_manifest(tmp_path / "sessions" / "c")
    assert manifest["compression"] == "2bit:threshold=0.25" and manifest["keys"][0]["residual"].endswith(".npz")
    with Session("c", tmp_path) as again:
        assert again.describe()["compression"] == "2bit:threshold=0.25"
        push_and_check(again, steps[3:])
        again.init(["w"], [np.zeros((5, 5), np.float32)])  # re-init: residuals start from zero
        again.push(["w"], [np.full((5, 5), 0.2, np.float32)])
        assert (again.pull(["w"])[0][0] == 0).all()
        assert again.set_compression("none", drop_residuals=True) is None  # asked for: it drops residuals
        again.push(["w"], [np.full((5, 5), 0.3, np.float32)])
        assert (again.pull(["w"])[0][0] == np.float32(0.3)).all()
    manifest = read_manifest(tmp_path / "sessions" / "c")
    assert "residual" not in manifest["keys"][0]
    # the residual files are gone; the 100-byte value is held in its row (no file)
    assert sorted(p.suffix for p in (tmp_path / "sessions" / "c" / "data").iterdir()) == []


def test_bad_compression_changes_nothing(tmp_path) -> None:
    with Session("d", tmp_path, store_type="device", store_options={"num_devices": 2}) as session:
        session.set_compression("2bit")
        with pytest.raises(CompressionError, match="unknown gradient compression type '1bit'"):
            session.set_compression("1bit")
        assert session.describe()["compression"] == "2bit:threshold=0.5"
    with Session("l", tmp_path) as local, pytest.raises(UnsupportedError, match="'local' store"):
        local.set_compression("2bit")
    data = read_manifest(tmp_path / "sessions" / "d")
    data["compression"] = "2bit:threshold=-1"
    write_legacy(tmp_path / "sessions" / "d", data)  # an old session, checked before its migration
    with Session("d", tmp_path) as damaged, pytest.raises(SessionError, match="is corrupted .*compression"):
        damaged.keys()


def test_cli_set_compression(tmp_path) -> None:
    env = {**os.environ, "KVCLI_HOME": str(tmp_path)}
    env.pop("KVCLI_SESSION", None)

    def kv(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(KVCLI), *args], env=env, capture_output=True, text=True, timeout=120)

    assert kv("--type", "device", "--num-devices", "2", "init", "w", "zeros(3)").returncode == 0
    done = kv("--json", "set-compression", "2bit:threshold=0.5")
    assert json.loads(done.stdout) == {"session": "default", "compression": "2bit:threshold=0.5"}
    assert kv("push", "w", "full((3,),0.3)").returncode == 0
    assert json.loads(kv("pull", "w", "--json").stdout)["value"] == [0.0, 0.0, 0.0]  # 0.3 < threshold
    assert kv("push", "w", "full((3,),0.3)").returncode == 0  # another process: the residual is back
    assert json.loads(kv("pull", "w", "--json").stdout)["value"] == [0.5, 0.5, 0.5]  # 0.6 >= 0.5
    bad = kv("set-compression", "2bit:threshold=0")
    assert bad.returncode == 1 and "threshold must be a finite number greater than 0" in bad.stderr
    assert "compression 2bit:threshold=0.5" in kv("show").stdout
