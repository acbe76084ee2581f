"""Issue 32 item 5: another local user who makes ``kvcli-UID`` in the temporary folder
first no longer blocks the victim's device sessions (nor ``kvcli sessions``): the folder is
still refused, never adopted, and a private folder of an unpredictable name is used
instead (found again by the next command); ``kvcli sessions`` lists sessions whatever the
state of the runtime folder. Tried with a real second uid."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Iterator

import pytest

from tests.other_user import as_user, other_uid, reachable_folder
from tests.runner import run_kvcli

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A short temporary folder open to every user, as /tmp is (sticky, 1777): kvcli's
    TMPDIR in these tests, so the real runtime folder is left alone."""
    with reachable_folder("kvsq", 0o1777) as folder:
        yield folder


def _squat(path: str) -> None:
    """As the other user: make the victim's runtime folder first, open to everyone."""
    os.mkdir(path)
    os.chmod(path, 0o777)


def test_a_squatted_runtime_folder_is_refused_and_a_private_one_used_instead(tmp_path: Path, shared_tmp: Path) -> None:
    uid = other_uid()
    me = os.geteuid()
    squat = shared_tmp / f"kvcli-{me}"
    as_user(uid, _squat, str(squat))
    assert os.stat(squat).st_uid == uid
    env = {"TMPDIR": str(shared_tmp), "XDG_RUNTIME_DIR": "", "KVCLI_DEVICE_IDLE": "60"}
    home = tmp_path / "h"
    done = run_kvcli("--type", "device", "--num-devices", "2", "init", "w", "[1, 2, 3]", home=home, env=env)
    assert done.returncode == 0, done.stderr  # the old code refused every device session here
    assert run_kvcli("push", "w", "[4, 5, 6]", "--devices", "2", home=home, env=env).returncode == 0
    assert "[ 8. 10. 12.]" in run_kvcli("pull", "w", home=home, env=env).stdout  # summed from 2 devices
    fallbacks = sorted(shared_tmp.glob(f"kvcli-{me}-*"))
    assert len(fallbacks) == 1  # made once, found again by every later command
    info = os.lstat(fallbacks[0])
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == me and stat.S_IMODE(info.st_mode) == 0o700
    assert len(fallbacks[0].name) == len(f"kvcli-{me}-") + 8  # an unpredictable name
    assert list(squat.iterdir()) == []  # nothing of the victim's went into the squatter's folder
    listed = run_kvcli("--json", "sessions", home=home, env=env)
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)["sessions"]
    assert row["warm_devices"] == 2  # the devices the commands left warm, in the private folder
    stop = run_kvcli("push", "w", "[0, 0, 0]", home=home, env={**env, "KVCLI_DEVICE_IDLE": "0"})
    assert stop.returncode == 0, stop.stderr


def test_kvcli_sessions_does_not_depend_on_the_runtime_folder(tmp_path: Path, shared_tmp: Path) -> None:
    uid = other_uid()
    home = tmp_path / "h"
    assert run_kvcli("--type", "device", "--num-devices", "2", "init", "w", "[1, 2]", home=home,
                     env={"TMPDIR": str(shared_tmp), "XDG_RUNTIME_DIR": "", "KVCLI_DEVICE_IDLE": "0"}).returncode == 0
    runtime = shared_tmp / "run"
    runtime.mkdir(mode=0o700)
    (runtime / "kvcli").mkdir(mode=0o700)
    os.chown(runtime / "kvcli", uid, uid)  # an unusable runtime folder: XDG_RUNTIME_DIR's is refused
    env = {"XDG_RUNTIME_DIR": str(runtime)}
    listed = run_kvcli("--json", "sessions", home=home, env=env)
    assert listed.returncode == 0, listed.stderr  # the old listing failed with the runtime folder's error
    [row] = json.loads(listed.stdout)["sessions"]
    assert row["session"] == "default" and row["keys"] == 1 and row["warm_devices"] is None
    table = run_kvcli("sessions", home=home, env=env)
    assert table.returncode == 0 and "default" in table.stdout
    # a command that needs the devices still refuses it (an assign push of one value needs none)
    pushed = run_kvcli("push", "w", "[3, 4]", "--devices", "2", home=home, env=env)
    assert pushed.returncode == 1 and f"runtime folder {runtime}/kvcli: it belongs to uid {uid}" in pushed.stderr
