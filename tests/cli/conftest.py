"""Fixtures for the CLI tests: run the real ``kvcli`` binary in a temporary home."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import pytest

from tests.runner import KVCLI, run_kvcli  # noqa: F401 - KVCLI is used by this folder's tests
from tests.runner import kvcli_env as shared_env

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    code: int
    out: str
    err: str

    def array(self) -> np.ndarray:
        """The printed numpy array (all numbers of stdout, as floats)."""
        text = self.out.replace("[", " ").replace("]", " ")
        return np.array([float(x) for x in text.split()])


Runner = Callable[..., Result]


def kvcli_env(home: Path, **extra: str) -> dict[str, str]:
    return shared_env(home, **extra)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def kv(home: Path) -> Runner:
    """``kv("push", "3", "ones(3)")`` runs the kvcli binary; returns code, stdout, stderr."""

    def run(*args: str, input: Optional[bytes] = None, env: Optional[dict[str, str]] = None, timeout: float = 60) -> Result:
        proc = run_kvcli(*args, home=home, env=env, timeout=timeout, input=input)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run
