"""The random streams: numpy's PCG64, seeded by MXNet 1.9.1's rules.

``nd.random`` / ``mx.random`` (the MXNet layer) and SGLD's noise (an optimizer) draw from the
same streams, so ``mx.random.seed`` makes both repeatable. A device is ``(device type id,
device id)`` as MXNet numbers contexts (``cpu(0)`` is ``(1, 0)``). As MXNet's resource manager:

* every CPU context (``cpu(i)``, ``cpu_pinned``, ``cpu_shared``) draws from one stream: after
  ``seed(s)``, ``cpu(1)``'s first draw is ``cpu(0)``'s; each GPU has its own stream;
* the samplers (:data:`SAMPLE`: uniform, normal, ..., randint) and ``shuffle``
  (:data:`SHUFFLE`) have separate streams, so a draw of one does not move the other;
* :func:`seed_every` (``seed(s)``) reseeds every stream from the seed and the device;
* :func:`seed_device` (``seed(s, ctx)``) reseeds the CPU streams and, for a GPU, that GPU's,
  from the seed alone: the same sequence on any GPU. The samplers' CPU stream is then the
  one ``seed(s)`` gives (MXNet adds the device id 0); shuffle's is not.
* Without a seed the streams start from seed 0: a fresh process is reproducible.

The numbers are numpy's, not MXNet's; which draws repeat which is MXNet's.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

Device = tuple[int, int]

DEFAULT_SEED = 0
#: ``cpu(0)``: the current device unless the MXNet layer says otherwise.
CPU0: Device = (1, 0)
GPU = 2
#: The two kinds of stream MXNet keeps per device (its kParallelRandom and kRandom resources).
SAMPLE, SHUFFLE = 0, 1

_seed_all = [DEFAULT_SEED]
_generators: dict[tuple[Device, int], np.random.Generator] = {}
#: Where the current device comes from: the MXNet layer's ``with mx.cpu(1):`` blocks, once
#: that layer is loaded (:func:`follow_current_device`); cpu(0) before, as no block exists.
_current: list[Callable[[], Device]] = []


def _stream_device(device: Device) -> Device:
    """The device whose stream ``device`` draws from: itself for a GPU, cpu(0) for any CPU."""
    return device if device[0] == GPU else CPU0


def _generator(seed: int, device: Device, kind: int, one_context: bool) -> np.random.Generator:
    # seed(s, ctx) leaves out the device id (MXNet seeds with s alone), and gives shuffle's
    # stream another seed than seed(s) does (MXNet: s, not s * magic + id)
    device_id = 0 if one_context else device[1]
    return np.random.default_rng([seed, device[0], device_id, kind, int(one_context and kind == SHUFFLE)])


def seed_every(seed: int) -> None:
    """Reseed every device's streams from ``seed`` (and the device)."""
    _seed_all[0] = int(seed)
    _generators.clear()


def seed_device(seed: int, device: Device) -> None:
    """Reseed the CPU streams and ``device``'s (a GPU) from ``seed`` alone."""
    for target in {CPU0, _stream_device(device)}:
        for kind in (SAMPLE, SHUFFLE):
            _generators[(target, kind)] = _generator(int(seed), target, kind, one_context=True)


def follow_current_device(current: Callable[[], Device]) -> None:
    """Take the current device from ``current`` (the MXNet layer's context, on its import)."""
    _current[:] = [current]


def current_device() -> Device:
    """The device whose stream a draw without a device uses."""
    return _current[0]() if _current else CPU0


def stream(device: Device | None = None, kind: int = SAMPLE) -> np.random.Generator:
    """The ``kind`` stream of ``device`` (default: the current one), made on first use."""
    key = (_stream_device(current_device() if device is None else device), kind)
    found = _generators.get(key)
    if found is None:
        found = _generators[key] = _generator(_seed_all[0], key[0], kind, one_context=False)
    return found
