"""The coordinator of a kvcli group: membership, the Ray node of each rank, node
aggregators, and barriers (one asyncio actor per group; :mod:`kvcli.store.ray.group` starts it)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from kvcli.errors import DistributedError


class _Changes:
    """Wakes every coroutine waiting for "something changed" (asyncio is single-threaded)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait_until(self, done: Callable[[], bool], deadline: float) -> bool:
        """Wait until ``done()`` or the monotonic ``deadline``; returns ``done()``."""
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                await asyncio.wait_for(self._event.wait(), remaining)
            except asyncio.TimeoutError:
                return done()
        return True


class Coordinator:
    """Group membership and barriers for one launched job."""

    def __init__(self, num_workers: int, num_servers: int) -> None:
        self.num_workers = num_workers
        self.num_servers = num_servers
        self.mode: str | None = None
        self.members: dict[int, str] = {}
        #: The Ray node each registered rank runs on (for node-local pre-sums).
        self.nodes: dict[int, str] = {}
        #: Node aggregators this coordinator started, by node id.
        self.aggregators: dict[str, Any] = {}
        self.gone: dict[int, str] = {}
        self.arrived: dict[int, set[int]] = {}
        self._changes = _Changes()

    async def config(self) -> dict[str, Any]:
        """The group's size: ``num_workers`` and ``num_servers``."""
        return {"num_workers": self.num_workers, "num_servers": self.num_servers}

    async def register(self, rank: int, token: str, mode: str, node: str | None = None) -> dict[str, Any]:
        """A worker joins as ``rank`` (``token`` tells processes apart) from Ray node
        ``node``; checks the mode."""
        if not 0 <= rank < self.num_workers:
            raise DistributedError(
                f"rank {rank} is out of range: this group has {self.num_workers} workers (ranks 0..{self.num_workers - 1})"
            )
        holder = self.members.get(rank)
        if holder is not None and holder != token:
            raise DistributedError(f"rank {rank} is already taken by another process in this group")
        if self.mode is None:
            self.mode = mode
        elif self.mode != mode:
            raise DistributedError(
                f"rank {rank} created a dist_{mode} store but the group runs dist_{self.mode}: "
                "every worker must create the same store type"
            )
        self.members[rank] = token
        if node is not None:
            self.nodes[rank] = node
        self._changes.notify()
        return {"num_workers": self.num_workers, "num_servers": self.num_servers}

    async def aggregator(self, node: str, ranks: list[int], servers: list[Any]) -> list[Any]:
        """``[handle]`` of the node aggregator of ``node`` (started on the first ask, by
        this actor, so that it lives as long as the group: see
        :func:`kvcli.store.ray.aggregate.start_aggregator`)."""
        import ray

        from kvcli.store.ray.aggregate import start_aggregator

        if node not in self.aggregators:
            self.aggregators[node] = start_aggregator(ray, node, ranks, servers)
        return [self.aggregators[node]]

    async def placement(self, timeout: float) -> dict[int, str]:
        """The Ray node of every rank, once all of them have registered."""
        everyone = set(range(self.num_workers))

        def settled() -> bool:
            return set(self.nodes) >= everyone or any(r in self.gone for r in everyone - set(self.nodes))

        await self._changes.wait_until(settled, time.monotonic() + timeout)
        missing = sorted(everyone - set(self.nodes))
        if missing:
            gone = [r for r in missing if r in self.gone]
            if gone:
                raise DistributedError("; ".join(f"rank {r} {self.gone[r]}" for r in gone) + ", before joining")
            raise DistributedError(
                f"rank(s) {missing} did not join within {timeout:g}s (a worker died, hangs, or was not "
                "started); raise the timeout with timeout=... or KVCLI_DIST_TIMEOUT"
            )
        return dict(self.nodes)

    async def mark_gone(self, rank: int, reason: str) -> None:
        """Record that ``rank`` has died or exited; barriers waiting for it fail at once."""
        self.gone[rank] = reason
        self._changes.notify()

    async def barrier(self, rank: int, generation: int, timeout: float) -> None:
        """Return once every rank has called its ``generation``-th barrier."""
        arrived = self.arrived.setdefault(generation, set())
        arrived.add(rank)
        self._changes.notify()
        everyone = set(range(self.num_workers))

        def settled() -> bool:
            return arrived >= everyone or any(r in self.gone for r in everyone - arrived)

        done = await self._changes.wait_until(settled, time.monotonic() + timeout)
        if arrived >= everyone:
            # Every rank got here; drop old generations (a rank is at most one behind).
            for old in [g for g in self.arrived if g < generation - 1]:
                del self.arrived[old]
            return
        missing = sorted(everyone - arrived)
        gone = [r for r in missing if r in self.gone]
        if done and gone:
            raise DistributedError(
                f"barrier {generation} cannot complete: "
                + "; ".join(f"rank {r} {self.gone[r]}" for r in gone)
            )
        raise DistributedError(
            f"barrier {generation} timed out after {timeout:g}s: rank(s) {missing} did not reach it "
            "(a worker died, hangs, or skipped it); raise the timeout with timeout=... or KVCLI_DIST_TIMEOUT"
        )
