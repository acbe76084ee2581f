"""Fixtures for the CLI tests: run the real ``kvcli`` binary in a temporary home."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
KVCLI = Path(sys.executable).parent / "kvcli"


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
    env = dict(os.environ)
    env["KVCLI_HOME"] = str(home)
    env.pop("KVCLI_SESSION", None)
    env.pop("KVCLI_TEST_CRASH_POINT", None)
    # this environment sets PYTHONDONTWRITEBYTECODE: every kvcli process would compile kvcli
    # again; keep compiled files in a temporary cache instead (the source tree stays clean)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), f"kvcli-test-pycache-{os.getuid()}")
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "200"
    env.update(extra)
    return env


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def kv(home: Path) -> Runner:
    """``kv("push", "3", "ones(3)")`` runs the kvcli binary; returns code, stdout, stderr."""

    def run(*args: str, input: Optional[bytes] = None, env: Optional[dict[str, str]] = None, timeout: float = 60) -> Result:
        proc = subprocess.run(
            [str(KVCLI), *args],
            input=input,
            capture_output=True,
            env=kvcli_env(home, **(env or {})),
            timeout=timeout,
        )
        return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

    return run
