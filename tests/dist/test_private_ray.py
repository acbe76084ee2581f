"""Issue 32 items 1 and 2: every Ray instance kvcli starts (``kvcli launch``, a dist session
without ``kvcli cluster up``) has its own auth token in a private file, never Ray's default
``~/.ray/auth_token`` (0644, in a home others may read), and keeps its temp folder (logs,
sockets) where no other local user can look. Tried with a real second uid."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

from kvcli.store.ray.group import ray_temp_dir  # noqa: E402
from tests.other_user import as_user, other_uid, reachable_folder  # noqa: E402
from tests.runner import KVCLI, kvcli_env  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.timeout(240)]
HERE = Path(__file__).resolve().parent
MARKER = "kvcli-private-ray-marker-7d1e"

WORKER = textwrap.dedent(
    f"""
    import json, os, sys, time
    import numpy as np
    import ray
    import kvcli

    out = sys.argv[1]
    with kvcli.create("dist_sync") as kv:  # joins the job with the token it was handed
        kv.init("w", np.zeros(2))
        kv.push("w", np.full(2, 42.0))
        value = kv.pull("w").tolist()
        print("{MARKER}", flush=True)  # what a job prints lands in Ray's logs
        record = {{
            "value": value,
            "address": os.environ["KVCLI_RAY_ADDRESS"],
            "token": os.environ.get("RAY_AUTH_TOKEN_PATH"),
            "session_dir": ray._private.worker._global_node.get_session_dir_path(),
        }}
        with open(os.path.join(out, "record.tmp"), "w") as handle:
            json.dump(record, handle)
        os.rename(os.path.join(out, "record.tmp"), os.path.join(out, "record.json"))
        deadline = time.time() + 150
        while not os.path.exists(os.path.join(out, "done")) and time.time() < deadline:
            time.sleep(0.1)
    """
)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A folder every user can reach, holding a home made as Debian's ``useradd -m`` makes
    one (0755: every local user may read what is in it)."""
    with reachable_folder("kvcli-ray-users-") as folder:
        (folder / "victim").mkdir()
        os.chmod(folder / "victim", 0o755)
        yield folder


def victim_env(home: Path, **extra: str) -> dict[str, str]:
    """kvcli's environment with ``home`` as HOME and no Ray cluster or token named (this test
    process's own Ray, if one runs, must not be handed down)."""
    env = kvcli_env(home / "kv", HOME=str(home), **extra)
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_TOKEN", "KVCLI_RAY_ADDRESS", "RAY_ADDRESS"):
        env.pop(name, None)
    return env


def intrude(uid: int, address: str, candidates: list[str]) -> dict[str, Any]:
    """Run tests/dist/ray_intruder.py as ``uid`` (0: as this user, the control)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    done = subprocess.run([sys.executable, str(HERE / "ray_intruder.py"), str(uid), address, *candidates],
                          capture_output=True, text=True, timeout=90, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _try_to_read(paths: list[str]) -> dict[str, str]:
    """As the other user: open each path (a folder is listed); what each gave."""
    found = {}
    for path in paths:
        try:
            if os.path.isdir(path):
                os.listdir(path)
            else:
                with open(path, "rb") as handle:
                    handle.read(1)
            found[path] = "read"
        except OSError as error:
            found[path] = error.strerror or str(error)
    return found


def test_another_user_can_neither_join_a_launched_job_nor_read_its_token_or_logs(reachable: Path) -> None:
    uid = other_uid()
    home = reachable / "victim"
    out = reachable / "out"
    out.mkdir()
    script = reachable / "train.py"
    script.write_text(WORKER)
    job = subprocess.Popen([str(KVCLI), "launch", "-n", "1", "--", sys.executable, str(script), str(out)],
                           env=victim_env(home), cwd=reachable, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while not (out / "record.json").exists() and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert (out / "record.json").exists(), job.stdout.read().decode()[-3000:] if job.poll() is not None else "no record"
        record = json.loads((out / "record.json").read_text())
        assert record["value"] == [42.0, 42.0]  # the worker joined with the token it was handed

        # Ray's default token file is never written: the token is a private file of its own
        assert not (home / ".ray").exists()
        token = Path(record["token"])
        assert token.is_file() and mode(token) == 0o600 and os.stat(token).st_uid == os.geteuid()
        assert mode(token.parent) == 0o700 and os.stat(token.parent).st_uid == os.geteuid()

        # the other user: no token to read, and without it the instance refuses them
        candidates = [str(token), str(home / ".ray" / "auth_token")]
        control = intrude(0, record["address"], candidates)
        assert control["joined"] and control["read"] == [str(token)]  # the probe does reach Ray
        attack = intrude(uid, record["address"], candidates)
        assert attack["read"] == [] and not attack["joined"], attack
        assert "Authentication" in attack["error"] or "Unauthenticated" in attack["error"]

        # Ray's logs hold what the job printed; the other user can open none of them
        session = Path(record["session_dir"])
        logs = [p for p in session.rglob("*") if p.is_file() and not p.is_symlink() and MARKER.encode() in p.read_bytes()]
        assert logs, f"no log of {session} holds what the job printed"
        assert session.is_relative_to(ray_temp_dir())  # not /tmp/ray, open to all
        targets = [str(session), str(session / "logs"), *map(str, logs)]
        assert set(as_user(uid, _try_to_read, targets).values()) == {"Permission denied"}

    finally:
        (out / "done").touch()
        try:
            job.wait(90)
        except subprocess.TimeoutExpired:
            job.kill()
            job.wait()
    assert job.returncode == 0, job.stdout.read().decode()[-3000:]
    assert not token.exists()  # the launcher removed its token when it ended


def test_a_dist_session_without_a_cluster_never_writes_rays_default_token(reachable: Path) -> None:
    home = reachable / "victim"
    env = victim_env(home, KVCLI_DIST_IDLE="0")
    done = subprocess.run([str(KVCLI), "--type", "dist_sync", "init", "w", "[1, 2]"], env=env, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert not (home / ".ray").exists()
    assert "Token authentication is enabled" not in done.stderr  # kvcli chose token auth itself: no notice


def test_the_namespace_clusters_ray_logs_are_private() -> None:
    """bench/netns.py's cluster (``ray start --temp-dir``): Ray makes that folder 0777; it
    lives in a 0700 folder, so another user reads none of its logs."""
    sys.path.insert(0, str(HERE.parents[1]))
    from bench.netns import netns_cluster, unavailable

    reason = unavailable()
    if reason is not None:
        pytest.skip(f"no namespace cluster: {reason}")
    uid = other_uid()
    with netns_cluster(1, cpus=1, object_store_mib=100) as cluster:
        temp = Path(cluster.ray_temp)
        logs = [p for p in temp.rglob("*.log") if p.is_file() and not p.is_symlink()]
        assert logs, f"Ray wrote no logs under {temp}"
        assert mode(temp.parent) == 0o700 and os.stat(temp.parent).st_uid == os.geteuid()
        targets = [str(temp), *map(str, logs[:5])]
        assert set(as_user(uid, _try_to_read, targets).values()) == {"Permission denied"}


def test_rays_temp_folder_is_not_the_small_in_memory_runtime_folder(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """$XDG_RUNTIME_DIR is a small tmpfs: Ray's logs and spilled objects go to the temporary
    folder (where Ray's own /tmp/ray would be), in this user's 0700 folder there."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    temp = ray_temp_dir()
    assert not temp.is_relative_to(tmp_path)
    info = os.stat(temp.parent)
    assert info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == 0o700
    from kvcli.osutil import runtime_dir

    assert runtime_dir() == tmp_path / "kvcli"  # the sockets stay there
