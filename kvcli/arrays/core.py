"""How a store reads what it is given: keys, values (numpy arrays, NDArrays, lists, row-sparse
arrays, per-device lists) and outputs a pull writes into. One set of rules for every backend."""

from __future__ import annotations


from typing import Any, NamedTuple, Sequence

import numpy as np

from kvcli.arrays.kinds import DTYPES
from kvcli.errors import (
    ArityError,
    KeyTypeError,
    OutputError,
    ValueTypeError,
)

from kvcli.arrays.sparse import DEFAULT, RowSparse

from kvcli.arrays.kinds import Key as Key  # re-exported: the store's modules read it here


#: What a store holds: numbers and booleans (the dtypes a session file may have).
_STORABLE_DTYPES = frozenset(DTYPES)
#: dtype -> whether it is storable, as found (``dtype.name`` costs microseconds, a push of
#: a hundred keys asks it a hundred times).
_storable_seen: dict[np.dtype, bool] = {}


def _storable(dtype: np.dtype) -> bool:
    known = _storable_seen.get(dtype)
    if known is None:
        known = _storable_seen[dtype] = dtype.name in _STORABLE_DTYPES
    return known


class ArrayInfo(NamedTuple):
    """Shape, dtype and storage type (``"default"`` or ``"row_sparse"``) of a stored value."""

    shape: tuple[int, ...]
    dtype: np.dtype
    stype: str = DEFAULT

    def describe(self) -> str:
        return f"shape {self.shape} and dtype {self.dtype}"


def as_numpy(value: Any, key: Key | None = None) -> np.ndarray:
    """The numpy array behind ``value`` (no copy where the value already is one); a value
    that is not a numeric array (strings, objects, ragged lists) is a :class:`ValueTypeError`
    (naming ``key`` when given)."""
    where = "" if key is None else f"key {key!r}: "
    if isinstance(value, np.ndarray):
        array = value
    elif (buffer := getattr(value, "_kvcli_buffer", None)) is not None:
        array = buffer()
    elif getattr(value, "stype", None) == "csr":  # not densified silently: MXNet refuses csr pushes
        raise ValueTypeError(
            f"{where}a csr array cannot be stored (MXNet's KVStore refuses csr pushes too): "
            "convert it with .tostype('default')"
        )
    elif (asnumpy := getattr(value, "asnumpy", None)) is not None:
        array = np.asarray(asnumpy())
    else:
        try:
            array = np.asarray(value)
        except ValueError as error:  # a ragged list: numpy's message names no key or fix
            raise ValueTypeError(
                f"{where}a value of type {type(value).__name__} is not a rectangular array ({error}): "
                "give every row the same length"
            ) from None
    if not _storable(array.dtype):
        raise ValueTypeError(
            f"{where}a value of dtype {array.dtype} cannot be stored: use one of {', '.join(DTYPES)}"
        )
    return array


def one_value_per_key(pairs: Sequence[tuple[Key, Any]], verb: str, why: str) -> list[tuple[Key, Any]]:
    """``verb`` takes one value per key: a list of one value stands for that value (as in
    MXNet, whose ``init('w', [value])`` is ``init('w', value)``); a longer per-device list
    is an :class:`ArityError` (MXNet's "duplicate init of key")."""
    out = []
    for key, value in pairs:
        if is_value_list(value):
            if len(value) != 1:
                raise ArityError(
                    f"{verb} of key {key!r} got a list of {len(value)} values: {verb} takes one value per key ({why})"
                )
            value = value[0]
        out.append((key, value))
    return out


def writable_buffer(out: Any, key: Key) -> np.ndarray:
    """The array a pull writes into; refuses outputs that cannot be written in place."""
    if isinstance(out, np.ndarray):
        array = out
    else:
        buffer = getattr(out, "_kvcli_buffer", None)
        if buffer is None:
            raise OutputError(
                f"cannot pull key {key!r} into a {type(out).__name__}: pass a numpy array or an "
                "nd array (or out=None to get a new array back)"
            )
        array = buffer()
    if not array.flags.writeable:
        raise OutputError(f"cannot pull key {key!r} into a read-only array: pass a writable copy")
    return array


def is_writable_array(value: Any) -> bool:
    """Whether a pull can write into ``value`` in place (a writable numpy or nd array)."""
    if not isinstance(value, np.ndarray):
        buffer = getattr(value, "_kvcli_buffer", None)
        if buffer is None:
            return False
        value = buffer()
    return bool(value.flags.writeable)


def is_key(value: Any) -> bool:
    return isinstance(value, (int, np.integer, str)) and not isinstance(value, bool)


def normalise_key(key: Any) -> Key:
    if type(key) is int or type(key) is str:  # the usual case, decided at once
        return key
    if isinstance(key, bool) or not isinstance(key, (int, np.integer, str)):
        raise KeyTypeError(
            f"key {key!r} is a {type(key).__name__}: keys are int or str (e.g. 3 or 'weight')"
        )
    return int(key) if isinstance(key, (int, np.integer)) else key


def is_value_list(value: Any) -> bool:
    """True for a list of arrays (one per device); False for one array, nested lists included."""
    if isinstance(value, tuple) and value and not all(np.isscalar(v) for v in value):
        return True
    if not isinstance(value, list) or not value:
        return False
    first = value[0]
    return (
        isinstance(first, (np.ndarray, RowSparse))
        or hasattr(first, "asnumpy")
        or hasattr(first, "_kvcli_buffer")
    )
