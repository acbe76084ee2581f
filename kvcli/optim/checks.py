"""The optimizer package's leaf: numbers read from state files, spec-string number text, and
the array protocols (row-sparse gradients, kvcli NDArrays) every optimizer module uses.

It imports nothing of :mod:`kvcli.optim`, so the optimizer modules, the updaters, spec
strings and state files all build on it without importing each other back.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

from kvcli.arrays.core import Key
from kvcli.errors import OptimizerStateError

#: The largest step count a state file may hold: far beyond any training run, and small
#: enough for int64 and float arithmetic (a loaded 10**400 would overflow at the next push).
MAX_COUNT = 1 << 62
#: Device ids a state file may name (MXNet's contexts are small non-negative ints).
MAX_DEVICE_ID = 1 << 16


def is_builtin(cls: type) -> bool:
    """Whether ``cls`` is one of kvcli's own optimizers (not a user's subclass or class):
    their spec strings name no code, and each of their state arrays has the weight's shape."""
    return cls.__module__.startswith("kvcli.optim")


def check_count(value: Any, what: str) -> int:
    """A step count read from a state file: a whole number from 0 to :data:`MAX_COUNT`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= int(value) <= MAX_COUNT:
        shown = f"a {len(str(value))}-digit number" if isinstance(value, int) and value > MAX_COUNT else repr(value)[:40]
        raise OptimizerStateError(f"{what} is {shown}, not a whole number from 0 to 2**62")
    return int(value)


def device_counts(raw: Any) -> tuple[dict[int, dict[Key, int]], int]:
    """The per-device step counts of a state file (``extra["device_counts"]``), checked whole:
    ``{"current": D, "devices": [[D, [[KIND, KEY, COUNT], ...]], ...]}``."""
    def device_id(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DEVICE_ID:
            raise OptimizerStateError(f"a device id in the step counts is {repr(value)[:40]}, "
                                      f"not a whole number from 0 to {MAX_DEVICE_ID}")
        return value

    if not isinstance(raw, dict) or not isinstance(raw.get("devices"), list):
        raise OptimizerStateError("the per-device step counts are not a table with a 'devices' list")
    counts: dict[int, dict[Key, int]] = {}
    for entry in raw["devices"]:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], list)):
            raise OptimizerStateError("a device's step counts are not [device, [[kind, key, count], ...]]")
        per_key: dict[Key, int] = {}
        for item in entry[1]:
            if not (isinstance(item, list) and len(item) == 3 and item[0] in ("int", "str")
                    and isinstance(item[1], int if item[0] == "int" else str) and not isinstance(item[1], bool)):
                raise OptimizerStateError("a device's step count is not [kind, key, count]")
            per_key[item[1]] = check_count(item[2], f"the step count of key {item[1]!r}")
        counts[device_id(entry[0])] = per_key
    return counts, device_id(raw.get("current"))


def check_number(value: Any, what: str, optional: bool = False) -> float | None:
    """A finite number read from a state file (None too when ``optional``)."""
    if value is None and optional:
        return None
    try:
        number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    except OverflowError:  # a 400-digit integer
        number = math.inf
    if not math.isfinite(number):
        shown = f"a {len(str(value))}-digit number" if isinstance(value, int) and number == math.inf else repr(value)[:40]
        raise OptimizerStateError(f"{what} is {shown}, not a finite number")
    return number


# ---------------------------------------------------------------------- spec-string text
def format_number(value: float | int | None) -> str:
    """A number as a spec string writes it (``0.1``, ``2``, ``1e-08``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def show_value(value: Any) -> str:
    """An argument's value as a spec string writes it (``true``, ``none``, ``0.1``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, (int, float)):
        return format_number(value)
    return str(value)


# ---------------------------------------------------------------------- array protocols
def is_row_sparse(value: Any) -> bool:
    """Whether ``value`` follows the row-sparse protocol (``.indices``, ``.data``, ``.shape``)."""
    return not isinstance(value, np.ndarray) and all(hasattr(value, a) for a in ("indices", "data", "shape"))


def densify(grad: Any, dtype: Any = None) -> np.ndarray:
    """A dense copy of a row-sparse gradient (rows it does not list are zero)."""
    data = np.asarray(grad.data)
    dense = np.zeros(tuple(grad.shape), dtype=dtype or data.dtype)
    dense[np.asarray(grad.indices, dtype=np.int64)] = data
    return dense


def as_numpy(value: Any) -> Any:
    """The numpy buffer behind a kvcli NDArray (in place); numpy arrays and None pass through."""
    buffer = getattr(value, "_kvcli_buffer", None)
    return buffer() if buffer is not None else value


def leaves(raw: Any) -> Iterator[Any]:
    """The arrays of a (nested tuple / list) optimizer state, in order."""
    if isinstance(raw, (tuple, list)):
        for item in raw:
            yield from leaves(item)
    else:
        yield raw
