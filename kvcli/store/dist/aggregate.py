"""Node-local pre-sum for ``dist_sync``: one push per node per key per step crosses the link.

When several workers of a ``dist_sync`` group run on one Ray node and a key server runs on
another, each worker's push would cross the link between the nodes on its own (W × the
bytes at W workers). Instead, the workers of that node hand their dense, uncompressed
pushes for that server to the node's :class:`NodeAggregator` (an actor on the node, named
``aggregator-<node id>`` in the group's namespace): through their push segments in shared
memory (:mod:`kvcli.store.dist.shm`), or, with ``KVCLI_DIST_NO_SHM``, through the node's
object store, which a reader on the same node maps without a copy. Once every worker of
the node has pushed step ``n`` of a key, the aggregator sums their pushes in rank order
(:func:`kvcli.arrays.summation.sum_into`), puts the sum in the object store once and sends
it to the server as one push standing for all of the node's ranks
(:meth:`KeyServer.push_many` with a tuple of ranks). The result crosses back once per node
too: every worker of the node pulls the same object, which Ray fetches to the node once.

What stays on the per-worker path (:class:`~kvcli.store.dist.store.DistStore` decides):
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
from kvcli.store.dist.shm import Mappings, ShmPart

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
    #: pending[rank][seq]: that rank's push, arrived and not summed yet.
    pending: dict[int, dict[int, np.ndarray]] = field(default_factory=dict)


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
    ) -> tuple[list[int], Any]:
        """Rank ``rank``'s pushes to server ``server``: ``(key, generation, seq, value)`` each,
        ``value`` a :class:`ShmPart` in the worker's push segment, ``[ObjectRef]`` or an array.

        Returns, per item, how many of the rank's pushes of the key have been summed (their
        push segments are free again), and, when this call completed a step of some key,
        ``[ObjectRef]`` of the server's answer to the push it sent (the caller waits for it
        and so hears the server's errors); else None.
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
                while all(slot.forwarded + 1 in slot.pending.get(r, {}) for r in self.ranks):
                    step = slot.forwarded + 1
                    arrays = [slot.pending[r].pop(step) for r in self.ranks]
                    complete.append((key, step, self._summed(key, arrays)))
                    slot.forwarded = step
            counts = [self._slots[key, server].forwarded for key, _, _, _ in items]
            if not complete:
                return counts, None
            # one object per key and step; the server reads it without a copy
            travelling = [(key, step, [ray.put(total)], None) for key, step, total in complete]
            self.sent += len(travelling)
            answer = self.servers[server].push_many.remote(self.ranks, travelling, None, None)
            return counts, [answer]

    def _summed(self, key: Key, arrays: list[np.ndarray]) -> np.ndarray:
        """The node's ranks' pushes summed left to right in rank order (a new array)."""
        first = arrays[0]
        for other in arrays[1:]:
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
        return sum_into(np.empty(first.shape, first.dtype), arrays)


_ACTOR_CLASS: list[Any] = []


def start_aggregator(ray: Any, group: str, node: str, ranks: list[int], servers: list[Any]) -> Any:
    """The aggregator of ``node`` for ``group``: found, or started on that node by the first
    of its workers to ask (every worker of the node passes the same ``ranks``). It lives as
    long as the worker process that started it: once any worker of a node has returned from
    its last pull, every push of the node has been summed."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from kvcli.store.dist.group import namespace_of

    if not _ACTOR_CLASS:
        _ACTOR_CLASS.append(ray.remote(**AGGREGATOR_ACTOR_OPTIONS)(NodeAggregator))
    return _ACTOR_CLASS[0].options(
        name=aggregator_name(node),
        namespace=namespace_of(group),
        get_if_exists=True,
        num_cpus=0,
        max_restarts=0,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
    ).remote(node, ranks, servers)
