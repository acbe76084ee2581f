"""``sum_into``: the one left-to-right sum of a push from several devices, shared by every
backend so that they agree to the last bit."""

from __future__ import annotations

from typing import Sequence

import numpy as np


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
