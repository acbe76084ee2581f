"""Fixtures of the MXNet-API tests: the recorded MXNet 1.9.1 numbers and store factories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import kvcli.mx as mx

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "tests" / "data" / "mxnet_kvstore_reference.json"
#: The single-process store types every MXNet scenario runs on (dist_sync: test_kvstore_dist.py).
LOCAL_TYPES = ("local", "device")


@pytest.fixture(scope="session")
def ref() -> dict[str, Any]:
    """MXNet 1.9.1's recorded results (tests/data/make_mxnet_kvstore_reference.py)."""
    if not REFERENCE.exists():
        pytest.fail(
            f"{REFERENCE} is missing: record it with $MXNET_PYTHON "
            "tests/data/make_mxnet_kvstore_reference.py (needs mxnet 1.9.1)"
        )
    return json.loads(REFERENCE.read_text())


@pytest.fixture
def make_kv() -> Iterator[Callable[..., Any]]:
    """``make_kv(name)``: an ``mx.kv`` store, closed after the test (``device`` stores get
    two device processes so the tests stay cheap on any machine)."""
    made: list[Any] = []

    def make(name: str = "local", **options: Any) -> Any:
        if name in ("device", "local_allreduce_device"):
            options.setdefault("num_devices", 2)
        kv = mx.kv.create(name, **options)
        made.append(kv)
        return kv

    yield make
    for kv in made:
        close = getattr(kv, "close", None)
        if close is not None:
            close()
