"""The session and the CLI remember gradient compression; the values are MXNet's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import SessionError, UnsupportedError
from kvcli.session import Session
from kvcli.store.compression import CompressionError


KVCLI = Path(sys.executable).parent / "kvcli"


def test_session_remembers_compression_and_compresses_like_mxnet(tmp_path, ref) -> None:
    run = ref["compression"]["two_devices"]
    with Session("c", tmp_path, store_type="device", store_options={"num_devices": 2}) as session:
        session.init(["w"], [np.array(run["init"], np.float32)])
        assert session.set_compression("2bit:threshold=0.25") == "2bit:threshold=0.25"
        for step, want in zip(run["grads"], run["pulled"]):
            session.push(["w"], [[np.array(g, np.float32) for g in step]])
            got = session.pull(["w"])[0][0]
            assert got.tobytes() == np.array(want, np.float32).tobytes()
    manifest = json.loads((tmp_path / "sessions" / "c" / "manifest.json").read_text())
    assert manifest["compression"] == "2bit:threshold=0.25"
    with Session("c", tmp_path) as again:  # a new process: the setting is back
        assert again.describe()["compression"] == "2bit:threshold=0.25"
        again.push(["w"], [np.full((5, 5), 0.3, np.float32)])  # a fresh residual: 0.3 -> 0.25
        assert (again.pull(["w"])[0][0] == 0.25).all()
        assert again.set_compression("none") is None
        again.push(["w"], [np.full((5, 5), 0.3, np.float32)])
        assert (again.pull(["w"])[0][0] == np.float32(0.3)).all()


def test_bad_compression_changes_nothing(tmp_path) -> None:
    with Session("d", tmp_path, store_type="device", store_options={"num_devices": 2}) as session:
        session.set_compression("2bit")
        with pytest.raises(CompressionError, match="unknown gradient compression type '1bit'"):
            session.set_compression("1bit")
        assert session.describe()["compression"] == "2bit:threshold=0.5"
    with Session("l", tmp_path) as local, pytest.raises(UnsupportedError, match="'local' store"):
        local.set_compression("2bit")
    manifest = tmp_path / "sessions" / "d" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["compression"] = "2bit:threshold=-1"
    manifest.write_text(json.dumps(data))
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
    bad = kv("set-compression", "2bit:threshold=0")
    assert bad.returncode == 1 and "threshold must be a finite number greater than 0" in bad.stderr
    assert "compression 2bit:threshold=0.5" in kv("show").stdout
