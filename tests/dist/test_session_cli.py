"""One-shot commands on a session of type dist_sync: the session remembers the type and the
Ray address, and every command joins that cluster as a worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

pytestmark = [pytest.mark.dist, pytest.mark.timeout(240)]


def kvcli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KVCLI_HOME": str(home), "KVCLI_SESSION": "dist"}
    env.pop("KVCLI_RAY_ADDRESS", None)  # the session, not the environment, names the cluster
    return subprocess.run([sys.executable, "-m", "kvcli", *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_dist_sync_session_remembers_its_cluster(ray_cluster, tmp_path: Path) -> None:
    address = ray_cluster.get_runtime_context().gcs_address
    created = kvcli(tmp_path, "--type", "dist_sync", "--ray-address", address, "init", "w", "ones(3)")
    assert created.returncode == 0, created.stderr
    pushed = kvcli(tmp_path, "push", "w", "ones(3)", "--devices", "2")  # no --type: remembered
    assert pushed.returncode == 0, pushed.stderr
    pulled = kvcli(tmp_path, "--json", "pull", "w")
    assert pulled.returncode == 0, pulled.stderr
    assert json.loads(pulled.stdout)["value"] == [2.0, 2.0, 2.0]
    manifest = json.loads((tmp_path / "sessions" / "dist" / "manifest.json").read_text())
    assert manifest["store"] == {"type": "dist_sync", "options": {"address": address}}
    wrong = kvcli(tmp_path, "--type", "local", "keys")
    assert wrong.returncode == 1 and "kvcli reset --type local" in wrong.stderr
