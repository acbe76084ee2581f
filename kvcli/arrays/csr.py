"""Compressed sparse row (csr) values at the numpy level: the three arrays of MXNet's ``csr``
storage and the one check that they form a matrix MXNet computes with correctly.

:class:`CSRParts` is what the ``.params`` codec (:mod:`kvcli.arrays.mxparams`) reads and
writes; ``nd.sparse.CSRNDArray`` (the MXNet layer) holds the same three arrays and checks
them with :func:`check_csr`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kvcli.arrays.sparse import INDEX_DTYPE
from kvcli.errors import CSRError


class CSRParts(NamedTuple):
    """A 2-D csr matrix: ``data`` (the stored values), ``indices`` (the column of each value),
    ``indptr`` (where each row's values start; ``shape[0] + 1`` entries) and the dense ``shape``."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]

    @property
    def stype(self) -> str:
        return "csr"

    def to_dense(self) -> np.ndarray:
        """The matrix as a dense array (zeros where nothing is stored)."""
        out = np.zeros(self.shape, self.data.dtype)
        rows = np.repeat(np.arange(self.shape[0], dtype=INDEX_DTYPE), np.diff(self.indptr))
        out[rows, self.indices] = self.data
        return out


def check_csr(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]) -> None:
    """Refuse what MXNet would compute with wrongly: indptr not running from 0 to the number
    of values without decreasing, columns outside the shape, unsorted or repeated in a row."""
    rows, cols = shape
    if indptr.size != rows + 1:
        raise CSRError(f"csr indptr has {indptr.size} entries but {rows} rows need {rows + 1}")
    if indptr[0] != 0 or indptr[-1] != indices.size or np.any(np.diff(indptr) < 0):
        raise CSRError(f"csr indptr must start at 0, never decrease and end at the number of values "
                       f"({indices.size}), got {indptr[:6].tolist()}{' ...' if indptr.size > 6 else ''}")
    if data.size != indices.size:
        raise CSRError(f"csr data has {data.size} values but indices has {indices.size}: give one column per value")
    if indices.size and (indices.min() < 0 or indices.max() >= cols):
        bad = indices.min() if indices.min() < 0 else indices.max()
        raise CSRError(f"csr column {bad} is out of range for {cols} columns")
    same_row = np.ones(max(indices.size - 1, 0), bool)
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < indices.size)]
    same_row[starts - 1] = False
    steps = np.diff(indices)
    if np.any(steps[same_row] <= 0):
        at = int(np.flatnonzero(same_row & (steps <= 0))[0])
        row = int(np.searchsorted(indptr, at, side="right")) - 1
        kind = "repeated" if steps[at] == 0 else "not sorted"
        raise CSRError(f"csr columns of row {row} are {kind} ({indices[at]} then {indices[at + 1]}): "
                       "give each column once per row, in increasing order")


__all__ = ["CSRParts", "INDEX_DTYPE", "check_csr"]
