"""Optimizer state and init checks of ``dist_sync`` / ``dist_async`` (a mixin of
:class:`~kvcli.store.dist.store.DistStore`): sending the updater with each server's share of its
state, gathering the state back by the keys' layouts, and checking after a collective
``init`` that the servers hold what this worker initialised.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from kvcli.errors import DistributedError, ShapeMismatchError
from kvcli.arrays.core import Key
from kvcli.store.ray.group import Layout


class DistState:
    """The updater-state hooks of a DistStore (it provides ``_servers``, ``_layouts``,
    ``_info``, ``_updater``, ``_rank``, ``_num_servers`` and ``_call``)."""

    _servers: list[Any]
    _layouts: dict[Key, Layout]
    _info: dict[Key, Any]
    _updater: Any
    _rank: int
    _num_servers: int

    if TYPE_CHECKING:  # defined by DistStore (declared for the type checker only)
        def _call(self, ref: Any, what: str, lost: str = ...) -> Any: ...

    def _ship_updater(self, servers: Sequence[int]) -> None:
        """Send the updater (and each server's share of its state) to ``servers``."""
        updater = self._updater
        shares: list[dict[str, Any] | None] = [None] * self._num_servers
        shipped: Any = updater
        if updater is not None and hasattr(updater, "state_dict"):
            state = updater.state_dict()
            shipped = copy.copy(updater)  # the same settings, without carrying all the state
            shipped.load_state_dict({"states": {}, "counts": {}})
            shares = list(self._split_state(state))
        calls = []
        for server in servers:
            try:
                ref = self._servers[server].set_updater.remote(shipped, shares[server])
            except Exception as error:  # Ray could not serialise it
                raise DistributedError(
                    f"the updater {updater!r} cannot be sent to the servers ({type(error).__name__}: "
                    f"{error}); use a spec string or a module-level function"
                ) from None
            calls.append((ref, f"set_updater on kvcli server {server}"))
        for ref, what in calls:
            self._call(ref, what)

    def _split_state(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        shares: list[dict[str, Any]] = [{"states": {}, "counts": {}} for _ in range(self._num_servers)]
        for key in set(state["states"]) | set(state["counts"]):
            for server, rows in self._layouts.get(key, []):
                arrays = state["states"].get(key)
                if arrays is not None:
                    shares[server]["states"][key] = {
                        n: (a if rows is None else a[rows]) for n, a in arrays.items()
                    }
                if key in state["counts"]:
                    shares[server]["counts"][key] = state["counts"][key]
        return shares

    def _merge_states(self, states: list[dict[str, Any] | None]) -> dict[str, Any]:
        merged: dict[str, Any] = {"states": {}, "counts": {}}
        for key, layout in self._layouts.items():
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

    def _check_servers_hold(self, keys: list[Key]) -> None:
        """After init on rank != 0: the servers must hold rank 0's value with our shape."""
        wanted: dict[int, list[Key]] = {}
        for key in keys:
            for server, _ in self._layouts[key]:
                wanted.setdefault(server, []).append(key)
        for server, server_keys in wanted.items():
            held = self._call(self._servers[server].info.remote(server_keys), f"init check on kvcli server {server}")
            for key in server_keys:
                rows = dict(self._layouts[key])[server]
                info = self._info[key]
                expect = info.shape if rows is None else (len(range(*rows.indices(info.shape[0]))), *info.shape[1:])
                if held[key] is None:
                    raise DistributedError(
                        f"init of key {key!r} on rank {self._rank}: rank 0 did not initialise it; init is "
                        "collective: every worker calls it with the same keys, shapes and dtypes"
                    )
                shape, dtype = held[key]
                if tuple(shape) != tuple(expect) or dtype != str(info.dtype):
                    raise ShapeMismatchError(
                        f"init of key {key!r} on rank {self._rank}: this worker has {info.describe()} but "
                        f"rank 0 initialised a different value (server {server} holds shape {tuple(shape)}, "
                        f"dtype {dtype}); every worker must init the key with the same shape and dtype"
                    )
