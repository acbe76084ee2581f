"""The node-local data path of ``dist_sync`` / ``dist_async``: values in shared memory.

When a worker and a key server run on the same Ray node, their arrays do not travel
through Ray's object store at all; the actor calls carry only :class:`ShmPart` descriptors
(segment name, offset, shape, dtype), and the bytes move by one ``memcpy`` each way:

* **push** — the worker packs all of one push's parts for a server into one of its own
  persistent, reused segments (:class:`PushPool`); the server reads them there while it
  sums the step. A segment is written again only once the worker knows the server has
  applied every push it holds (the push's answer or a later pull says so); until then the
  next push uses another segment of the pool.
* **pull** — the server keeps a ``dist_sync`` key's value in its own shared memory
  (:class:`Arenas`: many keys packed per segment, the pages stay mapped and warm) and
  answers a pull with where it is; the worker copies it out from a mapping it keeps.
  In ``dist_sync`` a value changes only after *every* worker pushed the next step, and a
  worker pushes only after its pull has copied, so nobody reads a value being written.
  A re-``init`` gets a fresh region, never the old one. ``dist_async`` values change on
  any push, so their pulls keep the object-store copy.
* **one call per step** — a pull reads a ``dist_sync`` step's result without asking the
  server when it knows the step is applied (:class:`Results`): the push that completed it
  (a lone worker, or the last rank to push) was answered so; any other rank watches the
  value's *step counter*, which the server writes in shared memory after the value, for a
  few milliseconds before it asks. Each step is read that way once; a later pull of the
  same step asks the server again (and so learns of a restart).

Worker and server segments are :class:`~kvcli.store.device.shm.SharedArray` segments: the
creating process unlinks them when done (a store's close, a key's delete or re-init) and
Python's resource tracker does if it dies; :func:`~kvcli.store.device.shm.sweep_orphans` reclaims
what a killed process group left. Other processes only attach (:func:`~kvcli.store.device.shm.attach`).
"""

from __future__ import annotations

import math
import os
import platform
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from kvcli.errors import DistributedError
from kvcli.arrays.core import Key
from kvcli.store.device.shm import SHM_DIR, SharedArray, attach

#: Offsets inside a segment are multiples of this (cache lines; SIMD-friendly starts).
ALIGN = 64
#: Size of one server arena: small values share it, a bigger one gets a segment of its own.
ARENA_BYTES = 32 << 20
#: Push segments a worker keeps per server (pushes not yet applied hold one each).
POOL_SEGMENTS = 4
#: How long a pull watches the servers' step counters before it asks them instead, per
#: worker of the job (a call costs about 1 ms; in lockstep, the other workers' pushes land
#: within a few ms, more with more workers on the same cores).
WATCH_SECONDS_PER_WORKER = 0.003
#: Sleeps between two looks at a counter: a sleep, not a spin (the 2 cores of a small
#: machine are busy with the server and the other workers meanwhile), growing from the
#: first to the last so that a long watch costs few wake-ups.
WATCH_POLL_SECONDS = (50e-6, 500e-6)
#: Whether a worker may trust a step counter it reads in shared memory: the server writes
#: the value, then the counter, and x86-64 keeps stores in that order for every reader.
#: Elsewhere (weaker memory orders) a pull asks the server unless a push's answer said so.
WATCH_COUNTERS = platform.machine().lower() in ("x86_64", "amd64")


def _aligned(size: int) -> int:
    return (size + ALIGN - 1) // ALIGN * ALIGN


class ShmPart(NamedTuple):
    """Where an array lies in a shared-memory segment. It travels in actor calls, a
    hundred of them per call with many small keys: a tuple pickles about three times
    faster there than a dataclass.

    ``counter`` is the offset of the value's step counter in the same segment (a server's
    ``dist_sync`` value; -1 when there is none): two int64, the last step applied and the
    last step whose update failed, written by the server after the value.
    """

    name: str
    offset: int
    shape: tuple[int, ...]
    dtype: str
    counter: int = -1

    def view(self, segment: np.ndarray) -> np.ndarray:
        """The array inside ``segment`` (a uint8 mapping of the whole segment)."""
        return np.ndarray(self.shape, self.dtype, segment, self.offset)

    def counter_view(self, segment: np.ndarray) -> np.ndarray:
        """The step counter inside ``segment``: ``[applied, failed]`` as int64."""
        return segment[self.counter:self.counter + COUNTER_BYTES].view(np.int64)


#: Bytes of a step counter (two int64: the last step applied, the last step that failed).
COUNTER_BYTES = 16


class Mappings:
    """Segments of other processes this one has mapped, by name (mapped once, reused)."""

    def __init__(self) -> None:
        self._segments: dict[str, np.ndarray] = {}

    def view(self, part: ShmPart, writable: bool = False) -> np.ndarray:
        array = part.view(self.segment(part.name))
        if not writable:
            array.flags.writeable = False
        return array

    def segment(self, name: str) -> np.ndarray:
        """The whole segment ``name`` as uint8, mapped on first use."""
        segment = self._segments.get(name)
        if segment is None:
            try:
                segment = _attach_bytes(name)
            except FileNotFoundError:
                raise DistributedError(
                    f"shared-memory segment {name} is gone: the process that made it exited or "
                    "freed it (a worker or server died or closed its store)"
                ) from None
            self._segments[name] = segment
        return segment

    def drop(self, names: Any) -> None:
        """Unmap (once their last view is gone) the segments ``names``."""
        for name in names:
            self._segments.pop(name, None)

    def keep_only(self, names: set[str], limit: int) -> None:
        """Past ``limit`` mappings, drop those not in ``names`` (segments freed meanwhile)."""
        if len(self._segments) > limit:
            self.drop([n for n in self._segments if n not in names])

    def __len__(self) -> int:
        return len(self._segments)


def _attach_bytes(name: str) -> np.ndarray:
    """A whole segment as uint8 (its size read from the segment itself)."""
    size = os.stat(os.path.join(SHM_DIR, name)).st_size
    return attach(name, (size,), "u1")


# ---------------------------------------------------------------------- server side
@dataclass
class _Arena:
    segment: SharedArray
    used: int = 0
    live: int = 0


class Arenas:
    """A server's shared memory for the values it holds: regions bump-allocated in arenas.

    A region is never handed out twice: a freed one (deleted or re-initialised key) only
    lowers its arena's live count, and an arena with nothing live (other than the one being
    filled) is unlinked; its pages go when the last mapping of them does.
    """

    def __init__(self) -> None:
        self._arenas: dict[str, _Arena] = {}
        self._current: _Arena | None = None

    def allocate(self, shape: tuple[int, ...], dtype: np.dtype) -> tuple[ShmPart, np.ndarray, np.ndarray]:
        """A new region for an array of ``shape``/``dtype`` and its step counter (zero):
        where, the array, the counter (SharedMemoryError if it does not fit)."""
        value_size = _aligned(max(math.prod(shape) * dtype.itemsize, 1))
        size = value_size + ALIGN  # the counter in a cache line of its own, after the value
        shared = size <= ARENA_BYTES // 4  # small values share arenas; a big one has its own
        arena = self._current
        if not shared or arena is None or arena.used + size > arena.segment.nbytes:
            # SharedArray reserves the pages up front: a full /dev/shm is a SharedMemoryError here
            arena = _Arena(SharedArray((ARENA_BYTES if shared else size,), np.dtype("u1")))
            self._arenas[arena.segment.name] = arena
            if shared:
                if self._current is not None and self._current.live == 0:
                    self._unlink(self._current)
                self._current = arena
        part = ShmPart(arena.segment.name, arena.used, tuple(shape), dtype.str, arena.used + value_size)
        arena.used += size
        arena.live += 1
        counter = part.counter_view(arena.segment.array)
        counter[:] = 0
        return part, part.view(arena.segment.array), counter

    def free(self, part: ShmPart) -> None:
        """Give back ``part``'s region; its arena goes when nothing in it is live."""
        arena = self._arenas.get(part.name)
        if arena is None:
            return
        arena.live -= 1
        if arena.live == 0 and arena is not self._current:
            self._unlink(arena)

    def _unlink(self, arena: _Arena) -> None:
        self._arenas.pop(arena.segment.name, None)
        arena.segment.free()

    def close(self) -> None:
        """Unlink every arena (the server is going away)."""
        for arena in list(self._arenas.values()):
            self._unlink(arena)
        self._current = None

    def names(self) -> list[str]:
        return sorted(self._arenas)


# ---------------------------------------------------------------------- worker side
class Results:
    """Where a worker reads ``dist_sync`` results on its node without asking the server.

    Per (key, server part) it remembers where the server keeps the value (from any
    answer), the last step an answer said was applied, and the last step it read without
    asking: a pull reads a step that way once, and a later pull of the same step asks the
    server (which is how a pull learns that a server restarted). A step is known applied
    when an answer said so (the push that completed it), or, where :data:`WATCH_COUNTERS`,
    when the value's counter says so: :meth:`ready` watches the counters for up to
    :data:`WATCH_SECONDS_PER_WORKER` per worker (the other workers' pushes are usually
    that close) before the pull asks the servers for the rest.
    """

    def __init__(self, mappings: Mappings) -> None:
        self._mappings = mappings
        #: (key, server) -> where, a read-only view of the value there, its counter (or None).
        self._where: dict[tuple[Key, int], tuple[ShmPart, np.ndarray, np.ndarray | None]] = {}
        self._known: dict[tuple[Key, int], int] = {}
        self._read: dict[tuple[Key, int], int] = {}

    def learn(self, key: Key, server: int, where: ShmPart, applied: int | None = None, read: int | None = None) -> None:
        """An answer said where ``key``'s part on ``server`` lies (and how many of this
        worker's pushes of it are applied; ``read``: a pull's answer, that step is read)."""
        held = self._where.get((key, server))
        if held is None or held[0] != where:
            try:
                segment = self._mappings.segment(where.name)
            except DistributedError:  # freed already (the key re-initialised): ask next time
                return
            value = where.view(segment)
            value.flags.writeable = False
            counter = where.counter_view(segment) if WATCH_COUNTERS and where.counter >= 0 else None
            self._where[key, server] = (where, value, counter)
        if applied is not None and applied > self._known.get((key, server), -1):
            self._known[key, server] = applied
        if read is not None:
            self._read[key, server] = read

    def where(self, key: Key, server: int) -> ShmPart:
        """Where ``key``'s part on ``server`` lies (learnt before)."""
        return self._where[key, server][0]

    def forget(self, key: Key) -> None:
        """``key`` was re-initialised or deleted: its parts lie elsewhere now."""
        for table in (self._where, self._known, self._read):
            for gone in [k for k in table if k[0] == key]:
                del table[gone]

    def ready(self, wanted: list[tuple[Key, int, int]], workers: int) -> dict[tuple[Key, int], np.ndarray]:
        """Of ``wanted`` (key, server, step), the parts readable here without asking, as
        read-only views (for a moment: the caller copies them before it pushes again);
        in a job of several ``workers``, after watching the counters of the others for a while."""
        found: dict[tuple[Key, int], np.ndarray] = {}
        watched: list[tuple[tuple[Key, int], int, np.ndarray, np.ndarray]] = []
        for key, server, need in wanted:
            part = (key, server)
            held = self._where.get(part)
            if held is None or self._read.get(part, -1) >= need:
                continue
            _, value, counter = held
            if self._known.get(part, -1) >= need or (counter is not None and counter[0] >= need):
                found[part] = value
                self._read[part] = need
            elif counter is not None and counter[1] < need:
                watched.append((part, need, value, counter))
        if workers > 1 and watched:
            deadline = time.monotonic() + WATCH_SECONDS_PER_WORKER * workers
            pause, longest = WATCH_POLL_SECONDS
            for part, need, value, counter in watched:  # in push order: one wait covers most
                while counter[0] < need and counter[1] < need and time.monotonic() < deadline:
                    time.sleep(pause)
                    pause = min(pause * 1.5, longest)
                if counter[0] >= need:
                    found[part] = value
                    self._read[part] = need
        return found



@dataclass
class _PushSegment:
    segment: SharedArray
    #: (key, seq) of each push it carries; free once the server has applied them all.
    holds: dict[Key, int] = field(default_factory=dict)


class PushPool:
    """A worker's reused push segments for one server (see the module docstring)."""

    def __init__(self) -> None:
        self._segments: list[_PushSegment] = []
        #: key -> how many of this worker's pushes of it the server is known to have applied.
        self.applied: dict[Key, int] = {}
        #: Names of segments freed since the last push: the server unmaps them.
        self.retired: list[str] = []
        self._finalizer = weakref.finalize(self, _free_all, self._segments)

    def settle(self, key: Key, applied: int) -> None:
        """The server has applied ``applied`` of this worker's pushes of ``key``."""
        if applied > self.applied.get(key, 0):
            self.applied[key] = applied

    def forget(self, key: Key) -> None:
        """``key`` was re-initialised or deleted: the server dropped its pending pushes."""
        self.applied.pop(key, None)
        for held in self._segments:
            held.holds.pop(key, None)

    def _free(self, held: _PushSegment) -> bool:
        return all(self.applied.get(k, 0) >= seq for k, seq in held.holds.items())

    def pack(self, items: list[tuple[Key, int, np.ndarray]]) -> list[ShmPart] | None:
        """Copy the parts into a free segment; their descriptors, or None when all
        :data:`POOL_SEGMENTS` still hold pushes the server has not applied."""
        offsets = []
        total = 0
        for _, _, array in items:
            offsets.append(total)
            total += _aligned(max(array.nbytes, 1))
        free = [s for s in self._segments if self._free(s)]
        held = next((s for s in free if s.segment.nbytes >= total), None)
        if held is None:
            if free:  # too small: replace it by a bigger one
                self._segments.remove(free[0])
                self._drop(free[0])
            elif len(self._segments) >= POOL_SEGMENTS:
                return None
            size = max(total, 1)
            held = _PushSegment(SharedArray((size + size // 4,), np.dtype("u1")))
            self._segments.append(held)
        holds: dict[Key, int] = {}
        held.holds = holds
        buffer = held.segment.array
        name = held.segment.name
        parts = []
        for (key, seq, array), offset in zip(items, offsets):
            part = ShmPart(name, offset, array.shape, array.dtype.str)
            np.copyto(np.ndarray(array.shape, array.dtype, buffer, offset), array, casting="no")
            if holds.get(key, 0) < seq:
                holds[key] = seq
            parts.append(part)
        return parts

    def _drop(self, held: _PushSegment) -> None:
        self.retired.append(held.segment.name)
        held.segment.free()

    def close(self) -> None:
        """Unlink every segment (the store is closing)."""
        self._finalizer()

    def names(self) -> list[str]:
        return [s.segment.name for s in self._segments]


def _free_all(segments: list[_PushSegment]) -> None:
    for held in segments:
        held.segment.free()
    segments.clear()
