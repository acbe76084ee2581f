"""In-memory backends that record every call the store makes (as httpx's MockTransport
records requests): the store's checks and the updater contract, tested without processes."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kvcli.arrays.sparse import RowSparse
from kvcli.store.api import KVStore


class RecordingBackend:
    """A :class:`~kvcli.store.backend.Backend` keeping values in a dict; ``calls`` lists
    ``(method, arguments...)`` in order. ``remote=True`` makes it stand for a backend whose
    updater runs elsewhere (as Ray's): then ``apply`` receives every push."""

    rank = 0
    num_workers = 1

    def __init__(self, remote: bool = False) -> None:
        self.remote = remote
        self.values: dict[Any, Any] = {}
        self.calls: list[tuple[Any, ...]] = []
        self.updater: Any = None
        self.closed = 0

    def write(self, values: Sequence[tuple[Any, Any]], reset: bool) -> None:
        self.calls.append(("write", [k for k, _ in values], reset))
        self.values.update(values)

    def read(self, keys: Sequence[Any]) -> list[Any]:
        self.calls.append(("read", list(keys)))
        return [self.values[k] for k in keys]

    def read_rows(self, key: Any, rows: Sequence[np.ndarray]) -> list[RowSparse]:
        self.calls.append(("read_rows", key, [ids.tolist() for ids in rows]))
        return [self.values[key].rows(ids) for ids in rows]

    def stored(self, key: Any) -> Any:
        self.calls.append(("stored", key))
        return self.values[key]

    def reduce(self, key: Any, arrays: Sequence[np.ndarray]) -> np.ndarray:
        self.calls.append(("reduce", key, len(arrays)))
        total = np.array(arrays[0], copy=True)
        for array in arrays[1:]:
            total += array
        return total

    def apply(self, pushes: Sequence[tuple[Any, Any]], compression: Any) -> None:
        self.calls.append(("apply", [k for k, _ in pushes], compression))
        if self.remote and self.updater is not None:  # where the values live, the updater runs
            for key, merged in pushes:
                self.updater(key, merged, self.values[key])
            return
        self.values.update(pushes)

    def set_updater(self, updater: Any) -> None:
        self.calls.append(("set_updater", updater))
        self.updater = updater

    def gather_state(self, updater: Any) -> None:
        self.calls.append(("gather_state", updater))

    def forget(self, key: Any) -> None:
        self.calls.append(("forget", key))
        self.values.pop(key, None)

    def barrier(self) -> None:
        self.calls.append(("barrier",))

    def close(self) -> None:
        self.calls.append(("close",))
        self.closed += 1

    def changes(self) -> list[tuple[Any, ...]]:
        """The calls that change or would change values (everything but reads)."""
        return [c for c in self.calls if c[0] not in ("read", "read_rows")]


def recording_store(remote: bool = False, **options: Any) -> tuple[KVStore, RecordingBackend]:
    """A store over a fresh :class:`RecordingBackend`."""
    backend = RecordingBackend(remote)
    return KVStore(backend, "recorded", **options), backend
