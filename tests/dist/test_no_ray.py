"""Without Ray, the distributed types say exactly what to install (runs without Ray)."""

from __future__ import annotations

import sys

import pytest

import kvcli
from kvcli.errors import DistributedError


@pytest.mark.parametrize("kind", ["dist_sync", "dist_async", "dist"])
def test_missing_ray_names_the_extra(monkeypatch, kind):
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` raise ImportError
    with pytest.raises(DistributedError) as error:
        kvcli.create(kind)
    assert "needs Ray" in str(error.value)
    assert "pip install 'kvcli[dist]'" in str(error.value)


def test_missing_ray_in_the_launcher(monkeypatch):
    from kvcli.store.ray.launch import launch

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(DistributedError, match=r"pip install 'kvcli\[dist\]'"):
        launch(["python", "-c", "pass"], 2)
