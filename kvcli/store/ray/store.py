"""``dist_sync`` and ``dist_async``: the KVStore spread over Ray actors.

A *group* is one distributed job: ``num_workers`` worker processes (ranks ``0..W-1``) that
push and pull, ``num_servers`` :class:`~kvcli.store.dist.server.KeyServer` actors that hold
the values, and a :class:`~kvcli.store.dist.server.Coordinator` actor for barriers. The
actors are named in the Ray namespace ``kvcli-<group>``, so every worker finds them.

How a worker learns its place — the ``DMLC_*`` variables of MXNet — is environment
variables, set by :func:`kvcli.store.dist.launch.launch` / ``kvcli launch``:

=======================  ================================================================
``KVCLI_RAY_ADDRESS``    the Ray cluster (default: the one this process is connected to,
                         else a new local one)
``KVCLI_GROUP``          the group id (default: a new group of one worker)
``KVCLI_RANK``           this worker's rank (default 0)
``KVCLI_NUM_WORKERS``    the number of workers (default 1)
``KVCLI_NUM_SERVERS``    servers to start when this worker starts the group (default 1)
``KVCLI_DIST_TIMEOUT``   seconds to wait for other workers before failing (default 60)
``KVCLI_BIGARRAY_BOUND`` arrays of at least this many elements are split by rows over the
                         servers (default 1,000,000, as MXNet's ``MXNET_KVSTORE_BIGARRAY_BOUND``)
=======================  ================================================================

The same names, lower-case without the prefix, are options of ``kvcli.create`` (declared
in :data:`kvcli.store.DIST_OPTIONS`: ``address``,
``group``, ``rank``, ``num_workers``, ``num_servers``, ``timeout``, ``bigarray_bound``) plus
``server_restarts`` and ``member`` (a stable id to register this rank with: the commands of
one session, one after another, re-join their kept group as the same worker); an option wins
over the variable. A store created without a launcher is
a group of one worker that starts its own servers and stops them in :meth:`close`.

Semantics (MXNet's):

* ``init``, ``set_updater`` / ``set_optimizer`` and ``load_optimizer_states`` are
  collective: every worker calls them, in the same order. Only rank 0's init value and
  updater are sent to the servers; the others wait at a barrier and then check that the
  servers hold what they expect.
* ``push`` sums a worker's per-device values on the worker, then sends the sum. In
  ``dist_sync`` the server applies the updater once per key per step, on the sum of all
  workers' pushes in rank order; in ``dist_async`` it applies each push as it arrives.
  In ``dist_sync``, the workers of one node push to a server on another node through their
  node's aggregator, which sums them first, so one push per node crosses
  (:mod:`kvcli.store.dist.aggregate`: which pushes, and the order of the sum).
* ``pull`` waits until this worker's last push to the key has been applied, so ``push;
  pull`` sees the step's result on every worker. Waiting longer than ``timeout`` raises
  :class:`~kvcli.errors.DistributedError` naming the key and the ranks that did not push;
  when the launcher saw such a rank die or exit, the error comes at once.
* The updater (or optimizer) runs on the servers, and its state lives there;
  :meth:`save_optimizer_states` gathers it.
* With ``set_gradient_compression``, a worker compresses its (device-summed) push with its
  own residual and sends only the 2-bit codes; the server decodes them and sums the workers
  (see :mod:`kvcli.store.compression`). ``broadcast`` is a collective ``init`` and a pull.

Where values travel depends on where the actors run. Between a worker and a server on the
*same Ray node* (the usual single machine), dense values go through shared memory: the
worker copies its push into a reused segment of its own and the server reads it there;
a ``dist_sync`` server keeps its values in shared memory and a pull copies them out; the
calls carry only descriptors (:mod:`kvcli.store.dist.shm`). ``KVCLI_DIST_NO_SHM`` turns
this off. Otherwise (other nodes, ``dist_async`` pulls, row-sparse and compressed pushes)
values travel through Ray's object store: a push puts the array there (``ray.put``) and
hands the server a reference; a pull gets back a reference to a copy the server put
there — one copy per step, shared by every worker that pulls it (without an updater, a
step made of one such push, one worker's or one node's pre-sum, is answered with the
pushed object itself: no copy, and nothing crosses back). Small values travel inline in
the calls. Such a push returns once its values are handed over (MXNet's push is
asynchronous too): the store's next operation waits for the server's answer and raises
the push's error, if any. When a worker pulled a key after its last push, its next push
asks the server for the step's result, and the push that completes the step gets it back
with its answer: that pull then makes no call of its own.

**Server restarts.** Servers are started with ``max_restarts=server_restarts`` (default 1).
Ray restarts a dead server with no values and no updater. Any operation that was in flight
when it died raises ``DistributedError`` ("... died or is restarting"); afterwards every
push or pull of a key it held raises ``DistributedError`` ("... was restarted by Ray and lost
its values ...: call init(...) again on every worker"; a push to another node: at the store's
next call) — never a stale or zero value. Calling
``init`` again for those keys on every worker restores service: rank 0 re-sends the updater
to the restarted server, and the keys' optimizer state starts afresh, as for any re-init.
"""

from __future__ import annotations

import pickle
import time
import uuid
from typing import Any, Sequence

import numpy as np

from kvcli import config
from kvcli.errors import DistributedError, KVCliError, StoreError
from kvcli.store.base import Key, KVStore
from kvcli.store.ray.group import (
    DEFAULT_SERVER_RESTARTS,
    DEFAULT_TIMEOUT,
    ENV_ADDRESS,
    Group,
    Layout,
    cluster_address,
    connect,
    find_group,
    import_ray,
    layout_of,
    mode_of,
    namespace_of,
    start_group,
)
from kvcli.store.ray.server import INLINE_BYTES, PACKED_METHODS, WAIT_GROUP, WAITING_METHODS
from kvcli.store.ray.shm import Mappings, PushPool, Results, ShmPart
from kvcli.arrays.summation import sum_into
from kvcli.store.ray.sparse import DistRowSparse, join_parts, rows_part
from kvcli.store.ray.state import DistState

ENV_GROUP = config.GROUP.name
ENV_RANK = config.RANK.name
ENV_NUM_WORKERS = config.NUM_WORKERS.name
ENV_NUM_SERVERS = config.NUM_SERVERS.name
ENV_TIMEOUT = config.DIST_TIMEOUT.name
ENV_BIGARRAY_BOUND = config.BIGARRAY_BOUND.name

DEFAULT_BIGARRAY_BOUND = config.BIGARRAY_BOUND.default
#: What a dead server means for the job (Ray restarts it, empty).
SERVER_LOST = "a server restarted by Ray has lost its values: call init(...) again on every worker"
#: What a dead coordinator means. It is not restarted: a new one would not know which ranks
#: had joined or reached which barrier, and guessing could let a barrier pass too early.
COORDINATOR_LOST = (
    "the group's coordinator is gone and is not restarted (it alone knew which ranks joined "
    "and where each barrier stood): stop every worker and launch the job again"
)
#: What a dead node aggregator means (it lives as long as the group's coordinator).
AGGREGATOR_LOST = (
    "this node's aggregator (kvcli.store.dist.aggregate) is gone with the group's coordinator "
    "or its node: stop every worker and launch the job again"
)
#: Extra seconds a worker waits for a server's answer beyond the server's own timeout, so
#: the server's message (naming the missing ranks) arrives before the worker gives up.
ANSWER_GRACE = 15.0



def unpacked(answer: Any) -> Any:
    """A server's answer, unpickled when :meth:`KeyServer.packed` sent it as bytes (no
    answer of a server method is bytes otherwise)."""
    return pickle.loads(answer) if isinstance(answer, bytes) else answer


# ---------------------------------------------------------------------- the store
class DistStore(DistState, DistRowSparse, KVStore):
    """A worker's handle on a distributed store (see the module docstring)."""

    def __init__(
        self,
        kind: str,
        *,
        address: str | None = None,
        group: str | None = None,
        rank: int | None = None,
        num_workers: int | None = None,
        num_servers: int | None = None,
        timeout: float | None = None,
        bigarray_bound: int | None = None,
        server_restarts: int | None = None,
        member: str | None = None,
    ) -> None:
        super().__init__()
        if kind not in ("dist_sync", "dist_async"):
            raise StoreError(f"unknown distributed store type {kind!r}: use dist_sync or dist_async")
        self.type = kind
        self._mode = mode_of(kind)
        self._ray = connect(address, kind)
        self._timeout = float(timeout if timeout is not None else config.get(config.DIST_TIMEOUT))
        if not self._timeout > 0:
            raise StoreError(f"timeout must be a positive number of seconds, got {self._timeout}")
        self._bound = int(
            bigarray_bound if bigarray_bound is not None
            else config.get(config.BIGARRAY_BOUND)
        )
        group = group or config.get(config.GROUP)
        self._rank = int(rank if rank is not None else config.get(config.RANK))
        wanted_workers = num_workers if num_workers is not None else config.get(config.NUM_WORKERS)
        wanted_servers = num_servers if num_servers is not None else config.get(config.NUM_SERVERS)
        restarts = DEFAULT_SERVER_RESTARTS if server_restarts is None else int(server_restarts)

        if group is None:
            if (wanted_workers or 1) != 1 or self._rank != 0:
                raise DistributedError(
                    f"{kind} with {wanted_workers} workers (rank {self._rank}) needs a group id: "
                    f"start the workers with `kvcli launch` or set {ENV_GROUP} to the same value in each"
                )
            self._group = start_group(
                1, wanted_servers or 1, mode=self._mode, server_restarts=restarts, timeout=self._timeout
            )
        else:
            self._group = self._join(group, wanted_workers, wanted_servers or 1, restarts)
        try:
            joined = self._call(
                self._group.coordinator.register.remote(
                    self._rank, member or uuid.uuid4().hex, self._mode, self._ray.get_runtime_context().get_node_id()
                ),
                f"joining kvcli group {self._group.id!r}",
                COORDINATOR_LOST,
            )
            self._num_workers = int(joined["num_workers"])
            self._num_servers = int(joined["num_servers"])
            for name, wanted, actual in (
                ("num_workers", wanted_workers, self._num_workers),
                ("num_servers", num_servers, self._num_servers),
            ):
                if wanted is not None and int(wanted) != actual:
                    raise DistributedError(
                        f"{name}={wanted} but kvcli group {self._group.id!r} has {actual}: "
                        f"leave {name} unset to use the group's"
                    )
        except BaseException:
            if self._group.owned:  # do not leave actors behind for a store that never was
                self._group.stop(self._ray)
            raise
        self._servers = self._group.servers
        self._seq: dict[Key, int] = {}
        self._layouts: dict[Key, Layout] = {}
        #: Calls queued by the hooks: (ObjectRef, what it is, server index).
        self._inflight: list[tuple[Any, str, int]] = []
        #: Pushes queued by :meth:`_apply` per server, sent together by :meth:`_send_pushes`.
        self._outbox: dict[int, list[tuple[Key, int, Any, Any]]] = {}
        self._prefetched: dict[Key, np.ndarray] = {}
        #: Pushes to servers on other nodes, sent and not answered yet: (ObjectRef, what it
        #: is, server, keys). :meth:`_settle_pushes` waits for them (see :meth:`push`).
        self._unsettled: list[tuple[Any, str, int, list[Key]]] = []
        #: Step results a server handed back with a push's answer, by (key, server):
        #: (the step, the value or ``[ObjectRef]``); the next pull of the step uses them.
        self._handed: dict[tuple[Key, int], tuple[int, Any]] = {}
        #: Keys pulled since their last push: their next push asks for the step's result.
        self._pulled_keys: set[Key] = set()
        self._barriers = 0
        #: Push segments per server on this node (servers elsewhere have none).
        self._pools: dict[int, PushPool] = {}
        #: The servers' value segments this worker has mapped (pulls copy out of them).
        self._pulled = Mappings()
        #: Where this worker reads dist_sync results on its node without asking.
        self._results = Results(self._pulled)
        #: dist_sync: the node aggregator each server's pushes go through (servers on
        #: other nodes, when this node has several workers), decided at the first push.
        self._presum: dict[int, Any] | None = None
        #: Push segments for this node's aggregator (None: through the object store).
        self._presum_pool: PushPool | None = None
        #: Pushes queued for the aggregator per server, sent by :meth:`_send_pushes`.
        self._presum_outbox: dict[int, list[tuple[Key, int, int, Any]]] = {}
        #: How many times each key was initialised: the aggregator tells inits apart by it.
        self._generation: dict[Key, int] = {}
        self._server_nodes: list[str] | None = None
        #: Calls to the aggregator not answered yet: (ObjectRef, what, server, keys).
        self._presum_calls: list[tuple[Any, str, int, list[Key]]] = []
        if not config.get(config.DIST_NO_SHM):
            here = self._ray.get_runtime_context().get_node_id()
            pings = self._call([s.ping.remote() for s in self._servers], "asking the kvcli servers where they run")
            self._server_nodes = [ping["node"] for ping in pings]
            self._pools = {i: PushPool() for i, ping in enumerate(pings) if ping["node"] == here}

    def _join(self, group: str, num_workers: int | None, num_servers: int, restarts: int) -> Group:
        """Find a launched group; rank 0 starts it when nobody has (a manual launch)."""
        found = find_group(group, self._timeout)
        if found is not None:
            return found
        if self._rank == 0:
            if num_workers is None:
                raise DistributedError(
                    f"kvcli group {group!r} is not running and {ENV_NUM_WORKERS} is not set: "
                    "rank 0 needs it to start the group"
                )
            try:
                return start_group(
                    num_workers, num_servers, group=group, server_restarts=restarts, timeout=self._timeout
                )
            except DistributedError:
                found = find_group(group, self._timeout)  # another process won the race
                if found is None:
                    raise
                return found
        deadline = time.monotonic() + self._timeout
        while time.monotonic() < deadline:
            time.sleep(0.2)
            found = find_group(group, self._timeout)
            if found is not None:
                return found
        raise DistributedError(
            f"rank {self._rank}: kvcli group {group!r} did not appear within {self._timeout:g}s; "
            "start the workers with `kvcli launch`, or start rank 0 too"
        )

    # ------------------------------------------------------------------ MXNet API
    @property
    def rank(self) -> int:
        """This worker's rank, ``0..num_workers-1``."""
        return self._rank

    @property
    def num_workers(self) -> int:
        """The number of workers in the group."""
        return self._num_workers

    @property
    def num_servers(self) -> int:
        """The number of server actors holding the values."""
        return self._num_servers

    @property
    def group(self) -> str:
        """The group id (``KVCLI_GROUP``) of this job."""
        return self._group.id

    def barrier(self) -> None:
        """Wait until every worker calls ``barrier()`` (DistributedError after ``timeout``)."""
        self._check_open()
        with self._lock:
            self._settle_pushes()
        if self._num_workers == 1:
            return
        self._barriers += 1
        self._call(
            self._group.coordinator.barrier.remote(self._rank, self._barriers, self._timeout),
            f"barrier {self._barriers}",
            COORDINATOR_LOST,
        )

    def _set_values(self, key: Key | Sequence[Key], value: Any, reset: bool) -> None:
        """Initialise (or load) keys — collectively: every worker calls it; rank 0's value is
        stored. Other ranks wait at a barrier, then check that the servers hold the shapes
        and dtypes they were given (a mismatch raises :class:`~kvcli.errors.ShapeMismatchError`).
        """
        with self._lock:
            self._check_open()
            self._settle_pushes()
            try:
                super()._set_values(key, value, reset)
            finally:
                answers = self._wait_inflight()
            if self._rank == 0:
                needy = sorted({server for server, needs in answers if needs})
                if needy:  # a restarted server: give it the updater again
                    self._ship_updater(needy)
        if self._num_workers > 1:
            self.barrier()
            if self._rank != 0:
                keys = list(key) if isinstance(key, (list, tuple)) else [key]
                self._check_servers_hold([k if isinstance(k, str) else int(k) for k in keys])  # type: ignore[arg-type]

    def push(self, key: Key | Sequence[Key], value: Any, priority: int = 0) -> None:
        """Push (see :meth:`KVStore.push`).

        Returns once the values are handed over: copied into shared memory or Ray's object
        store, the calls sent. A server on this node has applied them by then (its answer
        says which push segments are free again); a server on another node answers later,
        as MXNet's push is asynchronous: the next operation of this store (a pull, a push,
        a barrier, ...) waits for that answer first and raises the push's error if it failed.
        """
        with self._lock:
            self._settle_pushes()
            sent: dict[int, list[Key]] = {}
            try:
                super().push(key, value, priority)
                sent = self._send_pushes()
            finally:
                self._outbox = {}
                self._presum_outbox = {}
                presum_error: BaseException | None = None
                try:
                    self._settle_presums()
                except BaseException as error:  # raised once the other calls are waited for
                    presum_error = error
                calls, self._inflight = self._inflight, []
                for ref, what, server in calls:  # pushes to other nodes: answered at the next operation
                    if server in sent and server not in self._pools:
                        self._unsettled.append((ref, what, server, sent[server]))
                    else:
                        self._inflight.append((ref, what, server))
                answers = self._wait_inflight()
                if presum_error is not None:
                    raise presum_error
            for server, applied in answers:  # push segments the servers are done with
                pool = self._pools.get(server)
                if pool is not None and server in sent:
                    for pushed, (count, where, _) in zip(sent[server], applied):
                        pool.settle(pushed, count)
                        if where is not None:
                            # a dist_sync result stays put until this worker pushes again: the
                            # next pull reads it there once it is applied (this push's answer
                            # may say so already: it completed the step)
                            self._results.learn(pushed, server, where, applied=count)

    def pull(self, key: Key | Sequence[Key], out: Any = None, priority: int = 0, ignore_sparse: bool = True) -> Any:
        """Pull (see :meth:`KVStore.pull`), after this worker's pushes have been applied."""
        with self._lock:
            self._check_open()
            if out is None:
                self._prefetched = self._fetch(self._keys_of(key))  # all keys from all servers at once
                try:
                    return super().pull(key, out=out, priority=priority, ignore_sparse=ignore_sparse)
                finally:
                    self._prefetched = {}
            # the base class's pull, with every output checked before anything is fetched
            plan = [(k, *self._pull_targets(k, o, ignore_sparse)) for k, o in self._pair(key, out, "pull")]
            self._prefetched = self._fetch([k for k, _, _ in plan])
            try:
                for k, buffers, targets in plan:
                    self._copy_out(k, buffers, targets)
            finally:
                self._prefetched = {}
            return out

    def save_optimizer_states(self, fname: Any, dump_optimizer: bool = False) -> None:
        """Gather the optimizer state from the servers and write it (see the base class)."""
        with self._lock:
            self._settle_pushes()
            updater = self._stateful_updater("save")
            states = [
                self._call(server.get_state.remote(), f"gathering optimizer state from kvcli server {index}")
                for index, server in enumerate(self._servers)
            ]
            updater.load_state_dict(self._merge_states(states))
            super().save_optimizer_states(fname, dump_optimizer)

    # ------------------------------------------------------------------ backend hooks
    def _write(self, key: Key, array: np.ndarray) -> None:
        old = self._layouts.get(key, [])
        layout = layout_of(key, array.shape, self._num_servers, self._bound)
        self._layouts[key] = layout
        self._seq[key] = 0
        self._generation[key] = self._generation.get(key, 0) + 1
        for pool in self._pool_list():  # the servers drop pending pushes of a re-init key
            pool.forget(key)
        self._results.forget(key)
        self._forget_handed(key)
        if self._rank != 0:
            return
        for server, rows in layout:
            part = array if rows is None else rows_part(array, rows)
            self._inflight.append(
                (
                    self._servers[server].init.remote(key, self._ray.put(part), self._mode, self._resetting),
                    f"init of key {key!r} on kvcli server {server}",
                    server,
                )
            )
        for server in {s for s, _ in old} - {s for s, _ in layout}:  # the shape changed
            self._inflight.append(
                (self._servers[server].delete.remote(key), f"init of key {key!r} on kvcli server {server}", server)
            )

    def _stored(self, key: Key) -> np.ndarray:
        """A writable *copy* of the value: dist values live on the servers, not here."""
        return np.array(self._read(key), copy=True)

    def _reduce(self, key: Key, arrays: Sequence[np.ndarray]) -> np.ndarray:
        # Sum this worker's devices here (MXNet's worker-side merge); servers sum workers.
        if len(arrays) == 1:
            return arrays[0]  # sent as it is: ray.put copies it
        info = self._info[key]
        return sum_into(np.empty(info.shape, info.dtype), arrays)

    def _apply(self, key: Key, merged: np.ndarray) -> None:
        """Queue this worker's sum for the servers (sent by :meth:`_send_pushes`)."""
        seq = self._seq[key] = self._seq.get(key, 0) + 1
        for index, (server, rows) in enumerate(self._layouts[key]):
            part = merged if rows is None else merged[rows]
            packed = self._compressed_part(key, index, part)
            if packed is not None:
                part, decode = packed
            else:
                decode = None
            if decode is None and type(part) is np.ndarray and self._presummed(server):
                # summed with this node's other workers first (see kvcli.store.dist.aggregate)
                value = part if self._presum_pool is not None else self._travelling(part)
                self._presum_outbox.setdefault(server, []).append((key, self._generation.get(key, 0), seq, value))
                continue
            if server in self._pools and decode is None:
                value = part  # packed into a push segment by _send_pushes
            else:
                value = self._travelling(part)
            self._outbox.setdefault(server, []).append((key, seq, value, decode))

    def _pool_list(self) -> list[PushPool]:
        """Every push pool of this worker: per server on this node, and the aggregator's."""
        return [*self._pools.values(), *([self._presum_pool] if self._presum_pool is not None else [])]

    def _presummed(self, server: int) -> bool:
        """Whether this worker's dist_sync pushes to ``server`` go through its node's
        aggregator: the server runs on another node and this node has other workers."""
        if self._mode != "sync" or self._num_workers == 1:
            return False
        if self._presum is None:
            self._presum = self._plan_presum()
        return server in self._presum

    def _plan_presum(self) -> dict[int, Any]:
        """The node aggregator per server (see :mod:`kvcli.store.dist.aggregate`): started
        (or found) on this node, the same for every worker of the node."""
        if config.get(config.DIST_NO_PRESUM):
            return {}
        here = self._ray.get_runtime_context().get_node_id()
        if self._server_nodes is None:
            pings = self._call([s.ping.remote() for s in self._servers], "asking the kvcli servers where they run")
            self._server_nodes = [ping["node"] for ping in pings]
        elsewhere = [i for i, node in enumerate(self._server_nodes) if node != here]
        if not elsewhere:
            return {}
        nodes = self._call(
            self._group.coordinator.placement.remote(self._timeout), "asking where the workers run", COORDINATOR_LOST
        )
        local = sorted(rank for rank, node in nodes.items() if node == here)
        if len(local) < 2:
            return {}
        aggregator = self._call(
            self._group.coordinator.aggregator.remote(here, local, self._servers),
            "starting this node's aggregator", COORDINATOR_LOST,
        )[0]
        if not config.get(config.DIST_NO_SHM):
            self._presum_pool = PushPool()
        return {server: aggregator for server in elsewhere}

    def _compressed_values(self, key: Key, arrays: list[Any]) -> list[Any]:
        return arrays  # compressed after the worker's own sum, per server part (in _apply)

    def _travelling(self, part: np.ndarray) -> Any:
        """A part as it goes to a server without shared memory: small ones inside the call,
        a big one put in the object store once (the only copy a push makes), by reference."""
        return part if part.nbytes <= INLINE_BYTES else [self._ray.put(part)]

    def _send_pushes(self) -> dict[int, list[Key]]:
        """One call per server carries every key of this push; returns the keys per server.

        For a server on this node, the dense uncompressed parts are packed into one push
        segment; when every segment of its pool still holds unapplied pushes (this worker
        pushed several steps without pulling), this push goes through the object store.
        """
        self._send_presums()
        outbox, self._outbox = self._outbox, {}
        for server, items in outbox.items():
            pool = self._pools.get(server)
            if pool is None:
                continue
            local = [i for i, item in enumerate(items) if item[3] is None and isinstance(item[2], np.ndarray)]
            if not local:
                continue
            packed = pool.pack([(items[i][0], items[i][1], items[i][2]) for i in local])
            parts: list[ShmPart | None] = list(packed) if packed is not None else [None] * len(local)
            for i, where in zip(local, parts):
                key, seq, array, decode = items[i]
                items[i] = (key, seq, self._travelling(array) if where is None else where, decode)
        for server, items in outbox.items():
            pool = self._pools.get(server)
            retired: list[str] = []
            if pool is not None:
                retired, pool.retired = pool.retired, []
            # A server elsewhere hands back the step's result of a key this worker pulled
            # after its last push (it will likely pull again): that pull then needs no call.
            want = None
            if pool is None and self._mode == "sync":
                want = [item[0] in self._pulled_keys for item in items]
            for item in items:
                self._handed.pop((item[0], server), None)
            keys = ", ".join(repr(item[0]) for item in items[:3]) + (", ..." if len(items) > 3 else "")
            self._inflight.append(
                (
                    self._invoke(server, "push_many", self._rank, items, retired, want),
                    f"push of key{'s' * (len(items) > 1)} {keys} to kvcli server {server}",
                    server,
                )
            )
        for items in outbox.values():
            self._pulled_keys.difference_update(item[0] for item in items)
        return {server: [item[0] for item in items] for server, items in outbox.items()}

    def _send_presums(self) -> None:
        """One call per server to this node's aggregator carries every key of this push
        (their values packed into one push segment, or by reference): queued in
        :attr:`_presum_calls`, answered (at once: it runs on this node) in :meth:`push`."""
        outbox, self._presum_outbox = self._presum_outbox, {}
        pool = self._presum_pool
        for server, items in outbox.items():
            if pool is not None:
                packed = pool.pack([(key, seq, value) for key, _, seq, value in items])
                if packed is None:  # every segment still holds unsummed pushes
                    items = [(key, gen, seq, self._travelling(value)) for key, gen, seq, value in items]
                else:
                    items = [(key, gen, seq, where) for (key, gen, seq, _), where in zip(items, packed)]
            retired: list[str] = []
            if pool is not None:
                retired, pool.retired = pool.retired, []
            keys = ", ".join(repr(item[0]) for item in items[:3]) + (", ..." if len(items) > 3 else "")
            self._presum_calls.append((
                self._presum[server].push.remote(self._rank, server, items, retired),  # type: ignore[index]
                f"push of key{'s' * (len(items) > 1)} {keys} to this node's aggregator for kvcli server {server}",
                server,
                [item[0] for item in items],
            ))
            self._pulled_keys.difference_update(item[0] for item in items)
            for item in items:
                self._handed.pop((item[0], server), None)

    def _settle_presums(self) -> None:
        """Wait for the aggregator's answers to this push: free the push segments it has
        summed; the server's answer to a push the aggregator sent is waited for like any
        push to another node (:meth:`_settle_pushes`). Raises the first error."""
        calls, self._presum_calls = self._presum_calls, []
        first_error: BaseException | None = None
        for ref, what, server, keys in calls:
            try:
                counts, upstream, completed = self._call(ref, what, AGGREGATOR_LOST)
            except BaseException as error:
                first_error = first_error or error
                continue
            if self._presum_pool is not None:
                for key, count in zip(keys, counts):
                    self._presum_pool.settle(key, count)
            if upstream is not None:
                # its answer hands back the step's results: this worker's next pull makes no call
                self._unsettled.append((upstream[0], f"{what} (sent on by the aggregator)", server, completed))
        if first_error is not None:
            raise first_error

    def _compressed_part(self, key: Key, part_index: int, part: np.ndarray) -> tuple[np.ndarray, Any] | None:
        """With gradient compression on: this worker's part compressed with its residual,
        and what the server needs to decode it (shape, threshold); else None. Only the
        worker-to-server direction is compressed, as in MXNet."""
        if self._compression is None:
            return None
        packed = self._compression.compress(key, part_index, part)
        return packed, (part.shape, self._compression.spec.server_threshold())

    def _read(self, key: Key) -> np.ndarray:
        if key in self._prefetched:
            return self._prefetched[key]
        return self._fetch([key])[key]

    def _updater_changed(self) -> None:
        self._settle_pushes()
        if self._rank == 0:
            self._ship_updater(range(self._num_servers))
        if self._num_workers > 1:
            self.barrier()

    def delete(self, key: Key) -> None:
        """Forget ``key`` — collectively, like ``init``: every worker calls it.

        A barrier first (nobody still pushes or pulls the key), then rank 0 removes it from
        the servers, then a barrier again, so that once ``delete`` returns on any worker the
        key is gone everywhere.
        """
        with self._lock:
            self._check_open()
            self._info_of(self._keys_of(key)[0])  # an unknown key fails before any barrier
            self.barrier()
            super().delete(key)
        self.barrier()

    def _forget(self, key: Key) -> None:
        layout = self._layouts.pop(key, [])
        self._seq.pop(key, None)
        for pool in self._pool_list():
            pool.forget(key)
        self._results.forget(key)
        self._forget_handed(key)
        if self._rank != 0:
            return
        for server, _ in layout:
            self._inflight.append(
                (self._servers[server].delete.remote(key), f"delete of key {key!r} on kvcli server {server}", server)
            )
        self._wait_inflight()

    def _shutdown(self) -> None:
        self._inflight.clear()
        self._handed.clear()
        try:
            self._settle_pushes()  # a failed last push still says so, after the cleanup
        finally:
            self._release()

    def _release(self) -> None:
        """Unmap and close this worker's shared memory; stop the group it owns."""
        for server, pool in self._pools.items():
            pool.close()
            if not self._group.owned:  # the group lives on: let the server unmap them now
                self._servers[server].release.remote(self._rank)
        self._pools = {}
        if self._presum_pool is not None:
            self._presum_pool.close()
            self._presum_pool = None
        if self._presum:
            next(iter(self._presum.values())).release.remote(self._rank)
        self._pulled = Mappings()
        self._results = Results(self._pulled)
        if self._group.owned:
            self._group.stop(self._ray)

    # ------------------------------------------------------------------ helpers
    def _fetch(self, keys: list[Key]) -> dict[Key, np.ndarray]:
        """Each key's value, after this worker's last push to it is applied.

        One call per server asks for all of its keys; big values come back as references,
        fetched together (zero-copy, read-only, from this node's object store).
        """
        self._settle_pushes()
        asked: dict[int, list[tuple[Key, int]]] = {}
        wanted = [(key, server, self._seq.get(key, 0)) for key in dict.fromkeys(keys) for server, _ in self._layouts[key]]
        # results on this node that are (or within moments will be) applied: read in place
        parts = self._results.ready([w for w in wanted if w[1] in self._pools], self._num_workers)
        mapped = {self._results.where(key, server).name for key, server in parts}
        handed: dict[tuple[Key, int], Any] = {}
        for key, server, need in wanted:
            if (key, server) in parts:
                self._pools[server].settle(key, need)
            elif (result := self._handed.pop((key, server), None)) is not None and result[0] == need:
                handed[key, server] = result[1]  # the push's answer carried this step's result
            else:
                asked.setdefault(server, []).append((key, need))
        calls = [
            (server, self._invoke(server, "pull_many", self._rank, needs, self._timeout, server in self._pools))
            for server, needs in asked.items()
        ]
        answers = {server: unpacked(self._call(ref, f"pull from kvcli server {server}")) for server, ref in calls}
        refs = [a[0] for server in answers for a in answers[server] if isinstance(a, list)]
        refs += [a[0] for a in handed.values() if isinstance(a, list)]
        fetched = iter(self._call(refs, "pull") if refs else [])
        for server, needs in asked.items():
            pool = self._pools.get(server)
            for (key, need), answer in zip(needs, answers[server]):
                if isinstance(answer, ShmPart):  # read-only view of the server's value
                    parts[key, server] = self._pulled.view(answer)
                    mapped.add(answer.name)
                    self._results.learn(key, server, answer, applied=need, read=need)
                else:
                    parts[key, server] = next(fetched) if isinstance(answer, list) else answer
                if pool is not None:  # applied: the push segment holding it is free again
                    pool.settle(key, need)
                elif self._presum_pool is not None and self._presummed(server):
                    self._presum_pool.settle(key, need)  # applied, so the aggregator summed it
        for where, answer in handed.items():
            parts[where] = next(fetched) if isinstance(answer, list) else answer
        self._pulled_keys.update(keys)
        self._pulled.keep_only(mapped, limit=64)
        values: dict[Key, Any] = {}
        for key in dict.fromkeys(keys):
            pieces = [parts[key, server] for server, _ in self._layouts[key]]
            # One part: the read-only array as it came (the base class copies it out).
            values[key] = pieces[0] if len(pieces) == 1 else join_parts(pieces, self._layouts[key])
        return values

    def _invoke(self, server: int, method: str, *args: Any) -> Any:
        """``servers[server].method.remote(*args)``: a call that may wait for other workers
        in the servers' :data:`WAIT_GROUP`, and through the server's ``packed`` when no
        argument holds an ObjectRef (see :meth:`KeyServer.packed`; read its answer with
        :func:`unpacked`)."""
        actor = self._servers[server]
        # of the packed methods, only push_many's items can carry a reference (``[ref]``)
        refs = method == "push_many" and any(isinstance(item[2], list) for item in args[1])
        packed = method in PACKED_METHODS and not refs
        call = actor.packed if packed else getattr(actor, method)
        if method in WAITING_METHODS:
            call = call.options(concurrency_group=WAIT_GROUP)
        if packed:
            return call.remote(method, pickle.dumps(args, protocol=pickle.HIGHEST_PROTOCOL))
        return call.remote(*args)

    def _settle_pushes(self) -> None:
        """Wait for the answers of pushes sent to other nodes (see :meth:`push`); keep the
        step results they hand back; raise the first push's error."""
        calls, self._unsettled = self._unsettled, []
        first_error: BaseException | None = None
        for ref, what, server, keys in calls:  # wait for all; raise the first error
            try:
                answer = unpacked(self._call(ref, what))
            except BaseException as error:
                first_error = first_error or error
                continue
            for key, (count, _, result) in zip(keys, answer):
                if result is not None:
                    self._handed[key, server] = (count, result)
        if first_error is not None:
            raise first_error

    def _forget_handed(self, key: Key) -> None:
        self._pulled_keys.discard(key)
        for where in [w for w in self._handed if w[0] == key]:
            del self._handed[where]

    def _wait_inflight(self) -> list[tuple[int, Any]]:
        """Wait for the calls queued by the hooks; returns (server, answer) pairs."""
        calls, self._inflight = self._inflight, []
        answers = []
        first_error: BaseException | None = None
        for ref, what, server in calls:  # wait for all, so none is left running; raise the first
            try:
                answers.append((server, unpacked(self._call(ref, what))))
            except BaseException as error:
                first_error = first_error or error
        if first_error is not None:
            raise first_error
        return answers

    def _call(self, ref: Any, what: str, lost: str = SERVER_LOST) -> Any:
        """``ray.get(ref)`` (one ObjectRef or a list) with Ray's failures as kvcli errors;
        ``lost`` says what a dead actor means for the job."""
        ray = self._ray
        try:
            return ray.get(ref, timeout=self._timeout + ANSWER_GRACE)
        except ray.exceptions.RayTaskError as error:
            cause = getattr(error, "cause", None)
            if isinstance(cause, KVCliError):
                raise cause from None  # the server's own message, as the local store says it
            if isinstance(cause, Exception):
                raise cause from None  # a user updater's exception, as it would be raised locally
            raise DistributedError(f"{what} failed: {error}") from None
        except ray.exceptions.GetTimeoutError:
            raise DistributedError(
                f"{what}: no answer after {self._timeout + ANSWER_GRACE:g}s (the actor hangs or the "
                f"cluster is overloaded); raise timeout=... or {ENV_TIMEOUT}"
            ) from None
        except ray.exceptions.RayActorError as error:
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise DistributedError(
                f"{what}: the actor died or is restarting ({type(error).__name__}: {reason}); {lost}"
            ) from None

    def server_stats(self) -> list[dict[Key, dict[str, Any]]]:
        """Per server: the keys it holds, their shapes and push counters (for debugging)."""
        with self._lock:
            self._settle_pushes()
        return [self._call(s.stats.remote(), f"stats of kvcli server {i}") for i, s in enumerate(self._servers)]

    def __repr__(self) -> str:
        return (
            f"<DistStore type={self.type!r} rank={self._rank}/{self._num_workers} "
            f"servers={self._num_servers} keys={len(self._info)} group={self._group.id!r}>"
        )


__all__ = [
    "DEFAULT_SERVER_RESTARTS", "DEFAULT_TIMEOUT", "ENV_ADDRESS", "DistStore", "Group", "Layout", "cluster_address", "connect",
    "find_group", "import_ray", "layout_of", "namespace_of", "start_group",
]
