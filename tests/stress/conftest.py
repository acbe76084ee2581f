"""Helpers of the stress tests: run the real ``kvcli`` binary in a temporary home.

Everything here is self-contained (the other test folders' helpers are not imported, so this
folder can run alone). Every test module of the folder sets ``pytestmark = pytest.mark.slow``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = (REPO / ".." / "shared").resolve()
KVCLI = Path(sys.executable).parent / "kvcli"


def kvcli_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a kvcli subprocess: its own home, no colour, a bytecode cache."""
    env = dict(os.environ)
    env["KVCLI_HOME"] = str(home)
    for name in ("KVCLI_SESSION", "KVCLI_TEST_CRASH_POINT", "KVCLI_MAX_ELEMENTS", "KVCLI_NO_FAST_PATH"):
        env.pop(name, None)
    # PYTHONDONTWRITEBYTECODE would make every kvcli process compile kvcli again; keep the
    # compiled files in a temporary cache instead (the source tree stays clean)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), f"kvcli-test-pycache-{os.getuid()}")
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "200"
    env["PYTHONIOENCODING"] = "utf-8"
    env.update(extra)
    return env


def run_kvcli(home: Path, *args: str, env: Optional[dict[str, str]] = None, timeout: float = 60,
              cwd: Optional[Path] = None, input: Optional[bytes] = None,
              preexec_fn=None) -> subprocess.CompletedProcess:
    """Run the kvcli binary; stdout/stderr are decoded (UTF-8, undecodable bytes replaced)."""
    proc = subprocess.run([str(KVCLI), *args], input=input, capture_output=True, timeout=timeout,
                          env=kvcli_env(home, **(env or {})), cwd=cwd, preexec_fn=preexec_fn)
    proc.stdout = proc.stdout.decode("utf-8", "replace")
    proc.stderr = proc.stderr.decode("utf-8", "replace")
    return proc


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 1 with exactly one stderr line starting ``error:`` (no traceback); returns it."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr[-4000:]
    assert lines[0].startswith("error:"), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


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
def shared() -> Path:
    """/work/shared (read-only reference models next to the repo); skip when absent."""
    if not (SHARED / "sample_models").is_dir() or not (SHARED / "mxnet_reference").is_dir():
        pytest.skip(f"reference models not found at {SHARED} (expected ../shared/sample_models and "
                    "../shared/mxnet_reference next to the repo)")
    return SHARED
