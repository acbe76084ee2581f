"""Node-local pre-sum for ``dist_sync``: one push per node per key per step crosses the link.

When several workers of a ``dist_sync`` group run on one Ray node and a key server runs on
another, each worker's push would cross the link between the nodes on its own (W × the
bytes at W workers). Instead, the workers of that node hand their dense, uncompressed
pushes for that server to the node's :class:`NodeAggregator` (an actor on the node, named
``aggregator-<node id>`` in the group's namespace): through their push segments in shared
memory (:mod:`kvcli.store.ray.shm`), or, with ``KVCLI_DIST_NO_SHM``, through the node's
object store, which a reader on the same node maps without a copy. Once every worker of
the node has pushed step ``n`` of a key, the aggregator sums their pushes in rank order
(:func:`kvcli.arrays.summation.sum_into`), puts the sum in the object store once and sends
it to the server as one push standing for all of the node's ranks
(:meth:`KeyServer.push_many` with a tuple of ranks). The result crosses back once per node
too: every worker of the node pulls the same object, which Ray fetches to the node once.
When the servers keep the sum (no updater) and the node's pre-sum is the step's only push,
the result *is* that pushed object, already on the node: nothing crosses back.

What stays on the per-worker path (:class:`~kvcli.store.ray.store.RayBackend` decides):
``dist_async`` (each push is applied on its own, as in MXNet), 2-bit compressed pushes
(each worker compresses with its own residual and only codes cross, as in MXNet),
row-sparse pushes, servers on the worker's own node (they read the pushes in shared memory
already) and nodes with a single worker (nothing to pre-sum).

The sum of a step is therefore: per node, its ranks' pushes left to right in rank order;
then, on the server, those node sums and the pushes of per-worker ranks, left to right in
order of each one's lowest rank. For integer-valued data that equals any other order; for
other data it is deterministic (the same placement gives the same bits every run).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kvcli.arrays.core import Key
from kvcli.arrays.summation import sum_into
from kvcli.errors import DistributedError, DTypeMismatchError, ShapeMismatchError
from kvcli.store.ray.shm import Mappings, ShmPart

#: Concurrency of the aggregator actor: one call per worker of the node at a time.
AGGREGATOR_ACTOR_OPTIONS: dict[str, Any] = {"max_concurrency": 16}


def aggregator_name(node: str) -> str:
    """The Ray actor name of the aggregator of ``node`` (a Ray node id) in a group."""
    return f"aggregator-{node}"


@dataclass
class _Pending:
    """One key (or row range) of one server, as the aggregator collects it."""

    #: Which init of the key these pushes belong to (a re-init starts the numbering over).
    generation: int
    #: Steps summed and sent to the server.
    forwarded: int = 0
    #: pending[rank][seq]: that rank's push, arrived and not sent on yet.
    pending: dict[int, dict[int, np.ndarray]] = field(default_factory=dict)
    #: How many of the node's ranks (in rank order) are in ``total`` for step forwarded + 1.
    added: int = 0
    #: The running sum of the next step, reused from step to step (its pages stay mapped).
    total: np.ndarray | None = None


class NodeAggregator:
    """Sums the pushes of one node's workers and sends one push per key per step.

    Args:
        node: the Ray node id it serves (for messages).
        ranks: the ranks of the group's workers on that node, in order.
        servers: the group's key server actors.
    """

    def __init__(self, node: str, ranks: list[int], servers: list[Any]) -> None:
        self.node = node
        self.ranks = tuple(sorted(ranks))
        self.servers = servers
        self._lock = threading.Lock()
        self._slots: dict[tuple[Key, int], _Pending] = {}
        self._mapped: dict[int, Mappings] = {}
        #: Pushes sent to each server (for tests: one per key per step, whatever W).
        self.sent = 0

    def ping(self) -> dict[str, Any]:
        """Where it runs and whom it serves."""
        return {"node": self.node, "ranks": list(self.ranks), "sent": self.sent}

    def release(self, rank: int) -> None:
        """Unmap rank ``rank``'s push segments (its store closed)."""
        with self._lock:
            self._mapped.pop(rank, None)

    def push(
        self, rank: int, server: int, items: list[tuple[Key, int, int, Any]], retired: list[str]
    ) -> tuple[list[int], Any, list[Key]]:
        """Rank ``rank``'s pushes to server ``server``: ``(key, generation, seq, value)`` each,
        ``value`` a :class:`ShmPart` in the worker's push segment, ``[ObjectRef]`` or an array.

        Returns, per item, how many of the rank's pushes of the key have been summed (their
        push segments are free again), and, when this call completed a step of some key,
        ``[ObjectRef]`` of the server's answer to the push it sent (the caller waits for it
        and so hears the server's errors) and the keys in it; else None and ``[]``. That
        answer carries the step's result of each key whose step the push completed (see
        ``want`` of :meth:`KeyServer.push_many`): the caller's next pull needs no call,
        as on the per-worker path.
        """
        if rank not in self.ranks:
            raise DistributedError(
                f"the node aggregator of {self.node} serves ranks {list(self.ranks)}, not rank {rank}"
            )
        refs = [item[3][0] for item in items if isinstance(item[3], list)]
        import ray

        resolved = iter(ray.get(refs) if refs else [])
        with self._lock:
            mapped = self._mapped.setdefault(rank, Mappings())
            if retired:
                mapped.drop(retired)
            complete: list[tuple[Key, int, np.ndarray]] = []
            for key, generation, seq, value in items:
                if isinstance(value, ShmPart):
                    array = mapped.view(value)
                elif isinstance(value, list):
                    array = next(resolved)
                else:
                    array = value
                slot = self._slots.get((key, server))
                if slot is None or slot.generation < generation:
                    slot = self._slots[key, server] = _Pending(generation)
                elif slot.generation > generation:
                    raise DistributedError(f"push of key {key!r}: rank {rank} pushes to an older init of the key")
                if seq <= slot.forwarded or seq in slot.pending.get(rank, {}):
                    raise DistributedError(
                        f"push of key {key!r}: rank {rank} sent push number {seq} twice; two processes "
                        "may be using the same rank"
                    )
                slot.pending.setdefault(rank, {})[seq] = array
                complete.extend((key, step, ref) for step, ref in self._advance(key, slot))
            counts = [self._slots[key, server].forwarded for key, _, _, _ in items]
            if not complete:
                return counts, None, []
            # one object per key and step; the server reads it without a copy
            travelling = [(key, step, [ref], None) for key, step, ref in complete]
            self.sent += len(travelling)
            answer = self.servers[server].push_many.remote(self.ranks, travelling, None, [True] * len(travelling))
            return counts, [answer], [key for key, _, _ in complete]

    def _advance(self, key: Key, slot: _Pending) -> list[tuple[int, Any]]:
        """Add the pushes that have arrived to the running sum, in rank order, as far as
        they go; put each completed step's sum in the object store. Returns (step,
        ObjectRef) per completed step.

        Why a running sum: the additions of early ranks are done while the last ones are
        still coming, so only the last addition lies between the last push and the send.
        It is the same left-to-right sum, element by element, as
        :func:`~kvcli.arrays.summation.sum_into` over all of them (same bits).
        """
        import ray

        done: list[tuple[int, Any]] = []
        while True:
            step = slot.forwarded + 1
            while slot.added < len(self.ranks) and step in slot.pending.get(self.ranks[slot.added], {}):
                array = slot.pending[self.ranks[slot.added]][step]
                if slot.added == 1:
                    first = slot.pending[self.ranks[0]][step]
                    slot.total = self._buffer(key, slot, first)
                    self._check(key, first, array)
                    sum_into(slot.total, [first, array])
                elif slot.added > 1:
                    assert slot.total is not None
                    self._check(key, slot.total, array)
                    sum_into(slot.total, [slot.total, array])
                slot.added += 1
            if slot.added < len(self.ranks):
                return done
            for rank in self.ranks:  # summed: the push segments may be reused
                del slot.pending[rank][step]
            done.append((step, ray.put(slot.total)))  # a copy: the buffer serves the next step
            slot.forwarded = step
            slot.added = 0

    @staticmethod
    def _buffer(key: Key, slot: _Pending, like: np.ndarray) -> np.ndarray:
        if slot.total is None or slot.total.shape != like.shape or slot.total.dtype != like.dtype:
            slot.total = np.empty(like.shape, like.dtype)
        return slot.total

    def _check(self, key: Key, first: np.ndarray, other: np.ndarray) -> None:
        if other.shape != first.shape:
            raise ShapeMismatchError(
                f"push of key {key!r}: the workers on node {self.node} pushed shapes {first.shape} "
                f"and {other.shape}; every worker must push the key's shape"
            )
        if other.dtype != first.dtype:
            raise DTypeMismatchError(
                f"push of key {key!r}: the workers on node {self.node} pushed dtypes {first.dtype} "
                f"and {other.dtype}; every worker must push the key's dtype"
            )


_ACTOR_CLASS: list[Any] = []


def start_aggregator(ray: Any, node: str, ranks: list[int], servers: list[Any]) -> Any:
    """Start the aggregator of ``node`` in the caller's Ray namespace, or find it there.

    The group's coordinator calls this (:meth:`Coordinator.aggregator`), so that the
    aggregator lives as long as the group (Ray ends an actor with the process that made
    it), not as long as one of the node's workers: a worker that dies leaves the others of
    its node pushing to it, and their error names the rank that died.
    """
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if not _ACTOR_CLASS:
        _ACTOR_CLASS.append(ray.remote(**AGGREGATOR_ACTOR_OPTIONS)(NodeAggregator))
    return _ACTOR_CLASS[0].options(
        name=aggregator_name(node),
        namespace=ray.get_runtime_context().namespace,
        get_if_exists=True,
        num_cpus=0,
        max_restarts=0,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
    ).remote(node, ranks, servers)
