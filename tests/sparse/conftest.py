"""Fixtures for the row-sparse tests: MXNet 1.9.1's recorded results and a store per type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import kvcli.mx as mx

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "mxnet_sparse_reference.json"
STORE_TYPES = ["local", "device"]


@pytest.fixture(scope="session")
def reference() -> dict[str, Any]:
    """MXNet's numbers (tests/data/make_mxnet_sparse_reference.py); missing data fails loudly."""
    if not REFERENCE.exists():
        pytest.fail(
            f"{REFERENCE} is missing: record it with mxnet 1.9.1: $MXNET_PYTHON tests/data/make_mxnet_sparse_reference.py",
            pytrace=False,
        )
    return json.loads(REFERENCE.read_text())


@pytest.fixture(params=STORE_TYPES)
def store_type(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def ref(reference: dict[str, Any], store_type: str) -> dict[str, Any]:
    """MXNet's numbers for the store type under test."""
    return reference["stores"][store_type]


@pytest.fixture
def make_kv(store_type: str) -> Iterator[Any]:
    """``make_kv()`` -> a fresh ``mx.kv`` store of the parametrised type (2 devices)."""
    made: list[Any] = []

    def make() -> Any:
        kv = mx.kv.create(store_type, **({"num_devices": 2} if store_type == "device" else {}))
        made.append(kv)
        return kv

    yield make
    for kv in made:
        kv.close()


def rsp(case: dict[str, Any], shape: tuple[int, ...], ctx: Any = None) -> Any:
    """A RowSparseNDArray from a recorded {"indices", "data"} case (float32, as recorded)."""
    data = np.asarray(case["data"], np.float32).reshape(len(case["indices"]), *shape[1:])
    return mx.nd.sparse.row_sparse_array((data, np.asarray(case["indices"], np.int64)), shape=shape, ctx=ctx)


def assert_rsp(actual: Any, expected: dict[str, Any], shape: tuple[int, ...]) -> None:
    """Same row ids and the same rows, bit for bit."""
    assert actual.stype == "row_sparse"
    assert actual.indices.asnumpy().tolist() == expected["indices"]
    want = np.asarray(expected["data"], np.float32).reshape(len(expected["indices"]), *shape[1:])
    np.testing.assert_array_equal(actual.data.asnumpy(), want)
