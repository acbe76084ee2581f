"""`kvcli cluster up | status | down`: a background Ray cluster for a home, which one-shot
commands on dist sessions join instead of starting Ray themselves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.runner import run_kvcli

pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

pytestmark = [pytest.mark.dist, pytest.mark.timeout(240)]


UNSET = ("KVCLI_RAY_ADDRESS", "RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE")  # the session, not the environment, names the cluster


def kvcli(home: Path, *args: str) -> subprocess.CompletedProcess:
    """One-shot kvcli in ``home`` on session "d"; the environment names no Ray cluster."""
    saved = {name: os.environ.pop(name) for name in UNSET if name in os.environ}
    try:
        return run_kvcli(*args, home=home, env={"KVCLI_SESSION": "d"}, timeout=180)
    finally:
        os.environ.update(saved)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_cluster_up_is_joined_by_one_shot_commands_and_down_stops_it(tmp_path: Path) -> None:
    assert json.loads(kvcli(tmp_path, "--json", "cluster", "status").stdout)["running"] is False
    up = kvcli(tmp_path, "--json", "cluster", "up", "--cpus", "1")
    assert up.returncode == 0, up.stderr
    info = json.loads(up.stdout)
    try:
        assert info["running"] and info["cpus"] == 1 and info["started_now"] is True
        again = json.loads(kvcli(tmp_path, "--json", "cluster", "up").stdout)
        assert again["pid"] == info["pid"] and again["started_now"] is False  # one per home

        from kvcli.session import Session

        with Session("d", tmp_path, store_type="dist_sync") as session:
            assert session.store_start() == "cluster"
        assert kvcli(tmp_path, "--type", "dist_sync", "init", "w", "ones(3)").returncode == 0
        started = time.monotonic()
        pushed = kvcli(tmp_path, "push", "w", "ones(3)*2", "--devices", "2")
        joined_seconds = time.monotonic() - started
        assert pushed.returncode == 0, pushed.stderr
        pulled = kvcli(tmp_path, "--json", "pull", "w")
        assert json.loads(pulled.stdout)["value"] == [4.0, 4.0, 4.0]
        manifest = json.loads((tmp_path / "sessions" / "d" / "manifest.json").read_text())
        assert manifest["store"]["options"] == {}  # the home's cluster is not written into the session
        assert joined_seconds < 30, joined_seconds
    finally:
        down = kvcli(tmp_path, "--json", "cluster", "down")
    assert down.returncode == 0 and json.loads(down.stdout)["stopped"] is True
    deadline = time.monotonic() + 30
    while alive(info["pid"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(info["pid"])
    assert json.loads(kvcli(tmp_path, "--json", "cluster", "status").stdout)["running"] is False
    assert not (tmp_path / "cluster.token").exists()
    with Session("d", tmp_path) as session:
        assert session.store_start() == "private-ray"


def test_a_stale_cluster_file_is_not_a_cluster(tmp_path: Path) -> None:
    from kvcli.store import cluster

    (tmp_path / "cluster.json").write_text(json.dumps({"pid": 2**22 + 12345, "address": "127.0.0.1:1", "cpus": 1,
                                                       "started": 0}))
    assert cluster.status(tmp_path) is None
    done = kvcli(tmp_path, "cluster", "status")
    assert done.returncode == 0 and "no Ray cluster is running" in done.stdout
