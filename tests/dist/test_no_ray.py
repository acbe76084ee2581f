"""Without Ray, the distributed types say exactly what to install (runs without Ray)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_the_whole_suite_collects_without_ray() -> None:
    """``pip install -e '.[test]'`` alone: every test module is collected (none imports Ray
    at module level unguarded); the Ray ones are skipped, each with one line naming the extra."""
    root = Path(__file__).resolve().parents[2]
    code = ("import sys; sys.modules['ray'] = None; import pytest; "  # `import ray` now raises ImportError
            "raise SystemExit(pytest.main(['--collect-only', '-q', '-rs', '-p', 'no:cacheprovider', 'tests']))")
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:]
    skipped = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert any("tests/dist/test_single.py" in line for line in skipped), result.stdout[-3000:]
    assert all(line.endswith("Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")
               for line in skipped), skipped
