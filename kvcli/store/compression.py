"""2-bit gradient compression with an error-feedback residual (MXNet 1.9.1's scheme).

Each pushed gradient is added to a residual kept by the sender; every element of the sum
that reaches ``+threshold`` is sent as ``+threshold`` (code ``11``), every element at or
below ``-threshold`` as ``-threshold`` (code ``10``), the rest as 0 (code ``00``), and what
was sent is taken off the residual, so nothing is lost, only delayed. Sixteen codes pack
into one 32-bit word: the first element of a block takes the two high bits of the block's
first byte. The receiver turns the codes back into ``{-threshold, 0, +threshold}`` and sums.

Where MXNet compresses, and so where kvcli does:

* ``device`` (and ``local_allreduce_device``): every device's value is compressed with
  that device's residual before the values are summed — a push from one device too.
* ``dist_sync`` / ``dist_async``: a worker sums its devices uncompressed, compresses the
  sum with its own residual, and sends the packed codes; the servers decode and sum.
* ``local``: refused, as MXNet refuses it.

Only float32 values can be compressed (MXNet's kernels are float32-only). Arithmetic is
float32 element by element, as in MXNet's kernel, so results agree to the last bit.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Hashable, Mapping

import numpy as np

from kvcli.errors import DTypeMismatchError, UnsupportedError, CompressionError

#: Values packed into one 32-bit word (MXNet's ``GetCompressionFactor`` for 2bit).
FACTOR = 16
#: The compression types kvcli knows (MXNet 1.9.1 knows only 2bit).
TYPES = ("2bit",)
DEFAULT_THRESHOLD = 0.5  # MXNet's default for 2bit
_POS, _NEG = 0b11, 0b10


@dataclass(frozen=True)
class CompressionSpec:
    """A validated compression setting: ``type`` and its float32 ``threshold``."""

    type: str
    threshold: float

    @property
    def spec(self) -> str:
        """The string form, e.g. ``"2bit:threshold=0.5"`` (what a session records)."""
        return f"{self.type}:threshold={self.threshold!r}"

    def params(self) -> dict[str, Any]:
        """MXNet's dict form, ``{'type': '2bit', 'threshold': 0.5}``."""
        return {"type": self.type, "threshold": self.threshold}

    @property
    def threshold32(self) -> np.float32:
        return np.float32(self.threshold)

    def server_threshold(self) -> np.float32:
        """The threshold a dist server decodes with: MXNet sends it to the servers as C++
        ``std::to_string(float)`` (six decimals) and parses it back, so kvcli does too."""
        return np.float32(f"{float(self.threshold32):f}")


def parse_compression(params: Any) -> CompressionSpec | None:
    """Validate MXNet's ``{'type': '2bit', 'threshold': t}`` (``threshold`` defaults to 0.5),
    or the string form ``"2bit"`` / ``"2bit:threshold=0.5"``. ``None``, ``"none"`` or
    ``{'type': 'none'}`` turn compression off (a kvcli addition: MXNet cannot)."""
    if params is None:
        return None
    if isinstance(params, str):
        params = _parse_text(params)
    if not isinstance(params, Mapping):
        raise CompressionError(
            f"gradient compression takes a dict such as {{'type': '2bit', 'threshold': 0.5}}, "
            f"not {type(params).__name__}"
        )
    kind = params.get("type")
    if not isinstance(kind, str):
        raise CompressionError(
            f"gradient compression needs 'type' (one of {', '.join(TYPES)}), got {params!r}"
        )
    kind = kind.strip().lower()
    if kind == "none":
        return None
    if kind not in TYPES:
        raise CompressionError(
            f"unknown gradient compression type {params.get('type')!r}: use one of {', '.join(TYPES)}"
        )
    unknown = sorted(set(params) - {"type", "threshold"})
    if unknown:
        raise CompressionError(
            f"{kind} gradient compression has no parameter {unknown[0]!r}: it takes only 'threshold'"
        )
    raw = params.get("threshold", DEFAULT_THRESHOLD)
    try:
        if isinstance(raw, bool):
            raise ValueError
        threshold = float(raw)
    except (TypeError, ValueError):
        raise CompressionError(f"threshold {raw!r} is not a number: give a positive number such as 0.5") from None
    if not math.isfinite(threshold) or not np.float32(threshold) > 0:
        raise CompressionError(f"threshold must be a finite number greater than 0, got {raw!r}")
    return CompressionSpec(kind, float(np.float32(threshold)))


def _parse_text(text: str) -> dict[str, Any]:
    kind, _, rest = text.strip().partition(":")
    params: dict[str, Any] = {"type": kind}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        name, sep, value = item.partition("=")
        if not sep:
            raise CompressionError(f"compression parameter {item!r} needs a value: e.g. threshold=0.5")
        params[name.strip()] = value.strip()
    return params


# ---------------------------------------------------------------------- the kernels
def packed_size(size: int) -> int:
    """Bytes that hold ``size`` values (4 per 16 values, MXNet's ``GetCompressedSize``)."""
    return 4 * -(-size // FACTOR)


def quantize(grad: np.ndarray, residual: np.ndarray, threshold: np.float32) -> np.ndarray:
    """Add ``grad`` to ``residual`` (changed in place), return the packed 2-bit codes.

    Both are float32 and hold the same number of elements.
    """
    flat = residual.reshape(-1)
    np.add(flat, grad.reshape(-1), out=flat)
    pos = flat >= threshold
    neg = ~pos & (flat <= -threshold)
    flat[pos] -= threshold
    flat[neg] += threshold  # MXNet: residual -= -threshold, the same float32 result
    codes = np.zeros(packed_size(flat.size) * 4, np.uint8)
    codes[: flat.size][pos] = _POS
    codes[: flat.size][neg] = _NEG
    quads = codes.reshape(-1, 4)
    return (quads[:, 0] << 6) | (quads[:, 1] << 4) | (quads[:, 2] << 2) | quads[:, 3]


def dequantize(packed: np.ndarray, size: int, threshold: np.float32) -> np.ndarray:
    """The float32 values ``{-threshold, 0, +threshold}`` that ``packed`` encodes."""
    codes = np.empty((packed.size, 4), np.uint8)
    for column, shift in enumerate((6, 4, 2, 0)):
        codes[:, column] = (packed >> shift) & 0b11
    codes = codes.reshape(-1)[:size]
    out = np.zeros(size, np.float32)
    out[codes == _POS] = threshold
    out[codes == _NEG] = -threshold
    return out


# ---------------------------------------------------------------------- per-store state
class GradientCompression:
    """A store's compression setting and its residuals, one per (key, sender).

    The sender is a device index (``device``) or the worker itself (``dist``, sender 0).
    """

    def __init__(self, spec: CompressionSpec) -> None:
        self.spec = spec
        self.residuals: dict[tuple[Hashable, int], np.ndarray] = {}

    @staticmethod
    def check(key: Hashable, array: np.ndarray, verb: str = "push") -> None:
        """Refuse a value compression cannot take (before anything changes)."""
        if array.dtype != np.float32:
            raise DTypeMismatchError(
                f"{verb} of key {key!r}: gradient compression works on float32 values only, this key "
                f"holds {array.dtype}; init it with float32 values or turn compression off"
            )

    def compress(self, key: Hashable, sender: int, grad: np.ndarray) -> np.ndarray:
        """Packed codes of ``grad`` plus the sender's residual (which keeps the rest)."""
        residual = self.residuals.get((key, sender))
        if residual is None or residual.size != grad.size:
            residual = self.residuals[(key, sender)] = np.zeros(grad.size, np.float32)
        return quantize(grad, residual, self.spec.threshold32)

    def decompress(self, packed: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """What the receiver makes of ``packed``: float32 values of ``shape``."""
        return dequantize(packed, math.prod(shape), self.spec.threshold32).reshape(shape)

    def round_trip(self, key: Hashable, sender: int, grad: np.ndarray) -> np.ndarray:
        """Compress then decompress: the value a receiver sums in place of ``grad``."""
        return self.decompress(self.compress(key, sender, grad), grad.shape)

    def residuals_of(self, key: Hashable) -> list[np.ndarray]:
        """Copies of ``key``'s residuals, by sender (empty before its first push)."""
        count = 1 + max((sender for k, sender in self.residuals if k == key), default=-1)
        return [self.residuals.get((key, sender), np.zeros(0, np.float32)).copy() for sender in range(count)]

    def set_residuals(self, key: Hashable, residuals: list[np.ndarray]) -> None:
        """Replace ``key``'s residuals (``[]``: start from zero), e.g. as a session saved them."""
        self.reset(key)
        for sender, residual in enumerate(residuals):
            if residual.size:
                self.residuals[(key, sender)] = np.array(residual, np.float32).reshape(-1)

    def reset(self, key: Hashable) -> None:
        """Forget ``key``'s residuals (it was initialised again or deleted)."""
        for slot in [slot for slot in self.residuals if slot[0] == key]:
            del self.residuals[slot]


def save_residuals(path: Any, residuals: list[np.ndarray]) -> None:
    """Write residuals (one array per sender) to a new private (0600) ``.npz`` file, fsynced,
    no pickle."""
    from kvcli.osutil import NOFOLLOW, PRIVATE_FILE

    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, PRIVATE_FILE), "wb") as handle:
        np.savez(handle, *residuals)
        handle.flush()
        os.fsync(handle.fileno())


#: Residual arrays one file may hold (one per device or server part).
MAX_RESIDUAL_ARRAYS = 4096


def load_residuals(path: Any, limit: int | None = None) -> list[np.ndarray]:
    """Read what :func:`save_residuals` wrote (float32 arrays, never unpickled), each of at
    most ``limit`` elements (the key's size; default ``KVCLI_MAX_ELEMENTS``), bounded before
    it is unpacked (:class:`kvcli.arrays.npyio.NpzArchive`)."""
    from kvcli import config
    from kvcli.arrays.npyio import NpzArchive
    from kvcli.errors import NpyError

    most = int(config.get(config.MAX_ELEMENTS)) if limit is None else limit
    try:
        with NpzArchive(Path(path)) as archive:
            names = [f"arr_{i}" for i in range(len(archive.members))]
            if len(names) > MAX_RESIDUAL_ARRAYS or set(names) != set(archive.members):
                raise CompressionError(f"{path} does not hold compression residuals (arr_0, arr_1, ...)")
            arrays = [archive.read(name, most) for name in names]
    except NpyError as error:
        raise CompressionError(f"{path} {error}") from None
    if any(a.dtype != np.float32 or a.ndim != 1 for a in arrays):
        raise CompressionError(f"{path} does not hold compression residuals (1-D float32 arrays)")
    return arrays


def require_support(store_type: str, supported: bool) -> None:
    """MXNet compresses only on device and dist stores; say so for the others."""
    if not supported:
        raise UnsupportedError(
            f"gradient compression is not supported by the {store_type!r} store (as in MXNet): "
            "create a 'device' or 'dist_sync' store to compress gradients"
        )


__all__ = [
    "CompressionError", "CompressionSpec", "DEFAULT_THRESHOLD", "FACTOR", "GradientCompression",
    "TYPES", "dequantize", "load_residuals", "packed_size", "parse_compression", "quantize", "require_support",
    "save_residuals",
]
