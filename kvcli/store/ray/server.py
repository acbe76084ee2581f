"""The key servers behind ``dist_sync`` / ``dist_async`` (the group's coordinator is in
:mod:`kvcli.store.ray.coordinator`).

These are plain classes; :mod:`kvcli.store.ray.group` turns them into Ray actors with
``ray.remote(...)`` at run time, so importing this module does not need Ray. A key server
is a *threaded* actor (:data:`SERVER_ACTOR_OPTIONS`): every call runs under the server's
lock, and a pull that has to wait for other workers' pushes waits on a condition, in a
thread of its own concurrency group, so it never holds up the pushes that will release it.
(An asyncio actor would do the same with one thread, but Ray spends about 1.5 ms of the
actor's CPU per asyncio call against 0.65 ms per threaded one, measured here: with a few
calls per step and 2 cores, that was most of a small-keys step.) The coordinator, whose
barriers are few, is an asyncio actor.

A :class:`KeyServer` holds the values of the keys (or row ranges of big keys) hashed to it.
Each worker numbers its pushes per key (1, 2, ...); the server keeps, per key and rank, the
pushes that have arrived and how many it has applied:

* ``sync`` (dist_sync): step ``n`` of a key is applied once every rank's ``n``-th push is
  there — summed in rank order with :func:`kvcli.arrays.summation.sum_into`, then given to the
  updater once. A node's pre-summed push (:mod:`kvcli.store.ray.aggregate`) counts for
  each of its ranks and is summed in the place of the lowest.
* ``async`` (dist_async): each push is applied as soon as it arrives (in each rank's order).

A pull by rank ``r`` that has pushed a key ``n`` times waits until rank ``r``'s ``n``-th push
is applied, so ``push; pull`` on every worker sees that step's result, as in MXNet.
"""

from __future__ import annotations

import functools
import os
import pickle
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from kvcli.errors import DistributedError, DTypeMismatchError, ShapeMismatchError, SharedMemoryError
from kvcli.store.ray.shm import Arenas, Mappings, ShmPart
from kvcli.arrays.summation import sum_into
from kvcli.arrays.sparse import RowSparse, merge
from kvcli.arrays.core import Key
# group.py starts both actor classes by name from this module
from kvcli.store.ray.coordinator import Coordinator  # noqa: F401


#: Values up to this size travel inline in an actor call's arguments or answer; bigger ones
#: go through the object store by reference (Ray inlines up to 100 KiB itself).
INLINE_BYTES = 256 * 1024

#: Concurrency group of the key server's calls that wait for other workers (pulls).
WAIT_GROUP = "wait"
#: How a key server becomes a Ray actor: threads for short calls (pushes, inits), and
#: more for pulls waiting on other workers (one per worker and server at a time, more with
#: row_sparse_pull); a wait beyond these queues, but never blocks the pushes it awaits.
SERVER_ACTOR_OPTIONS: dict[str, Any] = {"max_concurrency": 4, "concurrency_groups": {WAIT_GROUP: 32}}
#: The key server's methods that may wait for other workers: called in :data:`WAIT_GROUP`.
WAITING_METHODS = frozenset({"pull_many", "pull_rows"})

#: The methods a worker may call through :meth:`KeyServer.packed`: those a step calls,
#: with a hundred small descriptors in their arguments and answers.
PACKED_METHODS = frozenset({"push_many", "pull_many"})

#: What a restarted server says about a key it lost.
RESTART_HINT = (
    "it was restarted by Ray and lost its values and optimizer: call init(...) for the key "
    "again on every worker"
)


class _ThreadChanges:
    """The lock a (threaded) key server's state is under, and "something changed" for the
    calls waiting in it: a waiting call releases the lock until it is notified."""

    def __init__(self) -> None:
        self.lock = threading.Condition(threading.RLock())

    def notify(self) -> None:
        self.lock.notify_all()

    def wait_until(self, done: Callable[[], bool], deadline: float) -> bool:
        """Wait until ``done()`` or the monotonic ``deadline``; returns ``done()``."""
        return self.lock.wait_for(done, max(0.0, deadline - time.monotonic()))


def _locked(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run a :class:`KeyServer` method under the server's lock (calls run in threads)."""

    @functools.wraps(method)
    def run(self: "KeyServer", *args: Any, **kwargs: Any) -> Any:
        with self._changes.lock:
            return method(self, *args, **kwargs)

    return run


@dataclass
class _Slot:
    """One key (or one row range of a big key) on one server."""

    #: The value of this key (or row range): a dense array, or a RowSparse whose row ids
    #: count from the start of the range.
    value: np.ndarray | RowSparse
    num_workers: int
    #: applied[r]: how many of rank r's pushes have been applied.
    applied: list[int] = field(default_factory=list)
    #: pending[r][seq]: rank r's push number ``seq``, arrived but not applied yet, with the
    #: ObjectRef it came in (None when it came inline); ``(None, None)`` for a rank whose
    #: push is in a node's pre-sum held at that node's lowest rank.
    pending: list[dict[int, tuple[np.ndarray | None, Any]]] = field(default_factory=list)
    #: dist_sync: errors the updater raised, by step; a pull that needs the step re-raises
    #: it (in dist_async only the pusher hears of it, from its push).
    errors: dict[int, BaseException] = field(default_factory=dict)
    scratch: np.ndarray | None = None
    #: Pushes received (a node's pre-summed push counts once), for tests and debugging.
    received: int = 0
    #: Copies of the value put in the object store for pullers, for tests and debugging.
    puts: int = 0
    #: Bumped whenever the value changes; ``snapshot`` is (version, ObjectRef) of the last
    #: copy put in the object store, so W workers pulling one step cost one copy, not W.
    version: int = 0
    snapshot: tuple[int, Any] | None = None
    #: Where ``value`` lies in the server's shared memory (dist_sync dense keys), so that
    #: workers on this node pull it by a memcpy (see :mod:`kvcli.store.ray.shm`).
    shm: ShmPart | None = None
    #: Its step counter there, ``[applied, failed]``: written after the value, so a worker
    #: that sees its step there can read the value without asking.
    counter: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.applied = [0] * self.num_workers
        self.pending = [{} for _ in range(self.num_workers)]

    def writable_value(self) -> np.ndarray | RowSparse:
        """The value, made writable first if it is a push kept from the object store."""
        if isinstance(self.value, np.ndarray) and not self.value.flags.writeable:
            self.value = np.array(self.value, copy=True)
        return self.value


def _holds_ref(item: Any) -> bool:
    """Whether an item of a push or pull answer carries ``[ObjectRef]`` (of a big value)."""
    return isinstance(item, list) or (isinstance(item, tuple) and any(isinstance(x, list) for x in item))


def _decoded(packed: np.ndarray, compressed: tuple[tuple[int, ...], Any]) -> np.ndarray:
    """A worker's float32 part from its 2-bit codes (``compressed`` = (shape, threshold))."""
    from kvcli.store.compression import dequantize

    shape, threshold = compressed
    return dequantize(packed, int(np.prod(shape, dtype=np.int64)), threshold).reshape(shape)


class KeyServer:
    """Holds values for a share of the keys and applies pushes to them.

    Args:
        index: this server's number (0..num_servers-1), used in messages.
        num_workers: how many workers push to every key.
        mode: ``"sync"`` or ``"async"``; None when the launcher started the server before a
            worker said which (rank 0's first ``init`` sets it).
    """

    def __init__(self, index: int, num_workers: int, mode: str | None = None) -> None:
        import ray

        self.index = index
        self.num_workers = num_workers
        self.mode = mode
        with warnings.catch_warnings():  # Ray 2.x warns about an internal it uses here
            warnings.simplefilter("ignore", DeprecationWarning)
            self.restarted = bool(ray.get_runtime_context().was_current_actor_reconstructed)
        #: A restarted server has lost the updater; it refuses pushes until it gets one.
        self.needs_updater = self.restarted
        self.updater: Callable[[Key, np.ndarray, np.ndarray], None] | None = None
        self.slots: dict[Key, _Slot] = {}
        self.gone: dict[int, str] = {}
        self._changes = _ThreadChanges()
        self._arenas = Arenas()
        #: Per rank: that worker's push segments mapped here (workers on this node).
        self._mapped: dict[int, Mappings] = {}
        self._shm_warned = False

    # ------------------------------------------------------------------ helpers
    def _name(self) -> str:
        return f"kvcli server {self.index}"

    def _slot(self, key: Key, verb: str) -> _Slot:
        slot = self.slots.get(key)
        if slot is None:
            if self.restarted:
                raise DistributedError(f"{verb} of key {key!r}: {self._name()} has no value for it: {RESTART_HINT}")
            raise DistributedError(
                f"{verb} of key {key!r}: {self._name()} has no value for it: rank 0 must init the key "
                "(init is collective: every worker calls it)"
            )
        return slot

    def _gone_message(self, ranks: list[int]) -> str | None:
        gone = [r for r in ranks if r in self.gone]
        if not gone:
            return None
        return "; ".join(f"rank {r} {self.gone[r]}" for r in gone)

    # ------------------------------------------------------------------ API
    def pid(self) -> int:
        """This server's process id (for tests and debugging)."""
        return os.getpid()

    @_locked
    def ping(self) -> dict[str, Any]:
        """Health and status: restart flag, mode, key count."""
        import ray

        return {
            "index": self.index,
            "node": ray.get_runtime_context().get_node_id(),
            "restarted": self.restarted,
            "needs_updater": self.needs_updater,
            "mode": self.mode,
            "keys": len(self.slots),
        }

    def packed(self, method: str, blob: bytes) -> Any:
        """``method(*pickle.loads(blob))``, answered as pickled bytes when the answer holds no
        ObjectRef (else as it is: only Ray's serialiser can carry a reference).

        Why: Ray's own serialisation of call arguments and answers costs about 1 ms per
        call with a hundred small tuples (one step of many small keys), ``pickle`` a tenth
        of that; this is the per-call cost that bounds many-small-keys steps. The worker
        sends a call this way only when its arguments hold no ObjectRef either.
        """
        if method not in PACKED_METHODS:
            raise DistributedError(f"{self._name()}: {method!r} cannot be called packed (only {sorted(PACKED_METHODS)})")
        answer = getattr(self, method)(*pickle.loads(blob))
        if any(_holds_ref(item) for item in answer):  # [ObjectRef] of a big value
            return answer
        return pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)

    @_locked
    def init(self, key: Key, value: np.ndarray, mode: str, reset: bool = True) -> bool:
        """Set ``key``'s value (a copy), reset its push counters and (unless ``reset`` is
        False: the value was loaded, not initialised) its optimizer state.

        Returns whether this server still needs the updater (it was restarted).
        """
        if self.mode is None:
            self.mode = mode
        elif self.mode != mode:
            raise DistributedError(
                f"init of key {key!r}: {self._name()} runs dist_{self.mode} but this worker is "
                f"dist_{mode}: every worker must create the same store type"
            )
        old = self.slots.get(key)
        shm = counter = None
        if isinstance(value, RowSparse):
            held: np.ndarray | RowSparse = value.copy()
        elif self.mode == "sync":
            shm, held, counter = self._shared(key, value)
        else:
            held = np.array(value, copy=True, order="C")
        self.slots[key] = _Slot(held, self.num_workers, shm=shm, counter=counter)
        if old is not None and old.shm is not None:
            self._arenas.free(old.shm)  # a fresh region: a late reader of the old one is unharmed
        forget = getattr(self.updater, "reset", None)
        if reset and forget is not None:
            forget(key)
        if old is not None:
            self._changes.notify()  # pulls waiting on the old value must fail, not hang
        return self.needs_updater

    def _shared(self, key: Key, value: np.ndarray) -> tuple[ShmPart | None, np.ndarray, np.ndarray | None]:
        """A copy of ``value`` in this server's shared memory (where, the copy, its step
        counter), or, when ``/dev/shm`` is full, on the heap with a warning: then workers
        pull it through the object store."""
        try:
            part, held, counter = self._arenas.allocate(tuple(value.shape), np.dtype(value.dtype))
        except SharedMemoryError as error:
            if not self._shm_warned:
                self._shm_warned = True
                warnings.warn(f"{self._name()}: key {key!r} and later ones are pulled through Ray's "
                              f"object store: {error}", RuntimeWarning, stacklevel=2)
            return None, np.array(value, copy=True, order="C"), None
        np.copyto(held, value)
        return part, held, counter

    @_locked
    def info(self, keys: list[Key]) -> dict[Key, tuple[tuple[int, ...], str] | None]:
        """Shape and dtype of each key's part held here (None when missing)."""
        return {
            k: (tuple(s.value.shape), str(s.value.dtype)) if (s := self.slots.get(k)) is not None else None
            for k in keys
        }

    @_locked
    def delete(self, key: Key) -> None:
        """Forget ``key`` (no error when it is not here)."""
        slot = self.slots.pop(key, None)
        if slot is not None:
            if slot.shm is not None:
                self._arenas.free(slot.shm)
            reset = getattr(self.updater, "reset", None)
            if reset is not None:
                reset(key)
            self._changes.notify()

    @_locked
    def set_updater(self, updater: Any, state: dict[str, Any] | None) -> None:
        """Replace the updater (None: assign); ``state`` is this server's share of its state."""
        if state is not None:
            updater.load_state_dict(state)
        self.updater = updater
        self.needs_updater = False

    @_locked
    def get_state(self) -> dict[str, Any] | None:
        """The updater's state (``state_dict()``) for the keys held here, or None."""
        state_dict = getattr(self.updater, "state_dict", None)
        return None if state_dict is None else state_dict()

    @_locked
    def mark_gone(self, rank: int, reason: str) -> None:
        """Record that ``rank`` will push no more (it died or exited); waiters fail at once."""
        self.gone[rank] = reason
        self._mapped.pop(rank, None)  # its push segments: nothing more will come from them
        self._changes.notify()

    @_locked
    def close(self) -> None:
        """Unlink this server's shared memory (its group is stopping; Ray kills it next)."""
        self._arenas.close()
        self._mapped.clear()

    @_locked
    def release(self, rank: int) -> None:
        """Unmap rank ``rank``'s push segments (its store closed)."""
        self._mapped.pop(rank, None)

    def push_many(
        self,
        rank: int | tuple[int, ...],
        items: list[tuple[Key, int, Any, Any]],
        retired: list[str] | None = None,
        want: list[bool] | None = None,
    ) -> list[tuple[int, ShmPart | None, Any]]:
        """Rank ``rank``'s pushes of one step to the keys held here, in one call.

        Each item is ``(key, seq, value, compressed)``: the ``seq``-th push of ``key``
        (already summed over the worker's devices), ``value`` an array sent inline or
        ``[ObjectRef]`` for a big one; ``compressed`` is ``(shape, threshold)`` when the
        value holds 2-bit codes (see :mod:`kvcli.store.compression`), decoded here first.
        A value may also be a :class:`ShmPart` in the worker's push segment (same node):
        it is read there, and the worker reuses the segment only once this server has
        applied the push. The answer, per item: how many of the rank's pushes of the key
        are applied, and where the value lies in shared memory (None when it does not): a
        worker whose push completed the step copies the result from there at its next pull
        without asking again. ``retired`` names push segments the worker has freed.

        ``rank`` is a tuple of ranks when the push is a node's pre-sum of those ranks'
        pushes (:mod:`kvcli.store.ray.aggregate`, dist_sync only): it stands for every one
        of them in the step's accounting, and is summed in the place of its lowest rank.
        Every item is recorded (and applied, when it completes a step) even if another
        fails; the first failure is raised.

        ``want[i]`` (dist_sync): the worker will pull item ``i``'s key next. When this push
        completed the step, the answer's third element is the step's result as a pull
        would answer it (inline, or ``[ObjectRef]`` of the copy every puller shares), so
        that pull needs no call of its own; else None.
        """
        refs = [item[2][0] for item in items if isinstance(item[2], list)]
        if refs:  # fetched before taking the lock: other calls go on meanwhile
            import ray

            resolved = iter(ray.get(refs))
        else:
            resolved = iter(())
        with self._changes.lock:
            applied = self._push_locked(rank, items, retired, resolved)
            wanted = want or [False] * len(items)
            return [
                (count, where, self._handed(item[0], rank, item[1]) if asked else None)
                for (count, where), item, asked in zip(applied, items, wanted)
            ]

    def _handed(self, key: Key, rank: int | tuple[int, ...], seq: int) -> Any:
        """The result of the step rank ``rank``'s push ``seq`` of ``key`` is in, when that
        step has been applied (dist_sync, dense values); else None."""
        slot = self.slots.get(key)
        rank = rank[0] if isinstance(rank, tuple) else rank
        if (
            self.mode != "sync" or slot is None or slot.applied[rank] != seq
            or seq in slot.errors or not isinstance(slot.value, np.ndarray)
        ):
            return None
        return self._result(slot)

    def _result(self, slot: _Slot) -> Any:
        """A dense value as a pull answers it: a copy inline when small, else ``[ObjectRef]``
        of a copy put once per version (taken before any later push changes the value)."""
        import ray

        if isinstance(slot.value, np.ndarray) and slot.value.nbytes <= INLINE_BYTES:
            return slot.value.copy()  # a later push must not change what we send
        if slot.snapshot is None or slot.snapshot[0] != slot.version:
            slot.snapshot = (slot.version, ray.put(slot.value))
            slot.puts += 1
        return [slot.snapshot[1]]

    def _push_locked(
        self, rank: int | tuple[int, ...], items: list[tuple[Key, int, Any, Any]], retired: list[str] | None,
        resolved: Any,
    ) -> list[tuple[int, ShmPart | None]]:
        ranks = self._pushers(rank)
        mapped = self._mapped.setdefault(ranks[0], Mappings())
        if retired:
            mapped.drop(retired)
        failure: BaseException | None = None
        try:
            for key, seq, value, compressed in items:
                if isinstance(value, ShmPart):
                    array, ref = mapped.view(value), None
                elif isinstance(value, list):
                    array, ref = next(resolved), value[0]
                else:
                    array, ref = value, None
                try:
                    if compressed is not None:
                        array, ref = _decoded(array, compressed), None
                    self._record(key, ranks, seq, array, ref)
                except Exception as error:  # noqa: BLE001 - the others still apply
                    failure = failure or error
        finally:
            self._changes.notify()
        if failure is not None:
            raise failure
        return [
            (s.applied[ranks[0]], s.shm) if (s := self.slots.get(item[0])) is not None else (0, None)
            for item in items
        ]

    def _pushers(self, rank: int | tuple[int, ...]) -> tuple[int, ...]:
        """The ranks a push stands for: one, or a node's pre-summed ranks (dist_sync)."""
        ranks = rank if isinstance(rank, tuple) else (rank,)
        if not ranks or any(not 0 <= r < self.num_workers for r in ranks):
            raise DistributedError(f"push to {self._name()}: ranks {list(ranks)} are not all in 0..{self.num_workers - 1}")
        if len(ranks) > 1 and self.mode != "sync":
            raise DistributedError(f"push to {self._name()}: only dist_sync takes a node's pre-summed push")
        return ranks

    def _record(self, key: Key, ranks: tuple[int, ...], seq: int, value: np.ndarray, ref: Any) -> None:
        """Check and keep one push (of one rank, or a node's sum of ``ranks``); apply what
        it completes."""
        slot = self._slot(key, "push")
        if self.needs_updater:
            raise DistributedError(f"push to key {key!r}: {self._name()} {RESTART_HINT}")
        if value.shape != slot.value.shape:
            raise ShapeMismatchError(
                f"push of key {key!r}: {self._name()} holds shape {slot.value.shape}, got {value.shape}; "
                "every worker must init the key with the same shape"
            )
        if value.dtype != slot.value.dtype:
            raise DTypeMismatchError(
                f"push of key {key!r}: {self._name()} holds dtype {slot.value.dtype}, got {value.dtype}; "
                "every worker must init the key with the same dtype"
            )
        for rank in ranks:
            if seq <= slot.applied[rank] or seq in slot.pending[rank]:
                raise DistributedError(
                    f"push of key {key!r}: rank {rank} sent push number {seq} twice; two processes "
                    "may be using the same rank"
                )
        slot.received += 1
        slot.pending[ranks[0]][seq] = (value, ref)
        for rank in ranks[1:]:  # counted in the sum held by ranks[0]
            slot.pending[rank][seq] = (None, None)
        if self.mode == "sync":
            self._apply_sync(key, slot)
        else:
            self._apply_async(key, slot, ranks[0])

    def _apply_sync(self, key: Key, slot: _Slot) -> None:
        workers = range(self.num_workers)
        while all(slot.applied[r] + 1 in slot.pending[r] for r in workers):
            step = slot.applied[0] + 1
            # a node's pre-sum sits at its lowest rank; its other ranks hold (None, None)
            popped = [slot.pending[r].pop(slot.applied[r] + 1) for r in workers]
            pushes = [(array, ref) for array, ref in popped if array is not None]
            for r in workers:
                slot.applied[r] += 1
            try:
                self._apply(key, slot, pushes, step)
            except BaseException:
                if slot.counter is not None:
                    slot.counter[1] = step  # watchers stop waiting and ask: the pull raises the error
                raise
            if slot.counter is not None:
                slot.counter[0] = step  # after the value: a watcher that sees it reads the result

    def _apply_async(self, key: Key, slot: _Slot, rank: int) -> None:
        while slot.applied[rank] + 1 in slot.pending[rank]:
            seq = slot.applied[rank] + 1
            array, ref = slot.pending[rank].pop(seq)
            slot.applied[rank] = seq
            assert array is not None  # only dist_sync takes a node's pre-summed push
            self._apply(key, slot, [(array, ref)], None)

    def _apply(self, key: Key, slot: _Slot, pushes: list[tuple[np.ndarray, Any]], step: int | None) -> None:
        slot.version += 1
        slot.snapshot = None  # frees the old copy in the object store once pullers let go
        arrays = [array for array, _ in pushes]
        if isinstance(slot.value, RowSparse) or any(isinstance(a, RowSparse) for a in arrays):
            self._apply_sparse(key, slot, arrays, step)
            return
        if self.updater is None:
            if len(pushes) == 1 and pushes[0][1] is not None:
                # Assign of one push that came through the object store (one worker, or
                # one node's pre-sum): that object *is* the new value, so pullers get it
                # as it is, with no put; where the pusher's node is another one, the result
                # is already there. Workers on this node read shared memory: copied there.
                if slot.shm is None:
                    slot.value = arrays[0]
                else:
                    np.copyto(slot.value, arrays[0])
                slot.snapshot = (slot.version, pushes[0][1])
                return
            sum_into(slot.writable_value(), arrays)  # type: ignore[arg-type]  # a dense key here
            return
        # The pushed arrays are read-only views of Ray's object store; the updater gets a
        # writable sum, as it would locally.
        if slot.scratch is None:
            slot.scratch = np.empty_like(slot.value)
        merged = sum_into(slot.scratch, arrays)
        self._update(key, slot, merged, step)

    def _update(self, key: Key, slot: _Slot, merged: Any, step: int | None) -> None:
        try:
            self.updater(key, merged, slot.writable_value())  # type: ignore[misc, arg-type]
        except Exception as error:
            if step is not None:
                slot.errors[step] = error
                for old in [s for s in slot.errors if s < step - 16]:
                    del slot.errors[old]
            raise

    def _apply_sparse(self, key: Key, slot: _Slot, arrays: list[Any], step: int | None) -> None:
        """A step with row-sparse pushes or on a row-sparse value: the workers' values are
        summed by row in rank order (:func:`kvcli.arrays.sparse.merge`), as the local store
        sums devices; the stored value keeps its storage type."""
        merged = merge(arrays)
        if self.updater is not None:
            self._update(key, slot, merged, step)
        elif isinstance(slot.value, RowSparse):
            slot.value.assign(merged if isinstance(merged, RowSparse) else RowSparse.from_dense(merged))
        else:
            assert isinstance(merged, RowSparse)  # a dense sum of a dense key took the branch above
            merged.to_dense(out=slot.value)

    @_locked
    def pull_many(
        self, rank: int, needs: list[tuple[Key, int]], timeout: float, local: bool = False
    ) -> list[Any]:
        """Each key's value once rank ``rank``'s ``need``-th push to it is applied.

        A small value comes back inline; a big one as ``[ObjectRef]`` of a copy put in the
        object store here, taken before any later push changes it and shared by every
        worker that pulls the same step. A ``local`` worker (on this node) gets a
        :class:`ShmPart` for a value held in shared memory and copies it out itself.
        """
        results: list[Any] = []
        for key, need in needs:
            slot = self._applied_slot(key, rank, need, timeout)
            if local and slot.shm is not None:
                results.append(slot.shm)
                continue
            results.append(self._result(slot))
        return results

    @_locked
    def pull_rows(self, key: Key, rank: int, need: int, timeout: float, rows: np.ndarray) -> RowSparse:
        """The rows ``rows`` (sorted ids counted from this range's start) of a row-sparse
        key, once rank ``rank``'s ``need``-th push is applied: only those rows travel."""
        slot = self._applied_slot(key, rank, need, timeout)
        if not isinstance(slot.value, RowSparse):
            raise DistributedError(f"row_sparse_pull of key {key!r}: {self._name()} holds a dense value for it")
        return slot.value.rows(rows)

    def _applied_slot(self, key: Key, rank: int, need: int, timeout: float) -> _Slot:
        """The slot of ``key`` once rank ``rank``'s ``need``-th push is applied."""
        slot = self._slot(key, "pull")
        if need > slot.applied[rank]:
            self._wait_applied(key, slot, rank, need, timeout)
        error = slot.errors.get(need) if self.mode == "sync" else None
        if error is not None:  # every rank learns that the step it pushed to failed
            raise DistributedError(
                f"pull of key {key!r}: the updater failed on {self._name()} at step {need}: "
                f"{type(error).__name__}: {error}"
            )
        return slot

    def _wait_applied(self, key: Key, slot: _Slot, rank: int, need: int, timeout: float) -> None:
        def missing() -> list[int]:
            if self.mode != "sync":
                return []
            return [r for r in range(self.num_workers) if slot.applied[r] + 1 not in slot.pending[r]]

        def settled() -> bool:
            return (
                self.slots.get(key) is not slot
                or slot.applied[rank] >= need
                or self._gone_message(missing()) is not None
            )

        done = self._changes.wait_until(settled, time.monotonic() + timeout)
        kind = f"dist_{self.mode}"
        if self.slots.get(key) is not slot:
            raise DistributedError(
                f"pull of key {key!r}: the key was initialised again or deleted while rank {rank} "
                "waited for its push to be applied"
            )
        if slot.applied[rank] >= need:
            return
        step = slot.applied[rank] + 1
        gone = self._gone_message(missing())
        if done and gone is not None:
            raise DistributedError(
                f"{kind} pull of key {key!r} cannot complete step {step}: {gone}, before pushing it"
            )
        raise DistributedError(
            f"{kind} pull of key {key!r} timed out after {timeout:g}s waiting for step {step}: no push "
            f"yet from rank(s) {missing()} (a worker died, hangs, or skipped the push); "
            "raise the timeout with timeout=... or KVCLI_DIST_TIMEOUT"
        )

    @_locked
    def stats(self) -> dict[Key, dict[str, Any]]:
        """Per key: the shape held here, the push counters and how many copies of the
        value were put in the object store for pullers (for tests and debugging)."""
        return {
            k: {
                "shape": tuple(s.value.shape), "applied": list(s.applied),
                "pending": [sorted(p) for p in s.pending], "received": s.received, "puts": s.puts,
            }
            for k, s in self.slots.items()
        }
