"""The random streams: numpy's PCG64, one per device, seeded by MXNet's rules.

``nd.random`` / ``mx.random`` (the MXNet layer) and SGLD's noise (an optimizer) draw from the
same streams, so ``mx.random.seed`` makes both repeatable. A device is ``(device type id,
device id)`` as MXNet numbers contexts (``cpu(0)`` is ``(1, 0)``).

* :func:`seed_every` reseeds every device; each device's stream is derived from the seed and
  the device, so ``cpu(0)`` and ``cpu(1)`` draw different numbers, as in MXNet.
* :func:`seed_device` reseeds one device from the seed alone: the same sequence on any device.
* Without a seed the streams start from seed 0: a fresh process is reproducible.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

Device = tuple[int, int]

DEFAULT_SEED = 0
#: ``cpu(0)``: the current device unless the MXNet layer says otherwise.
CPU0: Device = (1, 0)

_seed_all = [DEFAULT_SEED]
_generators: dict[Device, np.random.Generator] = {}
#: Where the current device comes from: the MXNet layer's ``with mx.cpu(1):`` blocks, once
#: that layer is loaded (:func:`follow_current_device`); cpu(0) before, as no block exists.
_current: list[Callable[[], Device]] = []


def seed_every(seed: int) -> None:
    """Reseed every device's stream from ``seed`` (and the device)."""
    _seed_all[0] = int(seed)
    _generators.clear()


def seed_device(seed: int, device: Device) -> None:
    """Reseed ``device``'s stream from ``seed`` alone."""
    _generators[device] = np.random.default_rng(int(seed))


def follow_current_device(current: Callable[[], Device]) -> None:
    """Take the current device from ``current`` (the MXNet layer's context, on its import)."""
    _current[:] = [current]


def current_device() -> Device:
    """The device whose stream a draw without a device uses."""
    return _current[0]() if _current else CPU0


def stream(device: Device | None = None) -> np.random.Generator:
    """The stream of ``device`` (default: the current one), made on first use."""
    key = current_device() if device is None else device
    found = _generators.get(key)
    if found is None:
        found = _generators[key] = np.random.default_rng([_seed_all[0], key[0], key[1]])
    return found
