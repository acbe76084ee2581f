"""Helpers of the stress tests: run the real ``kvcli`` binary in a temporary home.

Everything here is self-contained (the other test folders' helpers are not imported, so this
folder can run alone). Every test module of the folder sets ``pytestmark = pytest.mark.slow``.
"""

from __future__ import annotations

import json
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

from tests.runner import KVCLI  # noqa: F401 - used by this folder's tests
from tests.runner import kvcli_env as shared_env
from tests.runner import run_kvcli as shared_run

REPO = Path(__file__).resolve().parents[2]
#: Test data kept in the repository (sources and licences in tests/data/SOURCES.md).
DATA = REPO / "tests" / "data"


def kvcli_env(home: Path, **extra: str) -> dict[str, str]:
    return shared_env(home, **extra)


def run_kvcli(home: Path, *args: str, env: Optional[dict[str, str]] = None, timeout: float = 60,
              cwd: Optional[Path] = None, input: Optional[bytes] = None,
              preexec_fn: Any = None) -> subprocess.CompletedProcess:
    """Run the kvcli binary in ``home`` (see :func:`tests.runner.run_kvcli`)."""
    return shared_run(*args, home=home, env=env, timeout=timeout, cwd=cwd, input=input, preexec_fn=preexec_fn)


def _the_one_stderr_line(proc: subprocess.CompletedProcess) -> str:
    """Exit 1, no traceback, exactly one line on stderr: that line."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr[-4000:]
    return lines[0]


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 1 with exactly one stderr line starting ``error:`` (no traceback); returns it."""
    line = _the_one_stderr_line(proc)
    assert line.startswith("error:"), line
    for needle in needles:
        assert needle in line, line
    return line


def assert_one_json_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 1 with exactly one stderr line that is a JSON ``{"error": ..., "hint": ...}`` object
    (what a ``--json`` command prints on failure); returns the error text."""
    error = json.loads(_the_one_stderr_line(proc))
    assert set(error) == {"error", "hint"} and isinstance(error["error"], str) and error["error"], error
    for needle in needles:
        assert needle in error["error"], error
    return str(error["error"])


class CaseTimeout(BaseException):
    """A fuzz case ran longer than its budget (BaseException: code under test cannot swallow it)."""


@contextmanager
def time_limit(seconds: float, what: str = "case") -> Iterator[None]:
    """Fail with :class:`CaseTimeout` if the block uses more than ``seconds`` of CPU time.

    A CPU-time timer (SIGPROF), so it does not disturb pytest-timeout's SIGALRM; in-process
    cases never block on I/O, and pytest-timeout still bounds the whole test.
    """

    def expire(signum, frame):  # noqa: ARG001
        raise CaseTimeout(f"{what} used more than {seconds:g} s of CPU time")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data: the real models live in its sample_models/ and mxnet_models/."""
    return DATA
