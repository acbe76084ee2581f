"""``local``: every value lives in this process, as numpy arrays (or row-sparse values)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kvcli.arrays.core import Key
from kvcli.arrays.sparse import RowSparse
from kvcli.arrays.summation import sum_into_cpu_comm
from kvcli.store.backend import UpdaterFn, Value
from kvcli.store.rowsparse import rows_of


class LocalBackend:
    """In-process backend: a push from several devices is summed with numpy, in MXNet's
    ``local`` order (:func:`~kvcli.arrays.summation.sum_into_cpu_comm`)."""

    remote = False
    rank = 0
    num_workers = 1

    def __init__(self) -> None:
        self._values: dict[Key, Value] = {}

    def write(self, values: Sequence[tuple[Key, Value]], reset: bool) -> None:
        self._values.update(values)

    def read(self, keys: Sequence[Key]) -> list[Value]:
        return list(map(self._values.__getitem__, keys))

    def read_rows(self, key: Key, rows: Sequence[np.ndarray]) -> list[RowSparse]:
        return rows_of(self._values[key], rows)

    def stored(self, key: Key) -> Value:
        return self._values[key]

    def reduce(self, key: Key, arrays: Sequence[np.ndarray]) -> np.ndarray:
        # MXNet's local store (CommCPU) adds in groups of four, not left to right
        return sum_into_cpu_comm(np.empty(arrays[0].shape, arrays[0].dtype), arrays)

    def apply(self, pushes: Sequence[tuple[Key, Value]], compression: Any) -> None:
        self._values.update(pushes)  # each sum is a fresh buffer: no copy needed

    def set_updater(self, updater: UpdaterFn | None) -> None:
        """Nothing to do: the store runs the updater in this process."""

    def gather_state(self, updater: Any) -> None:
        """Nothing to do: the updater holds its state in this process."""

    def forget(self, key: Key) -> None:
        self._values.pop(key, None)

    def barrier(self) -> None:
        """Nothing to wait for: one worker."""

    def close(self) -> None:
        self._values.clear()

    def __repr__(self) -> str:
        return "<LocalBackend>"
