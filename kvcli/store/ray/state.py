"""Optimizer state and init checks of ``dist_sync`` / ``dist_async``: what rank 0 sends each
server with the updater (its share of the state), the state gathered back by the keys'
layouts, and the check, after a collective ``init``, that a server holds what this worker
initialised. Used by :class:`~kvcli.store.ray.store.RayBackend`.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from kvcli.arrays.core import ArrayInfo, Key
from kvcli.errors import DistributedError, ShapeMismatchError
from kvcli.store.ray.group import Layout


def shares_of(updater: Any, layouts: dict[Key, Layout], num_servers: int) -> tuple[Any, list[dict[str, Any] | None]]:
    """The updater to send (a stateful one as a copy with the same settings and no state,
    so the call does not carry all of it) and each server's share of its state."""
    if updater is None or not hasattr(updater, "state_dict"):
        return updater, [None] * num_servers
    state = updater.state_dict()
    shipped = copy.copy(updater)
    shipped.load_state_dict({"states": {}, "counts": {}})
    return shipped, list(split_state(state, layouts, num_servers))


def split_state(state: dict[str, Any], layouts: dict[Key, Layout], num_servers: int) -> list[dict[str, Any]]:
    """Each server's share of an updater's ``state_dict()``: its rows of each key it holds."""
    shares: list[dict[str, Any]] = [{"states": {}, "counts": {}} for _ in range(num_servers)]
    for key in set(state["states"]) | set(state["counts"]):
        for server, rows in layouts.get(key, []):
            arrays = state["states"].get(key)
            if arrays is not None:
                shares[server]["states"][key] = {
                    n: (a if rows is None else a[rows]) for n, a in arrays.items()
                }
            if key in state["counts"]:
                shares[server]["counts"][key] = state["counts"][key]
    return shares


def merge_states(states: list[dict[str, Any] | None], layouts: dict[Key, Layout]) -> dict[str, Any]:
    """One ``state_dict()`` from the servers' shares (``states[server]``, None: no updater state)."""
    merged: dict[str, Any] = {"states": {}, "counts": {}}
    for key, layout in layouts.items():
        parts = [(states[s] or {"states": {}, "counts": {}}, rows) for s, rows in layout]
        arrays = [p["states"].get(key) for p, _ in parts]
        if all(a is not None for a in arrays):
            merged["states"][key] = {
                name: arrays[0][name] if len(arrays) == 1 else np.concatenate([a[name] for a in arrays], axis=0)
                for name in arrays[0]
            }
        counts = [p["counts"].get(key) for p, _ in parts]
        if counts[0] is not None:
            merged["counts"][key] = counts[0]
    return merged


def check_held(key: Key, held: tuple[Any, str] | None, rows: slice | None, info: ArrayInfo, server: int, rank: int) -> None:
    """After init on rank != 0: server ``server`` must hold rank 0's value of ``key`` (what
    its ``info`` answered: shape and dtype, or None) with this worker's shape and dtype."""
    expect = info.shape if rows is None else (len(range(*rows.indices(info.shape[0]))), *info.shape[1:])
    if held is None:
        raise DistributedError(
            f"init of key {key!r} on rank {rank}: rank 0 did not initialise it; init is "
            "collective: every worker calls it with the same keys, shapes and dtypes"
        )
    shape, dtype = held
    if tuple(shape) != tuple(expect) or dtype != str(info.dtype):
        raise ShapeMismatchError(
            f"init of key {key!r} on rank {rank}: this worker has {info.describe()} but "
            f"rank 0 initialised a different value (server {server} holds shape {tuple(shape)}, "
            f"dtype {dtype}); every worker must init the key with the same shape and dtype"
        )
