"""The one way the tests run the real ``kvcli`` program (every folder's runner calls this)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

#: The installed entry point beside this interpreter.
KVCLI = Path(sys.executable).parent / "kvcli"
#: Variables a test run must not inherit from the developer's shell.
CLEARED = ("KVCLI_SESSION", "KVCLI_TEST_CRASH_POINT", "KVCLI_MAX_ELEMENTS", "KVCLI_NO_FAST_PATH")


def kvcli_env(home: Optional[Path] = None, **extra: str) -> dict[str, str]:
    """The environment of a kvcli process: ``home`` as KVCLI_HOME (else the inherited
    one), no colour, wide lines, UTF-8, and compiled files kept out of the source tree."""
    env = dict(os.environ)
    if home is not None:
        env["KVCLI_HOME"] = str(home)
    for name in CLEARED:
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


def run_kvcli(*args: str, home: Optional[Path] = None, env: Optional[dict[str, str]] = None,
              timeout: float = 60, cwd: Optional[Path] = None, input: Optional[bytes] = None,
              **popen: Any) -> subprocess.CompletedProcess[str]:
    """Run ``kvcli ARGS``; stdout and stderr come back decoded (UTF-8, bad bytes replaced)."""
    proc = subprocess.run([str(KVCLI), *args], input=input, capture_output=True, timeout=timeout,
                          env=kvcli_env(home, **(env or {})), cwd=cwd, **popen)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))
