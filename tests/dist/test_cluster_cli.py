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
        from kvcli.session.db import load_raw

        manifest = load_raw(tmp_path / "sessions" / "d")
        assert manifest is not None
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
    from kvcli.session import cluster

    (tmp_path / "cluster.json").write_text(json.dumps({"pid": 2**22 + 12345, "address": "127.0.0.1:1", "cpus": 1,
                                                       "started": 0}))
    assert cluster.status(tmp_path) is None
    done = kvcli(tmp_path, "cluster", "status")
    assert done.returncode == 0 and "no Ray cluster is running" in done.stdout


#: Run in a fresh process that joins the home's cluster: prints the ids of a kept group's
#: actors (or "none"), after optionally overwriting key "w" on server 0 with ``TAMPER``.
PROBE = """
import json, os, sys
from pathlib import Path
from kvcli.session import cluster
home = Path(sys.argv[1])
os.environ.update(cluster.join_environment(home))
import numpy as np, ray
ray.init(address=cluster.status(home).address, include_dashboard=False, logging_level="ERROR")
from kvcli.store.ray.group import find_group
group = find_group(sys.argv[2], 5.0)
if group is None:
    print("none")
else:
    if len(sys.argv) > 3:
        ray.get(group.servers[0].init.remote("w", np.full(3, float(sys.argv[3]), np.float32), "sync"))
    print(json.dumps([a._actor_id.hex() for a in (group.coordinator, *group.servers)]))
"""


def probe(home: Path, group: str, *tamper: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, str(home), group, *tamper], capture_output=True, text=True,
                          timeout=120, env={k: v for k, v in os.environ.items() if k not in UNSET})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def kept_groups(home: Path) -> list[str]:
    return sorted(path.stem for path in (home / "kept").glob("*.json"))


def test_a_dist_session_keeps_its_servers_in_the_cluster_and_never_trusts_their_values(tmp_path: Path) -> None:
    up = kvcli(tmp_path, "--json", "cluster", "up", "--cpus", "1")
    assert up.returncode == 0, up.stderr
    try:
        assert kvcli(tmp_path, "--type", "dist_sync", "init", "w", "ones(3)").returncode == 0
        [group] = kept_groups(tmp_path)
        actors = probe(tmp_path, group)
        assert actors != "none"
        pushed = kvcli(tmp_path, "push", "w", "ones(3)*2", "--devices", "2")
        assert pushed.returncode == 0, pushed.stderr
        assert probe(tmp_path, group) == actors  # the same coordinator and server, found again
        # A server holding something else than the session folder is not believed: every
        # command loads its keys from the folder.
        assert probe(tmp_path, group, "-7") == actors
        pulled = kvcli(tmp_path, "--json", "pull", "w")
        assert pulled.returncode == 0, pulled.stderr
        assert json.loads(pulled.stdout)["value"] == [4.0, 4.0, 4.0]
        # reset expires the kept group: the holder stops it within a second or two
        assert kvcli(tmp_path, "reset", "--yes").returncode == 0
        deadline = time.monotonic() + 20
        while kept_groups(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert kept_groups(tmp_path) == []
        assert probe(tmp_path, group) == "none"
    finally:
        assert kvcli(tmp_path, "cluster", "down").returncode == 0
    assert not (tmp_path / "kept").exists() or kept_groups(tmp_path) == []


def test_kept_servers_stop_after_KVCLI_DIST_IDLE_and_the_next_command_starts_new_ones(tmp_path: Path) -> None:
    up = kvcli(tmp_path, "--json", "cluster", "up", "--cpus", "1")
    assert up.returncode == 0, up.stderr
    saved = os.environ.get("KVCLI_DIST_IDLE")
    os.environ["KVCLI_DIST_IDLE"] = "1"
    try:
        assert kvcli(tmp_path, "--type", "dist_async", "init", "w", "ones(3)*5").returncode == 0
        # on a busy machine the holder may reap the group (1 s idle) before this look: then
        # it is already gone, which is what the test waits for
        groups = kept_groups(tmp_path)
        assert len(groups) <= 1
        deadline = time.monotonic() + 20
        while kept_groups(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert kept_groups(tmp_path) == [] and all(probe(tmp_path, group) == "none" for group in groups)
        pulled = kvcli(tmp_path, "--json", "pull", "w")
        assert pulled.returncode == 0, pulled.stderr
        assert json.loads(pulled.stdout)["value"] == [5.0, 5.0, 5.0]
        os.environ["KVCLI_DIST_IDLE"] = "0"  # 0: no kept servers, each command starts its own
        deadline = time.monotonic() + 20
        while kept_groups(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.2)
        pushed = kvcli(tmp_path, "push", "w", "ones(3)")
        assert pushed.returncode == 0, pushed.stderr
        assert kept_groups(tmp_path) == []
        assert json.loads(kvcli(tmp_path, "--json", "pull", "w").stdout)["value"] == [1.0, 1.0, 1.0]
    finally:
        if saved is None:
            os.environ.pop("KVCLI_DIST_IDLE", None)
        else:
            os.environ["KVCLI_DIST_IDLE"] = saved
        assert kvcli(tmp_path, "cluster", "down").returncode == 0


def test_without_a_cluster_a_dist_command_says_in_one_line_how_to_start_one(tmp_path: Path) -> None:
    done = kvcli(tmp_path, "--type", "dist_sync", "init", "w", "ones(3)")
    assert done.returncode == 0, done.stderr
    hints = [line for line in done.stderr.splitlines() if "kvcli cluster up" in line]
    from kvcli.cli.commands import RAY_START_NOTE

    assert hints == [RAY_START_NOTE]
    assert not (tmp_path / "kept").exists()  # a private runtime keeps nothing
