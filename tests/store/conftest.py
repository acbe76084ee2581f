"""Fixtures for the engine tests: every contract test runs on each single-machine backend."""

from __future__ import annotations

from typing import Iterator

import pytest

import kvcli
from kvcli.store.api import KVStore

SINGLE_MACHINE_TYPES = ["local", "device"]


@pytest.fixture(params=SINGLE_MACHINE_TYPES)
def store(request: pytest.FixtureRequest) -> Iterator[KVStore]:
    """A fresh store of each single-machine type (devices: 2 worker processes)."""
    options = {"num_devices": 2} if request.param == "device" else {}
    with kvcli.create(request.param, **options) as kv:
        yield kv
