"""The sums of a push from several devices, in the order of MXNet 1.9.1's reductions, so
that a store gives MXNet's bits:

* :func:`sum_into`: left to right, ``((a0 + a1) + a2) + ...``, as MXNet's ``device`` store
  (``CommDevice``'s ``ElementwiseSum``), and the sum of workers' pushes on Ray's servers.
* :func:`sum_into_cpu_comm`: MXNet's ``local`` store and a dist worker's merge of its devices
  (``CommCPU``'s ``ReduceSumCPU``): the first value plus each following group of up to four,
  each group summed left to right, ``a0 + (((a1 + a2) + a3) + a4)``, then
  ``+ (((a5 + a6) + a7) + a8)``, ... For three or more float values this differs from
  :func:`sum_into` in the last bits.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


#: Elements summed per block: the block of every input and of the output stays in cache.
SUM_BLOCK = 1 << 16
#: Values ``CommCPU`` adds up before adding them to the running sum (its unrolled groups).
CPU_COMM_GROUP = 4


def sum_into(out: np.ndarray, arrays: Sequence[np.ndarray]) -> np.ndarray:
    """``out = ((arrays[0] + arrays[1]) + arrays[2]) + ...``, element by element.

    Large contiguous arrays are summed block by block, which reads each input once instead
    of re-reading the partial sum from memory for every input.
    """
    return _blocked(out, arrays, _sum_block)


def sum_into_cpu_comm(out: np.ndarray, arrays: Sequence[np.ndarray]) -> np.ndarray:
    """``out = arrays[0] + (((arrays[1] + arrays[2]) + arrays[3]) + arrays[4]) + ...``, in
    groups of :data:`CPU_COMM_GROUP` after the first value: MXNet 1.9.1's ``local`` (and dist
    worker) order."""
    return _blocked(out, arrays, _sum_block_cpu_comm)


def _blocked(out: np.ndarray, arrays: Sequence[np.ndarray],
             kernel: Callable[[np.ndarray, Sequence[np.ndarray]], None]) -> np.ndarray:
    if len(arrays) == 1:
        np.copyto(out, arrays[0])
        return out
    if out.size > SUM_BLOCK and out.flags.c_contiguous and all(a.flags.c_contiguous for a in arrays):
        flat_out = out.reshape(-1)
        flats = [a.reshape(-1) for a in arrays]
        for start in range(0, flat_out.size, SUM_BLOCK):
            stop = start + SUM_BLOCK
            kernel(flat_out[start:stop], [f[start:stop] for f in flats])
        return out
    kernel(out, arrays)
    return out


def _sum_block(out: np.ndarray, arrays: Sequence[np.ndarray]) -> None:
    np.add(arrays[0], arrays[1], out=out)
    for array in arrays[2:]:
        np.add(out, array, out=out)


def _sum_block_cpu_comm(out: np.ndarray, arrays: Sequence[np.ndarray]) -> None:
    group_sum = np.empty_like(out) if len(arrays) > 2 else out
    np.copyto(out, arrays[0])
    for start in range(1, len(arrays), CPU_COMM_GROUP):
        group = arrays[start:start + CPU_COMM_GROUP]
        if len(group) == 1:
            np.add(out, group[0], out=out)
            continue
        _sum_block(group_sum, group)
        np.add(out, group_sum, out=out)
