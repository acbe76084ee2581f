"""Item 4 of issue 15 on a real full disk: a 1 MiB tmpfs in a private mount namespace.

Runs only as root with ``unshare`` (Linux): the child mounts its own tmpfs, invisible to the
rest of the machine, and drives the CLI on it. Elsewhere the test is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import KVCLI, kvcli_env

pytestmark = pytest.mark.slow

CHILD = r'''
import json, os, subprocess, sys
from pathlib import Path
mount, kvcli = Path(sys.argv[1]), sys.argv[2]
home = mount / "home"
data = home / "sessions" / "default" / "data"
out = {}

def kv(*args):
    proc = subprocess.run([kvcli, *args], capture_output=True, text=True, timeout=120)
    return {"code": proc.returncode, "err": proc.stderr.strip(), "out": proc.stdout.strip()}

def fill():
    """Fill what is left of the disk (a file outside the session)."""
    try:
        fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    except OSError:
        return
    try:
        while True:
            os.write(fd, b"x" * 512)
    except OSError:
        pass
    finally:
        os.close(fd)

def files():
    return sorted(os.listdir(data)) if data.is_dir() else []

os.environ["KVCLI_HOME"] = str(home)
out["init_small"] = kv("init", "a", "ones(1000)")
files_before = files()
out["init_too_big"] = kv("init", "big", "ones(262144)")     # 1 MiB + header on a 1 MiB disk
out["orphans_after_failed_init"] = sorted(set(files()) - set(files_before))
out["push_after"] = kv("push", "a", "ones(1000)*2")
# fill the session with keys until the disk is full, then the rest of the disk with a file
keys = []
for i in range(64):
    result = kv("init", f"f{i}", "ones(16384)")               # 64 KiB each
    if result["code"] != 0:
        out["fill_error"] = result
        break
    keys.append(f"f{i}")
fill()
out["keys_filled"] = len(keys)
out["set_updater_full"] = kv("set-updater", "sum")
out["delete_full"] = kv("delete", keys[0], "--yes")
out["keys_after_delete"] = kv("keys")
(mount / "filler").unlink()
fill()
out["reset_full"] = kv("reset", "--yes")
out["files_after_reset"] = files()
out["show_after_reset"] = kv("--json", "show")
print(json.dumps(out))
'''


def _namespace_reason() -> str | None:
    if not sys.platform.startswith("linux"):
        return "needs Linux mount namespaces"
    if os.geteuid() != 0:
        return "needs root to mount a small tmpfs in a private mount namespace (unshare -m)"
    if shutil.which("unshare") is None:
        return "needs util-linux's unshare"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        return f"unshare -m is not permitted here ({probe.stderr.decode(errors='replace').strip()})"
    return None


def test_full_disk_one_line_errors_no_orphans_and_reset_delete_still_work(tmp_path: Path) -> None:
    reason = _namespace_reason()
    if reason:
        pytest.skip(reason)
    mount = tmp_path / "disk"
    mount.mkdir()
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    command = (f"mount -t tmpfs -o size=1m kvcli-test-disk {mount} && "
               f"exec {sys.executable} {script} {mount} {KVCLI}")
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", command],
                          capture_output=True, text=True, timeout=280, env=kvcli_env(tmp_path / "unused"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])

    def one_line_error(result: dict, *needles: str) -> None:
        assert result["code"] == 1, result
        assert "Traceback" not in result["err"] and len(result["err"].splitlines()) == 1, result
        for needle in needles:
            assert needle in result["err"], result

    assert out["init_small"]["code"] == 0, out["init_small"]
    one_line_error(out["init_too_big"], "no space left on the device", "it needs 1.0 MiB", "are free", "/data/")
    assert out["orphans_after_failed_init"] == []          # was a 3 MiB .npy keeping the disk full
    assert out["push_after"]["code"] == 0, out["push_after"]
    one_line_error(out["fill_error"], "no space left")
    assert out["keys_filled"] >= 5
    one_line_error(out["set_updater_full"], "no space left", "session.db")
    assert out["delete_full"]["code"] == 0, out["delete_full"]   # frees the key's file first
    assert "f0" not in out["keys_after_delete"]["out"].split()
    assert out["reset_full"]["code"] == 0, out["reset_full"]
    assert out["files_after_reset"] == []
    assert json.loads(out["show_after_reset"]["out"])["keys"] == []
