"""Fixtures for the symbol tests: the real models in tests/data and a way to run the CLI."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from tests.runner import run_kvcli as shared_run

REPO = Path(__file__).resolve().parents[2]
#: Test data kept in the repository (sources and licences in tests/data/SOURCES.md).
DATA = REPO / "tests" / "data"
#: Real MXNet symbol files from public repositories, byte for byte as published.
MODELS = DATA / "sample_models"
#: Symbol files saved by MXNet 1.9.1 itself (tests/data/make_mxnet_model_reference.py).
MXNET_MODELS = DATA / "mxnet_models"
SAMPLES = REPO / "sample_graphs"


@pytest.fixture(scope="session")
def models() -> Path:
    return MODELS


@pytest.fixture(scope="session")
def mxnet_models() -> Path:
    return MXNET_MODELS


needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="graphviz 'dot' program is not installed")


def run_kvcli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
              timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``kvcli ARGS`` (see :func:`tests.runner.run_kvcli`) and capture text output."""
    return shared_run(*args, env=env, cwd=cwd, timeout=timeout)


@pytest.fixture
def kvcli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_kvcli
