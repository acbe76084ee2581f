"""Shared loading of the values recorded from real MXNet 1.9.1 (tests/data/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
REFERENCE = DATA / "mxnet_nd_reference.json"
PARAMS = DATA / "mxnet_params"


def load_reference() -> dict[str, Any]:
    """The recorded cases; a missing file fails loudly (never a silent skip)."""
    if not REFERENCE.exists():
        pytest.fail(f"{REFERENCE} is missing: record it with mxnet 1.9.1: $MXNET_PYTHON tests/data/make_mxnet_nd_reference.py")
    return json.loads(REFERENCE.read_text())
