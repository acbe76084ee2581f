"""A local Ray cluster kept running in the background for a session home.

``kvcli cluster up`` starts it, ``down`` stops it, ``status`` reports it. Without one,
every one-shot command on a ``dist_sync`` / ``dist_async`` session starts (and stops) a
private Ray runtime, about 10 s each; with one, the command joins it.

The cluster is a *holder* process (``python -m kvcli.session.cluster``) that starts Ray with
``ray.init`` and keeps it until it gets SIGTERM, then shuts Ray down. It runs in its own
session (a terminal's Ctrl-C never reaches it) and writes ``cluster.json`` in the home
(its pid, the address, the CPUs) once Ray is up; a dist session of that home with no
address of its own joins that address. A holder that died leaves a stale file, which
:func:`status` recognises (its pid is gone) and :func:`start` replaces.

A dist session keeps its server actors in the cluster between commands (detached actors, see
:func:`kvcli.store.ray.group.keep_group`), so a one-shot command joins in well under a second
instead of starting them. Each command records its use in ``HOME/kept/<group>.json`` (the
session and its idle time, ``KVCLI_DIST_IDLE``); the holder stops a group whose record has
not been renewed for that long, or which ``kvcli reset`` / ``kvcli delete`` expired
(:func:`expire_kept`), and ``cluster down`` stops them all with Ray.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kvcli.errors import DistributedError
from kvcli.osutil import NOFOLLOW, PRIVATE_FILE, atomic_write, pid_alive, private_dir, write_secret

INFO_FILE = "cluster.json"
#: The cluster's Ray auth token (0600): Ray checks it on every call (token auth is on by
#: default for local clusters); processes that join read it through RAY_AUTH_TOKEN_PATH.
TOKEN_FILE = "cluster.token"
#: Seconds ``start`` waits for Ray to come up (first start on a cold machine is the slowest).
START_TIMEOUT = 120.0
#: The folder of the records of kept groups (one ``<group>.json`` each, its mtime the last use).
KEPT_DIR = "kept"
#: Seconds between the holder's looks at the kept groups' records.
REAP_EVERY = 1.0
#: Seconds ``stop`` waits for the holder to shut Ray down before killing it.
STOP_TIMEOUT = 30.0


@dataclass(frozen=True)
class ClusterInfo:
    """A running holder: its process id, the Ray address to join, its CPUs, when it started."""

    pid: int
    address: str
    cpus: int
    started: float


def info_path(home: Path) -> Path:
    """Where a home records its cluster."""
    return Path(home) / INFO_FILE


def token_path(home: Path) -> Path:
    """The file holding the cluster's auth token."""
    return Path(home) / TOKEN_FILE


def join_environment(home: Path) -> dict[str, str]:
    """The environment a process needs to join the home's cluster (its auth token)."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token_path(home))}


def status(home: Path) -> ClusterInfo | None:
    """The home's running cluster, or None (no file, or its holder is gone)."""
    path = info_path(home)
    if Path(home).is_dir():  # another user's home could name their cluster: refused, not joined
        private_dir(Path(home), "home folder")
    try:
        data = json.loads(path.read_text())
        info = ClusterInfo(int(data["pid"]), str(data["address"]), int(data["cpus"]), float(data["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if pid_alive(info.pid) else None


def start(home: Path, cpus: int | None = None) -> tuple[ClusterInfo, bool]:
    """Start the home's cluster (or find the one running); returns it and whether it is new.

    Raises:
        DistributedError: Ray is not installed, or did not come up within START_TIMEOUT.
    """
    running = status(home)
    if running is not None:
        return running, False
    if cpus is not None and cpus < 1:
        raise DistributedError(f"a cluster needs at least 1 CPU, not {cpus}")
    from kvcli.store.ray.group import import_ray

    import_ray("cluster")  # a clear error before a process is started
    home = private_dir(Path(home), "home folder", create=True)
    path = info_path(home)
    path.unlink(missing_ok=True)
    log = home / "cluster.log"
    token = token_path(home)
    token.unlink(missing_ok=True)
    write_secret(token)
    env = {**os.environ, **join_environment(home)}
    env.pop("RAY_AUTH_TOKEN", None)  # the file is the token
    with os.fdopen(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | NOFOLLOW, PRIVATE_FILE), "wb") as sink:
        holder = subprocess.Popen(
            [sys.executable, "-m", "kvcli.session.cluster", str(path), str(cpus or 0)],
            stdin=subprocess.DEVNULL, stdout=sink, stderr=sink, start_new_session=True, env=env,
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        info = status(home)
        if info is not None and info.pid == holder.pid:
            return info, True
        if holder.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise DistributedError(f"the Ray cluster did not start (exit {holder.returncode}): {tail[0]} (see {log})")
        time.sleep(0.1)
    _terminate(holder.pid)
    raise DistributedError(f"the Ray cluster did not start within {START_TIMEOUT:.0f} s (see {log})")


def stop(home: Path) -> ClusterInfo | None:
    """Stop the home's cluster; returns what was stopped (None: none was running)."""
    info = status(home)
    info_path(home).unlink(missing_ok=True)
    if info is not None:
        _terminate(info.pid)
    token_path(home).unlink(missing_ok=True)
    for path, _record in _kept_records(home):  # the groups went with Ray
        path.unlink(missing_ok=True)
    return info


def note_kept(home: Path, group: str, session: Path, idle: float) -> bool:
    """Record that ``session`` uses the kept ``group`` now (for ``idle`` more seconds).

    Returns whether the record was there already: False means the group is new, or the
    holder stopped it since the last command (a live store on it must be made again).
    """
    folder = private_dir(Path(home) / KEPT_DIR, "kept-groups folder", create=True)
    path = folder / f"{group}.json"
    existed = path.exists()
    _replace_json(path, {"session": str(Path(session).resolve()), "idle": idle})  # its mtime is now
    return existed


def expire_kept(home: Path, session: Path) -> int:
    """Mark every kept group of ``session`` idle, so the holder stops it within a second
    (``reset`` / ``delete`` of the session); returns how many there were."""
    count = 0
    for path, record in _kept_records(home):
        if record.get("session") == str(Path(session).resolve()):
            _replace_json(path, {**record, "idle": 0})
            count += 1
    return count


def _replace_json(path: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` to ``path`` (private, 0600) through a temporary file, so that a
    reader (the reaper, a command) sees the whole file or the old one, never half. Not
    fsynced: a record lost in a crash only makes its group start again."""
    atomic_write(path, json.dumps(payload).encode(), sync=False)


def _kept_records(home: Path) -> list[tuple[Path, dict[str, Any]]]:
    records = []
    for path in sorted((Path(home) / KEPT_DIR).glob("*.json")):
        try:
            records.append((path, dict(json.loads(path.read_text()))))
        except (OSError, ValueError, TypeError):  # gone or being replaced: seen next time
            continue
    return records


def reap_idle(home: Path, now: float | None = None) -> list[str]:
    """Stop the kept groups whose record is older than its idle time (the holder calls it;
    needs a Ray connection); returns the groups stopped."""
    from kvcli.store.ray.group import stop_group

    now = time.time() if now is None else now
    stopped = []
    for path, record in _kept_records(home):
        try:
            expired = path.stat().st_mtime + float(record.get("idle", 0)) <= now
        except (OSError, ValueError, TypeError):
            continue
        if not expired:
            continue
        busy = _session_lock(record)
        if busy is None:  # a command of the session is running (it may be starting the group)
            continue
        try:
            if _claim(path, now):
                stop_group(path.stem)
                stopped.append(path.stem)
        finally:
            busy.release()
    return stopped


def _session_lock(record: dict[str, Any]) -> Any:
    """The session's lock, taken exclusively at once (None: a command holds it)."""
    from kvcli.errors import SessionError
    from kvcli.session.files import session_lock

    lock = session_lock(Path(str(record.get("session"))), timeout=0.0)
    try:
        lock.acquire(shared=False)
    except SessionError:
        if Path(str(record.get("session"))).is_dir():
            return None
        # the session was deleted: nothing can be using its group
    return lock


def _claim(path: Path, now: float) -> bool:
    """Take an expired record away (True), unless a command renewed it meanwhile."""
    claimed = path.with_name(f".{path.stem}.reaping")
    try:
        os.rename(path, claimed)  # a command renewing it from now on makes a new record
        renewed = claimed.stat().st_mtime + float(json.loads(claimed.read_text()).get("idle", 0)) > now
    except (OSError, ValueError, TypeError):
        return False
    if renewed:  # a command came between the look and the claim: keep it
        os.replace(claimed, path)
        return False
    claimed.unlink(missing_ok=True)
    return not path.exists()  # renewed since the claim: the command uses the group


def _terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.1)
    if pid_alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)  # the holder leads its own process group
        except ProcessLookupError:
            pass


def _hold(path: Path, cpus: int) -> None:
    """The holder: start Ray, record it, wait for SIGTERM, shut Ray down."""
    import ray

    from kvcli.store.ray.group import start_local_ray

    stopping = False

    def on_term(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    start_local_ray(ray, token=token_path(path.parent), num_cpus=cpus or None)
    signal.signal(signal.SIGTERM, on_term)  # after ray.init, which installs its own handler
    cpus_granted = int(ray.cluster_resources().get("CPU", 0))  # type: ignore[no-untyped-call]
    info = ClusterInfo(os.getpid(), str(ray.get_runtime_context().gcs_address), cpus_granted, time.time())
    _replace_json(path, asdict(info))
    reaped = time.monotonic()
    try:
        while not stopping:
            time.sleep(0.2)
            if time.monotonic() - reaped < REAP_EVERY:
                continue
            reaped = time.monotonic()
            try:
                reap_idle(path.parent)
            except Exception as error:  # a failed stop is retried next time; the holder stays up
                print(f"kvcli cluster: stopping idle groups failed: {error}", file=sys.stderr, flush=True)
    finally:
        ray.shutdown()


__all__ = ["ClusterInfo", "INFO_FILE", "KEPT_DIR", "TOKEN_FILE", "expire_kept", "info_path", "join_environment",
           "note_kept", "reap_idle", "start", "status", "stop", "token_path"]

if __name__ == "__main__":
    _hold(Path(sys.argv[1]), int(sys.argv[2]))
