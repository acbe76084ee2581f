"""One local Ray cluster for the whole dist test session (2 CPUs, as on CI)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NO_RAY = "Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests"


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """``ray``, connected to a local cluster started for this session."""
    ray = pytest.importorskip("ray", reason=NO_RAY)
    from kvcli.store.ray.group import start_local_ray

    # Ray's worker processes import the launched functions (tests/dist/workers.py) and
    # the example by module name, so they need these folders on their path.
    path = os.pathsep.join(filter(None, [str(HERE), str(ROOT / "examples"), str(ROOT), os.environ.get("PYTHONPATH")]))
    started = not ray.is_initialized()
    if started:
        start_local_ray(ray, num_cpus=2, runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield ray
    if started:
        ray.shutdown()
