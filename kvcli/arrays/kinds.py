"""What a store holds, declared without numpy: the type of a key and the dtypes a value may
have (name, bytes per item, ``.npy`` type code).

Moving a checkpoint between files and a session copies bytes and needs nothing else from a
dtype than this table; reading it here keeps numpy out of those paths (importing numpy is
about a quarter of a one-shot ``kvcli load-params``). Every other module reads the dtypes a
value may have from :data:`DTYPES`.
"""

from __future__ import annotations

import sys
from typing import NamedTuple, Union

#: A key of a store or a session: an int or a str.
Key = Union[int, str]


class DType(NamedTuple):
    """One dtype a value may have: numpy's ``name``, its ``itemsize`` in bytes and its ``.npy``
    type ``code`` (``"f4"``: the descr without its byte-order character)."""

    name: str
    itemsize: int
    code: str

    def __str__(self) -> str:
        return self.name

    @property
    def little(self) -> str:
        """The ``.npy`` descr of little-endian values (``"<f4"``; ``"|u1"`` for one byte)."""
        return ("|" if self.itemsize == 1 else "<") + self.code


_TABLE = (
    DType("float16", 2, "f2"), DType("float32", 4, "f4"), DType("float64", 8, "f8"),
    DType("int8", 1, "i1"), DType("int16", 2, "i2"), DType("int32", 4, "i4"), DType("int64", 8, "i8"),
    DType("uint8", 1, "u1"), DType("uint16", 2, "u2"), DType("uint32", 4, "u4"), DType("uint64", 8, "u8"),
    DType("bool", 1, "b1"),
)
#: The dtypes a value may have, by name (numeric only: no object, no strings, nothing to unpickle).
BY_NAME: dict[str, DType] = {dtype.name: dtype for dtype in _TABLE}
#: Their names, in the order messages list them.
DTYPES: tuple[str, ...] = tuple(BY_NAME)
#: The widest item, in bytes.
WIDEST_ITEM = max(dtype.itemsize for dtype in _TABLE)

_NATIVE = "<" if sys.byteorder == "little" else ">"
#: ``.npy`` descrs as numpy writes them -> (dtype, whether the values are big-endian).
_DESCRS: dict[str, tuple[DType, bool]] = {}
for _dtype in _TABLE:
    _DESCRS["<" + _dtype.code] = (_dtype, False)
    _DESCRS[">" + _dtype.code] = (_dtype, _dtype.itemsize > 1)
    _DESCRS["=" + _dtype.code] = (_dtype, _NATIVE == ">" and _dtype.itemsize > 1)
    if _dtype.itemsize == 1:
        _DESCRS["|" + _dtype.code] = (_dtype, False)
del _dtype


def from_descr(descr: object) -> tuple[DType, bool] | None:
    """The dtype a plain ``.npy`` descr names (``"<f4"``, ``">i8"``, ``"|b1"``) and whether
    its values are big-endian; ``None`` for anything else (numpy decides what that is)."""
    return _DESCRS.get(descr) if isinstance(descr, str) else None


__all__ = ["BY_NAME", "DTYPES", "DType", "Key", "WIDEST_ITEM", "from_descr"]
