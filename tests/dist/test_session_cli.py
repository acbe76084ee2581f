"""One-shot commands on a session of type dist_sync: the session remembers the type and the
Ray address, and every command joins that cluster as a worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runner import run_kvcli

pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

pytestmark = [pytest.mark.dist, pytest.mark.timeout(240)]


UNSET = ("KVCLI_RAY_ADDRESS",)  # the session, not the environment, names the cluster


def kvcli(home: Path, *args: str) -> subprocess.CompletedProcess:
    """One-shot kvcli in ``home`` on session "dist"; the environment names no Ray cluster."""
    saved = {name: os.environ.pop(name) for name in UNSET if name in os.environ}
    try:
        return run_kvcli(*args, home=home, env={"KVCLI_SESSION": "dist"}, timeout=180)
    finally:
        os.environ.update(saved)


def test_a_dist_sync_session_remembers_its_cluster(ray_cluster, tmp_path: Path) -> None:
    address = ray_cluster.get_runtime_context().gcs_address
    created = kvcli(tmp_path, "--type", "dist_sync", "--ray-address", address, "init", "w", "ones(3)")
    assert created.returncode == 0, created.stderr
    pushed = kvcli(tmp_path, "push", "w", "ones(3)", "--devices", "2")  # no --type: remembered
    assert pushed.returncode == 0, pushed.stderr
    pulled = kvcli(tmp_path, "--json", "pull", "w")
    assert pulled.returncode == 0, pulled.stderr
    assert json.loads(pulled.stdout)["value"] == [2.0, 2.0, 2.0]
    from kvcli.session.db import load_raw

    manifest = load_raw(tmp_path / "sessions" / "dist")
    assert manifest is not None
    assert manifest["store"] == {"type": "dist_sync", "options": {"address": address}}
    wrong = kvcli(tmp_path, "--type", "local", "keys")
    assert wrong.returncode == 1 and "kvcli reset --type local" in wrong.stderr
