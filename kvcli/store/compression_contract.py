"""The gradient-compression half of the KVStore contract (a mixin of
:class:`kvcli.store.base.KVStore`): MXNet's ``set_gradient_compression`` and the residuals a
session saves. The coding itself lives in :mod:`kvcli.store.compression`."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from kvcli.arrays.core import Key

if TYPE_CHECKING:  # imported on first use: a store without compression never loads the coder
    from kvcli.store.compression import GradientCompression


class CompressionContract:
    """Compression methods of a KVStore; they use its ``_compression``, ``_lock``,
    ``_check_open`` and ``type``."""

    _compression: GradientCompression | None
    _lock: threading.RLock
    type: str  # set on each store by kvcli.create (the name it was made with)

    if TYPE_CHECKING:
        def _check_open(self) -> None: ...

    def _compressed_values(self, key: Key, arrays: list[Any]) -> list[Any]:
        """With gradient compression on: what the receiver makes of each device's dense value
        after 2-bit coding with that device's residual (MXNet compresses before the sum;
        row-sparse values go as they are, as in MXNet). Backends that compress elsewhere
        (``dist``: the worker's sum, per server) return ``arrays`` unchanged."""
        compression = self._compression
        assert compression is not None  # called only while compression is on
        return [
            compression.round_trip(key, i, a) if isinstance(a, np.ndarray) else a
            for i, a in enumerate(arrays)
        ]

    def set_gradient_compression(self, compression_params: Any) -> None:
        """Compress pushed gradients with MXNet's 2-bit scheme (see
        :mod:`kvcli.store.compression`): ``{'type': '2bit', 'threshold': 0.5}``.

        Supported by ``device`` and the distributed stores, as in MXNet; ``None`` turns it
        off. Residuals are kept per key and device, and reset when a key is re-initialised.
        """
        from kvcli.store.registry import resolve
        from kvcli.store.compression import GradientCompression, parse_compression, require_support

        spec = parse_compression(compression_params)
        if spec is not None:
            require_support(self.type, resolve(self.type).compression)
        with self._lock:
            self._check_open()
            if spec is None:
                self._compression = None
            elif self._compression is None:
                self._compression = GradientCompression(spec)
            else:  # a new threshold keeps the residuals, as in MXNet
                self._compression.spec = spec

    def compression_residuals(self, key: Key) -> list[np.ndarray]:
        """Copies of ``key``'s compression residuals, one per device (or server part)."""
        return [] if self._compression is None else self._compression.residuals_of(key)

    def set_compression_residuals(self, key: Key, residuals: Sequence[np.ndarray]) -> None:
        """Restore residuals saved by :meth:`compression_residuals` (e.g. by a session)."""
        if self._compression is not None:
            self._compression.set_residuals(key, list(residuals))

    @property
    def gradient_compression(self) -> Any:
        """The compression setting (a :class:`~kvcli.store.compression.CompressionSpec`), or None."""
        return None if self._compression is None else self._compression.spec
