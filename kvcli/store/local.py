"""``local``: every array lives in this process, as numpy arrays."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from kvcli.store.base import Key, KVStore


#: Elements summed per block: the block of every input and of the output stays in cache.
SUM_BLOCK = 1 << 16


def sum_into(out: np.ndarray, arrays: Sequence[np.ndarray]) -> np.ndarray:
    """``out = arrays[0] + arrays[1] + ...``, summed left to right, element by element.

    Every backend sums in this order so that they agree to the last bit. Large contiguous
    arrays are summed block by block, which reads each input once instead of re-reading
    the partial sum from memory for every input.
    """
    if len(arrays) == 1:
        np.copyto(out, arrays[0])
        return out
    if out.size > SUM_BLOCK and out.flags.c_contiguous and all(a.flags.c_contiguous for a in arrays):
        flat_out = out.reshape(-1)
        flats = [a.reshape(-1) for a in arrays]
        for start in range(0, flat_out.size, SUM_BLOCK):
            stop = start + SUM_BLOCK
            _sum_block(flat_out[start:stop], [f[start:stop] for f in flats])
        return out
    _sum_block(out, arrays)
    return out


def _sum_block(out: np.ndarray, arrays: Sequence[np.ndarray]) -> None:
    np.add(arrays[0], arrays[1], out=out)
    for array in arrays[2:]:
        np.add(out, array, out=out)


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
