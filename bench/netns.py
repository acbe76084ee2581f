"""A multi-node Ray cluster on one machine: network namespaces joined by veth pairs.

:func:`netns_cluster` makes N namespaces ("nodes"), each with one interface ``eth0`` on a
private test range (``10.213.0.1``, ``10.213.0.2``, ... /24), all joined to a bridge in a
namespace of its own (the "switch"). Every link is shaped with ``tc`` in both directions
(default 10 Gbit/s, plus 50 us each way where the kernel has ``sch_netem``; MTU 9000), so bytes between nodes cross
an emulated network and not memory. A Ray node runs in each namespace (``ray start
--block``, with custom resource ``node<i>``), the head in node 0. Nothing is sent to any
address this module did not create, and the context manager always removes what it made:
it ends the processes still in its namespaces (by pid, ``ip netns pids``) and deletes
the namespaces, also when the body raises.

Needs root, ``ip`` and ``tc`` (iproute2) and the sch_tbf kernel module;
:func:`unavailable` says in one line why it cannot run here, or None.

Used by ``bench/dist.py --nodes N`` and ``tests/dist/test_netns.py``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Iterator, Sequence

#: The private test range the namespaces' interfaces get addresses in.
SUBNET = "10.213.0"
#: The Ray head's GCS port (inside node 0's namespace: no clash with the machine's).
RAY_PORT = 6379
#: Environment of the Ray nodes and of the processes that join them: no usage reports,
#: worker processes at nice 0 (as kvcli's own local instance, and as ps-lite runs), and no
#: token authentication (a ``~/.ray/auth_token`` left by another tool must not lock
#: the drivers out of a cluster that lives only in these namespaces).
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "RAY_worker_niceness": "0"}
#: Jumbo frames: fewer packets per byte for the 2-core machines this runs on.
MTU = 9000


def unavailable() -> str | None:
    """Why a namespace cluster cannot run here (one line), or None when it can."""
    if os.name != "posix" or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "network namespaces need root (run the test as root to get a multi-node cluster)"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"`{tool}` (iproute2) is not installed"
    probe = f"kvp{uuid.uuid4().hex[:6]}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip() or made.returncode}"
    try:
        subprocess.run(["ip", "-n", probe, "link", "set", "lo", "up"], capture_output=True)
        tbf = subprocess.run(["tc", "-n", probe, "qdisc", "add", "dev", "lo", "root", *_tbf("10gbit")],
                             capture_output=True, text=True)
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    if tbf.returncode != 0:
        return f"tc cannot shape a link here (tbf): {tbf.stderr.strip()}"
    if shutil.which("ray", path=os.path.dirname(sys.executable)) is None:
        return "the `ray` command is not beside this Python: pip install 'kvcli[dist]'"
    return None


@dataclass
class NetCluster:
    """What :func:`netns_cluster` made: the namespaces and the Ray head's address."""

    namespaces: list[str]
    addresses: list[str]
    rate: str
    #: One-way delay per link direction, None when not emulated (no sch_netem here).
    delay: str | None
    gbit: float
    processes: list[subprocess.Popen] = field(default_factory=list)
    #: Ray's temp folder (its logs and sockets), inside a private folder (see :func:`ray_temp`).
    ray_temp: str = ""

    @property
    def ray_address(self) -> str:
        """``host:port`` of the Ray head (reachable from inside the namespaces only)."""
        return f"{self.addresses[0]}:{RAY_PORT}"

    def node_resource(self, node: int) -> dict[str, float]:
        """Ray resources that place an actor on node ``node``."""
        return {f"node{node}": 0.01}

    def command(self, node: int, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside node ``node``'s namespace."""
        return ["ip", "netns", "exec", self.namespaces[node], *argv]

    def run(self, node: int, argv: Sequence[str], **kwargs: object) -> subprocess.CompletedProcess:
        """Run ``argv`` in node ``node``'s namespace and wait (``subprocess.run``)."""
        return subprocess.run(self.command(node, argv), **kwargs)  # type: ignore[call-overload]


def _ip(*argv: str) -> None:
    result = subprocess.run(["ip", *argv], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(argv)}: {result.stderr.strip()}")


def _tbf(rate: str) -> list[str]:
    # burst: a few ms of the rate, so a 1000 Hz timer does not cap it below the rate
    return ["tbf", "rate", rate, "burst", "4mb", "latency", "100ms"]


def netem_available() -> bool:
    """Whether this kernel has ``sch_netem`` (delay emulation); probed in a scratch namespace."""
    probe = f"kvq{uuid.uuid4().hex[:6]}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return False
    try:
        return subprocess.run(["tc", "-n", probe, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
                              capture_output=True).returncode == 0
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)


def _tc(namespace: str, device: str, rate: str, delay: str | None) -> None:
    if delay:  # netem: rate and delay; limit = packets queued (the default 1000 drops 16 MiB bursts)
        shape = ["netem", "rate", rate, "delay", delay, "limit", "100000"]
    else:
        shape = _tbf(rate)
    argv = ["tc", "-n", namespace, "qdisc", "add", "dev", device, "root", *shape]
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {result.stderr.strip()}")


def _gbit(rate: str) -> float:
    units = {"gbit": 1.0, "mbit": 1e-3, "kbit": 1e-6}
    for unit, scale in units.items():
        if rate.endswith(unit):
            return float(rate[: -len(unit)]) * scale
    raise ValueError(f"rate {rate!r}: give it as e.g. 10gbit or 500mbit")


@contextlib.contextmanager
def netns_cluster(
    nodes: int = 2,
    *,
    rate: str = "10gbit",
    delay: str | None = "50us",
    cpus: int = 2,
    object_store_mib: int = 600,
    env: dict[str, str] | None = None,
) -> Iterator[NetCluster]:
    """``nodes`` namespaces with a Ray node each (see the module docstring); removed on exit.

    ``rate`` and ``delay`` shape each direction of every node's link (``delay`` is one way:
    a round trip between two nodes is four times it; it needs sch_netem, and without it
    only the rate is shaped, with ``tbf``, and ``cluster.delay`` is None). ``env`` is added to the Ray nodes'
    environment (their workers inherit it).
    """
    reason = unavailable()
    if reason is not None:
        raise RuntimeError(reason)
    tag = uuid.uuid4().hex[:6]
    switch = f"kvs{tag}"
    names = [f"kvn{tag}{i}" for i in range(nodes)]
    if delay is not None and not netem_available():
        delay = None  # this kernel has no sch_netem: the rate alone is shaped (tbf)
    cluster = NetCluster(names, [f"{SUBNET}.{i + 1}" for i in range(nodes)], rate, delay, _gbit(rate))
    made: list[str] = []
    temp = tempfile.mkdtemp(prefix=f"kvn{tag}")  # short: Ray's socket paths live under it
    cluster.ray_temp = ray_temp(temp)
    try:
        for namespace in [switch, *names]:
            _ip("netns", "add", namespace)
            made.append(namespace)
            _ip("-n", namespace, "link", "set", "lo", "up")
        _ip("-n", switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", switch, "link", "set", "br0", "up")
        for i, namespace in enumerate(names):
            port = f"p{i}"
            _ip("-n", namespace, "link", "add", "eth0", "mtu", str(MTU), "type", "veth",
                "peer", "name", port, "mtu", str(MTU), "netns", switch)
            _ip("-n", namespace, "addr", "add", f"{cluster.addresses[i]}/24", "dev", "eth0")
            _ip("-n", namespace, "link", "set", "eth0", "up")
            _ip("-n", switch, "link", "set", port, "master", "br0", "up")
            _tc(namespace, "eth0", rate, delay)  # the node's uplink
            _tc(switch, port, rate, delay)  # its downlink
        ray = os.path.join(os.path.dirname(sys.executable), "ray")
        base_env = {**os.environ, **(env or {}), **RAY_ENV}
        base_env.pop("RAY_ADDRESS", None)
        for i in range(nodes):
            argv = [ray, "start", "--block", f"--node-ip-address={cluster.addresses[i]}",
                    f"--num-cpus={cpus}", f'--resources={{"node{i}": 1}}',
                    f"--object-store-memory={object_store_mib << 20}", "--disable-usage-stats"]
            if i == 0:
                argv += ["--head", f"--port={RAY_PORT}", "--include-dashboard=false", f"--temp-dir={cluster.ray_temp}"]
            else:
                argv += [f"--address={cluster.ray_address}"]
            log = open(os.path.join(temp, f"ray-start-{i}.log"), "w")
            cluster.processes.append(subprocess.Popen(
                cluster.command(i, argv), env=base_env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            ))
            log.close()
            _wait_for_nodes(cluster, i + 1, temp)
        yield cluster
    finally:
        _teardown(cluster, made, temp)


def ray_temp(temp: str) -> str:
    """The Ray temp folder (logs, sockets) of a cluster whose private folder is ``temp``.

    Ray makes its temp folder open to all (mode 0777, as ``/tmp/ray``), and every node of
    the cluster writes there: it lives inside ``temp`` (0700, from ``mkdtemp``), which keeps
    every other local user out of the logs. Short: Ray's socket paths live under it."""
    return os.path.join(temp, "r")


def _wait_for_nodes(cluster: NetCluster, count: int, temp: str, timeout: float = 90.0) -> None:
    """Wait until the head lists ``count`` alive nodes (``ray`` asked from node 0)."""
    script = (
        "import ray,sys,logging;ray.init(address=sys.argv[1],logging_level=logging.ERROR);"
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        for process in cluster.processes:
            if process.poll() is not None:
                logs = "".join(open(os.path.join(temp, f)).read()[-800:] for f in sorted(os.listdir(temp)) if f.endswith(".log"))
                raise RuntimeError(f"a Ray node in the namespace cluster exited ({process.returncode}): {logs}")
        probe = cluster.run(0, [sys.executable, "-c", script, cluster.ray_address],
                            capture_output=True, text=True, timeout=60, env={**os.environ, **RAY_ENV})
        last = (probe.stdout.strip().splitlines() or [""])[-1]
        if probe.returncode == 0 and last.isdigit() and int(last) >= count:
            return
        time.sleep(1.0)
    raise RuntimeError(f"the namespace cluster's {count} Ray node(s) did not come up within {timeout:g}s ({last!r})")


def _teardown(cluster: NetCluster, made: list[str], temp: str) -> None:
    """End what runs in our namespaces (``ray start`` groups first, then any pid left in
    them), delete the namespaces and the temp folder."""
    for process in reversed(cluster.processes):
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    for process in cluster.processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(max(0.1, deadline - time.monotonic()))
    for namespace in made:
        for _ in range(20):  # Ray's workers notice their raylet is gone; end stragglers
            pids = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True).stdout.split()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            time.sleep(0.2)
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
    for process in cluster.processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    shutil.rmtree(temp, ignore_errors=True)


def link_bound(
    step_bytes: float, worker_nodes: Sequence[int], server_nodes: Sequence[int], gbit: float,
    presum: bool = False,
) -> float:
    """Seconds one push+pull step needs at least on links of ``gbit`` Gbit/s each way.

    Each worker pushes ``step_bytes`` split evenly over the servers and pulls as much
    back; a pushed share crosses the network when worker and server are on different
    nodes, and a pulled one at least once per other node with workers (they can share
    it there, as Ray's object store does). Each node has one uplink and one downlink: the
    bound is the busiest of them (bytes ÷ rate). That is the bound of the per-worker
    layout, what ps-lite (and kvcli with ``KVCLI_DIST_NO_PRESUM``) must move; with
    ``presum``, a node's workers' pushes are summed on the node first
    (:mod:`kvcli.store.ray.aggregate`), so each share crosses once per worker node
    each way.
    """
    share = step_bytes / len(server_nodes)
    up: dict[int, float] = {}
    down: dict[int, float] = {}
    for s in server_nodes:
        for w in (set(worker_nodes) if presum else worker_nodes):  # each push (or node sum) crosses
            if w != s:
                up[w] = up.get(w, 0.0) + share
                down[s] = down.get(s, 0.0) + share
        for w in set(worker_nodes) - {s}:  # the result crosses once per node that pulls it
            up[s] = up.get(s, 0.0) + share
            down[w] = down.get(w, 0.0) + share
    busiest = max([*up.values(), *down.values(), 0.0])
    return busiest * 8 / (gbit * 1e9)
