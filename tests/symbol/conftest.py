"""Fixtures for the symbol tests: the shared sample models and a way to run the CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from tests.runner import run_kvcli as shared_run

REPO = Path(__file__).resolve().parents[2]

def _find_shared() -> Path:
    """../shared next to the checkout, or next to the worktrees folder (/work/wt/NAME -> /work/shared),
    or $KVCLI_SHARED."""
    env = os.environ.get("KVCLI_SHARED")
    candidates = [Path(env)] if env else []
    candidates += [REPO / ".." / "shared", REPO / ".." / ".." / "shared"]
    for c in candidates:
        if (c / "sample_models").is_dir():
            return c.resolve()
    return (REPO / ".." / "shared").resolve()


SHARED = _find_shared()
SAMPLES = REPO / "sample_graphs"


@pytest.fixture(scope="session")
def shared() -> Path:
    """/work/shared (read-only reference files); skip when this checkout has none."""
    if not (SHARED / "sample_models").is_dir():
        pytest.skip(f"reference models not found at {SHARED} (expected ../shared next to the repo)")
    return SHARED


@pytest.fixture(scope="session")
def models(shared: Path) -> Path:
    return shared / "sample_models"


@pytest.fixture(scope="session")
def reference(shared: Path) -> Path:
    return shared / "mxnet_reference"


needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="graphviz 'dot' program is not installed")


def run_kvcli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
              timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``kvcli ARGS`` (see :func:`tests.runner.run_kvcli`) and capture text output."""
    return shared_run(*args, env=env, cwd=cwd, timeout=timeout)


@pytest.fixture
def kvcli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_kvcli
