"""``local``: every array lives in this process, as numpy arrays."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from kvcli.arrays.summation import sum_into
from kvcli.store.base import Key, KVStore


class LocalStore(KVStore):
    """In-process store: a push from several devices is summed with numpy."""

    type = "local"

    def __init__(self) -> None:
        super().__init__()
        self._values: dict[Key, np.ndarray] = {}

    def _write(self, key: Key, array: np.ndarray) -> None:
        self._values[key] = array

    def _stored(self, key: Key) -> np.ndarray:
        return self._values[key]

    def _reduce(self, key: Key, arrays: Sequence[np.ndarray]) -> np.ndarray:
        info = self._info[key]
        return sum_into(np.empty(info.shape, info.dtype), arrays)

    def _assign_merged(self, key: Key, merged: np.ndarray) -> None:
        self._values[key] = merged  # merged is a fresh buffer: no copy needed

    def _forget(self, key: Key) -> None:
        self._values.pop(key, None)

    def _shutdown(self) -> None:
        self._values.clear()
