"""The worker side of ``dist_sync`` and ``dist_async``: :class:`RayBackend`, the
:class:`~kvcli.store.backend.Backend` that keeps a store's values, updater and optimizer
state on Ray key servers (the package docstring, :mod:`kvcli.store.ray`, describes the job,
the data paths and server restarts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from kvcli import config
from kvcli.arrays.core import ArrayInfo, Key
from kvcli.arrays.sparse import DEFAULT, ROW_SPARSE, RowSparse
from kvcli.arrays.summation import sum_into_cpu_comm
from kvcli.errors import DistributedError, StoreError
from kvcli.store.backend import UpdaterFn, Value
from kvcli.store.interrupts import deferred_interrupts
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
from kvcli.store.ray.calls import AGGREGATOR_LOST, COORDINATOR_LOST, ENV_TIMEOUT, SERVER_LOST, call, invoke, unpacked
from kvcli.store.ray.join import ENV_GROUP, ENV_NUM_WORKERS, join
from kvcli.store.ray.server import INLINE_BYTES
from kvcli.store.ray.shm import Mappings, PushPool, Results, ShmPart
from kvcli.store.ray.sparse import join_parts, joined_rows, rows_by_server, rows_part
from kvcli.store.ray.state import check_held, merge_states, shares_of

if TYPE_CHECKING:
    from kvcli.store.compression import GradientCompression

ENV_RANK = config.RANK.name
ENV_NUM_SERVERS = config.NUM_SERVERS.name
ENV_BIGARRAY_BOUND = config.BIGARRAY_BOUND.name

DEFAULT_BIGARRAY_BOUND = config.BIGARRAY_BOUND.default


def compress_part(compression: GradientCompression, key: Key, part_index: int, part: np.ndarray) -> tuple[np.ndarray, Any]:
    """A worker's part of its (device-summed) push, compressed with its own residual, and
    what the server needs to decode it (shape, threshold). Only the worker-to-server
    direction is compressed, as in MXNet."""
    packed = compression.compress(key, part_index, part)
    return packed, (part.shape, compression.spec.server_threshold())


# ---------------------------------------------------------------------- the backend
class RayBackend:
    """A worker's handle on a distributed store (see :mod:`kvcli.store.ray`)."""

    remote = True

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
        if kind not in ("dist_sync", "dist_async"):
            raise StoreError(f"unknown distributed store type {kind!r}: use dist_sync or dist_async")
        self._kind = kind
        self._mode = mode_of(kind)
        self._ray = connect(address, kind)
        self._timeout = float(timeout if timeout is not None else config.get(config.DIST_TIMEOUT))
        if not self._timeout > 0:
            raise StoreError(f"timeout must be a positive number of seconds, got {self._timeout}")
        self._bound = int(
            bigarray_bound if bigarray_bound is not None
            else config.get(config.BIGARRAY_BOUND)
        )
        self._rank = int(rank if rank is not None else config.get(config.RANK))
        self._group, self._num_workers, self._num_servers = join(
            kind, self._ray, group=group or config.get(config.GROUP), rank=self._rank, num_workers=num_workers,
            num_servers=num_servers, server_restarts=server_restarts, member=member, timeout=self._timeout,
        )
        self._servers = self._group.servers
        #: The updater the servers run (rank 0 ships it again to a restarted server).
        self._updater: Any = None
        #: Shape, dtype and storage type of each key, as this worker initialised it.
        self._info: dict[Key, ArrayInfo] = {}
        self._seq: dict[Key, int] = {}
        self._layouts: dict[Key, Layout] = {}
        #: Calls queued by write, apply and forget: (ObjectRef, what it is, server index).
        self._inflight: list[tuple[Any, str, int]] = []
        #: Pushes queued by :meth:`apply` per server, sent together by :meth:`_send_pushes`.
        self._outbox: dict[int, list[tuple[Key, int, Any, Any]]] = {}
        #: Pushes to servers on other nodes, sent and not answered yet: (ObjectRef, what it
        #: is, server, keys). :meth:`_settle_pushes` waits for them (see :meth:`apply`).
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

    # ------------------------------------------------------------------ the job
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
        self._settle_pushes()
        if self._num_workers == 1:
            return
        self._barriers += 1
        self._call(
            self._group.coordinator.barrier.remote(self._rank, self._barriers, self._timeout),
            f"barrier {self._barriers}",
            COORDINATOR_LOST,
        )

    # ------------------------------------------------------------------ the Backend protocol
    def write(self, values: Sequence[tuple[Key, Value]], reset: bool) -> None:
        """Initialise (or load) keys — collectively: every worker calls it; rank 0's value is
        stored. Other ranks wait at a barrier, then check that the servers hold the shapes
        and dtypes they were given (a mismatch raises :class:`~kvcli.errors.ShapeMismatchError`).
        """
        self._settle_pushes()
        try:
            for key, value in values:
                self._send_init(key, value, reset)
        finally:
            answers = self._wait_inflight()
        if self._rank == 0:
            needy = sorted({server for server, needs in answers if needs})
            if needy:  # a restarted server: give it the updater again
                forget_state = getattr(self._updater, "reset", None)
                if reset and forget_state is not None:  # these keys' state starts afresh there too
                    for key, _ in values:
                        forget_state(key)
                self._ship_updater(needy)
        if self._num_workers > 1:
            self.barrier()
            if self._rank != 0:
                self._check_servers_hold([key for key, _ in values])

    def read(self, keys: Sequence[Key]) -> list[Value]:
        """Each key's value, after this worker's last push to it is applied (read-only)."""
        values = self._fetch(list(keys))
        return [values[key] for key in keys]

    def read_rows(self, key: Key, rows: Sequence[np.ndarray]) -> list[RowSparse]:
        """Asks each server for only the requested rows of its range."""
        self._settle_pushes()  # this worker's pushes to other nodes are answered first
        need = self._seq.get(key, 0)
        asked = [rows_by_server(ids, self._layouts[key]) for ids in rows]
        calls = [
            self._invoke(server, "pull_rows", key, self._rank, need, self._timeout, local)
            for servers in asked for server, local in servers
        ]
        got = iter(self._call(calls, f"row_sparse_pull of key {key!r}") if calls else [])
        return [joined_rows(ids, [next(got).data for _ in servers], self._info[key]) for ids, servers in zip(rows, asked)]

    def stored(self, key: Key) -> Value:
        """A writable *copy* of the value: dist values live on the servers, not here."""
        value = self.read([key])[0]
        return value.copy() if isinstance(value, RowSparse) else np.array(value, copy=True)

    def reduce(self, key: Key, arrays: Sequence[np.ndarray]) -> np.ndarray:
        # Sum this worker's devices here (MXNet's worker-side merge); servers sum workers.
        # MXNet's dist store merges a worker's devices with CommCPU, as its local store does
        # (kvstore.cc: only a type naming "device" gets CommDevice): groups of four.
        if len(arrays) == 1:
            return arrays[0]  # sent as it is: ray.put copies it
        return sum_into_cpu_comm(np.empty(arrays[0].shape, arrays[0].dtype), arrays)

    def apply(self, pushes: Sequence[tuple[Key, Value]], compression: GradientCompression | None) -> None:
        """Send this worker's sums (of its devices) to the servers: one call per server
        carries every key; a row-sparse sum goes to each server as its rows only.

        Returns once the values are handed over: copied into shared memory or Ray's object
        store, the calls sent. A server on this node has applied them by then (its answer
        says which push segments are free again); a server on another node answers later,
        as MXNet's push is asynchronous: the next operation of this store (a pull, a push,
        a barrier, ...) waits for that answer first and raises the push's error if it failed.
        """
        self._settle_pushes()
        sent: dict[int, list[Key]] = {}
        try:
            # a push queued in part (its step counted, not sent) would stall the next pull
            with deferred_interrupts():
                for key, merged in pushes:
                    if isinstance(merged, RowSparse) or self._info[key].stype == ROW_SPARSE:
                        self._queue_rows(key, merged)
                    else:
                        self._queue(key, merged, compression)
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

    def set_updater(self, updater: UpdaterFn | None) -> None:
        """Rank 0 ships the updater to every server — collectively: every worker calls it."""
        self._updater = updater
        self._settle_pushes()
        if self._rank == 0:
            self._ship_updater(range(self._num_servers))
        if self._num_workers > 1:
            self.barrier()

    def gather_state(self, updater: Any) -> None:
        """Gather the optimizer state from the servers into ``updater``."""
        self._settle_pushes()
        states = [
            self._call(server.get_state.remote(), f"gathering optimizer state from kvcli server {index}")
            for index, server in enumerate(self._servers)
        ]
        updater.load_state_dict(merge_states(states, self._layouts))

    def forget(self, key: Key) -> None:
        """Forget ``key`` — collectively, like ``init``: every worker calls it.

        A barrier first (nobody still pushes or pulls the key), then rank 0 removes it from
        the servers, then a barrier again, so that once ``delete`` returns on any worker the
        key is gone everywhere.
        """
        self.barrier()
        self._info.pop(key, None)
        layout = self._layouts.pop(key, [])
        self._seq.pop(key, None)
        for pool in self._pool_list():
            pool.forget(key)
        self._results.forget(key)
        self._forget_handed(key)
        if self._rank == 0:
            for server, _ in layout:
                self._inflight.append(
                    (self._servers[server].delete.remote(key), f"delete of key {key!r} on kvcli server {server}", server)
                )
            self._wait_inflight()
        self.barrier()

    def close(self) -> None:
        self._inflight.clear()
        self._handed.clear()
        try:
            self._settle_pushes()  # a failed last push still says so, after the cleanup
        finally:
            self._release()

    # ------------------------------------------------------------------ pushes
    def _send_init(self, key: Key, array: Value, reset: bool) -> None:
        """Lay ``key`` out over the servers; rank 0 queues its parts' init calls."""
        self._info[key] = ArrayInfo(array.shape, array.dtype, ROW_SPARSE if isinstance(array, RowSparse) else DEFAULT)
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
                    self._servers[server].init.remote(key, self._ray.put(part), self._mode, reset),
                    f"init of key {key!r} on kvcli server {server}",
                    server,
                )
            )
        for server in {s for s, _ in old} - {s for s, _ in layout}:  # the shape changed
            self._inflight.append(
                (self._servers[server].delete.remote(key), f"init of key {key!r} on kvcli server {server}", server)
            )

    def _queue(self, key: Key, merged: np.ndarray, compression: GradientCompression | None) -> None:
        """Queue this worker's dense sum for the servers (sent by :meth:`_send_pushes`)."""
        seq = self._seq[key] = self._seq.get(key, 0) + 1
        for index, (server, rows) in enumerate(self._layouts[key]):
            part = merged if rows is None else merged[rows]
            packed = None if compression is None else compress_part(compression, key, index, part)
            if packed is not None:
                part, decode = packed
            else:
                decode = None
            if decode is None and type(part) is np.ndarray and self._presummed(server):
                # summed with this node's other workers first (see kvcli.store.ray.aggregate)
                value = part if self._presum_pool is not None else self._travelling(part)
                self._presum_outbox.setdefault(server, []).append((key, self._generation.get(key, 0), seq, value))
                continue
            if server in self._pools and decode is None:
                value = part  # packed into a push segment by _send_pushes
            else:
                value = self._travelling(part)
            self._outbox.setdefault(server, []).append((key, seq, value, decode))

    def _queue_rows(self, key: Key, merged: Value) -> None:
        """Queue this worker's row sum (of its devices) for the servers, each only its rows."""
        seq = self._seq[key] = self._seq.get(key, 0) + 1
        for server, rows in self._layouts[key]:
            # every server of the key gets this step's push (maybe with no rows), so that
            # dist_sync's per-step counters stay in step
            part = merged if rows is None else rows_part(merged, rows)
            # queued with the dense keys of this push: one call per server carries them all
            self._outbox.setdefault(server, []).append((key, seq, [self._ray.put(part)], None))

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
        """The node aggregator per server (see :mod:`kvcli.store.ray.aggregate`): started
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
        :attr:`_presum_calls`, answered (at once: it runs on this node) in :meth:`apply`."""
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

    def _ship_updater(self, servers: Sequence[int]) -> None:
        """Send the updater (and each server's share of its state) to ``servers``."""
        shipped, shares = shares_of(self._updater, self._layouts, self._num_servers)
        calls = []
        for server in servers:
            try:
                ref = self._servers[server].set_updater.remote(shipped, shares[server])
            except Exception as error:  # Ray could not serialise it
                raise DistributedError(
                    f"the updater {self._updater!r} cannot be sent to the servers ({type(error).__name__}: "
                    f"{error}); use a spec string or a module-level function"
                ) from None
            calls.append((ref, f"set_updater on kvcli server {server}"))
        for ref, what in calls:
            self._call(ref, what)

    def _check_servers_hold(self, keys: list[Key]) -> None:
        """After init on rank != 0: the servers must hold rank 0's value with our shape."""
        wanted: dict[int, list[Key]] = {}
        for key in keys:
            for server, _ in self._layouts[key]:
                wanted.setdefault(server, []).append(key)
        for server, server_keys in wanted.items():
            held = self._call(self._servers[server].info.remote(server_keys), f"init check on kvcli server {server}")
            for key in server_keys:
                check_held(key, held[key], dict(self._layouts[key])[server], self._info[key], server, self._rank)

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
            # One part: the read-only array as it came (the store copies it out).
            values[key] = pieces[0] if len(pieces) == 1 else join_parts(pieces, self._layouts[key])
        return values

    def _settle_pushes(self) -> None:
        """Wait for the answers of pushes sent to other nodes (see :meth:`apply`); keep the
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
        """Wait for the calls queued by write, apply and forget; returns (server, answer) pairs."""
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
        """:func:`~kvcli.store.ray.calls.call` with this store's timeout."""
        return call(self._ray, ref, what, self._timeout, lost)

    def _invoke(self, server: int, method: str, *args: Any) -> Any:
        """:func:`~kvcli.store.ray.calls.invoke` on server ``server``."""
        return invoke(self._servers[server], method, *args)

    def server_stats(self) -> list[dict[Key, dict[str, Any]]]:
        """Per server: the keys it holds, their shapes and push counters (for debugging)."""
        self._settle_pushes()
        return [self._call(s.stats.remote(), f"stats of kvcli server {i}") for i, s in enumerate(self._servers)]

    def __repr__(self) -> str:
        return (
            f"<RayBackend {self._kind} rank={self._rank}/{self._num_workers} "
            f"servers={self._num_servers} group={self._group.id!r}>"
        )


__all__ = [
    "DEFAULT_SERVER_RESTARTS", "DEFAULT_TIMEOUT", "ENV_ADDRESS", "ENV_GROUP", "ENV_NUM_SERVERS", "ENV_NUM_WORKERS",
    "ENV_RANK", "ENV_TIMEOUT", "Group", "Layout", "RayBackend", "cluster_address", "connect", "find_group",
    "import_ray", "layout_of", "namespace_of", "start_group",
]
