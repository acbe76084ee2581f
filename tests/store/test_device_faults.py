"""A device store under interrupts, kills and full shared memory: never a wrong sum, never
a crash, nothing leaked (issue 15 items 1, 2 and 9; issue 13's segfaults; issue 12's
workers that died with the terminal's Ctrl-C)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from kvcli.store.device.shm import leftover_segments

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs Linux /proc and /dev/shm")


def run_script(code: str, timeout: float = 120, **popen: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout, **popen
    )


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def group_alive(pgid: int) -> list[int]:
    """Pids of the running (not zombie) processes of process group ``pgid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                found.append(int(entry))
    return found


def test_an_interrupted_push_changes_nothing_and_later_pushes_are_exact() -> None:
    # SIGINT lands at random points of 4-device pushes (mostly while the store waits for
    # its devices); before the fix every later push stored a torn sum.
    result = run_script(
        """
        import json, os, signal, threading, time, traceback
        import numpy as np, kvcli
        from kvcli.store.device.shm import device_array
        n = 1 << 22
        kv = kvcli.create("device", num_devices=4)
        kv.init("w", np.zeros(n, np.float32))
        values = []
        for _ in range(4):
            a = device_array(n); a[:] = 1; values.append(a)
        kv.push("w", values)
        where, wrong, torn = [], 0, 0
        go, delay = threading.Event(), [0.0]

        def interrupter():  # started once, so no thread start can be interrupted
            while True:
                go.wait()
                go.clear()
                time.sleep(delay[0])
                os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupter, daemon=True).start()
        for trial in range(12):
            kv.init("w", np.full(n, 7, np.float32))
            delay[0] = 0.002 * (trial + 1)
            go.set()
            try:
                while True:  # only the interrupt ends it, however late it comes
                    kv.push("w", values)
            except KeyboardInterrupt as error:
                where.append(traceback.extract_tb(error.__traceback__)[-1].name)
            value = kv.pull("w")
            # every push either happened whole (4) or, if the first was cut, not at all (7)
            torn += not ((value == 4).all() or (value == 7).all())
            for _ in range(3):
                kv.push("w", values)
                wrong += int((kv.pull("w") != 4).sum())
        kv.close()
        print(json.dumps({"where": where, "wrong": wrong, "torn": torn}))
        """
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["wrong"] == 0 and report["torn"] == 0
    assert len(report["where"]) == 12  # every interrupt landed inside a push
    assert "Traceback" not in result.stderr  # no device printed one


def test_terminal_ctrl_c_reaches_the_store_not_its_devices() -> None:
    # A terminal's Ctrl-C signals the whole foreground process group: devices must not
    # die of it (they used to, each printing a KeyboardInterrupt traceback).
    code = """
        import json, sys, time
        import numpy as np, kvcli
        kv = kvcli.create("device", num_devices=2)
        kv.init(0, np.zeros(1 << 20, np.float32))
        kv.push(0, [np.ones(1 << 20, np.float32)] * 3)
        try:  # the interrupt may come as soon as the pids are out
            print(json.dumps(kv.backend.device_pids), flush=True)
            time.sleep(60)
        except KeyboardInterrupt:
            pass
        kv.push(0, [np.ones(1 << 20, np.float32)] * 2)
        print(json.dumps({"value": float(kv.pull(0).max()), "pids": kv.backend.device_pids}), flush=True)
        kv.close()
        """
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        pids = json.loads(child.stdout.readline())
        os.killpg(child.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        after = json.loads(child.stdout.readline())
        assert child.wait(timeout=30) == 0
        assert after == {"value": 2.0, "pids": pids}  # same devices, exact sum
        assert "KeyboardInterrupt" not in child.stderr.read()
        assert not any(alive(p) for p in pids)
    finally:
        if child.poll() is None:
            child.kill()
        child.stdout.close()
        child.stderr.close()


@pytest.mark.parametrize(
    "code",
    [
        "v = kv.view('w'); kv.delete('w'); print(float(v.sum()))",
        "v = kv.view('w'); kv.init('w', np.zeros(7)); print(float(v.sum()))",
        "v = kv.view('w'); kv.close(); print(float(v.sum()))",
        "kept = []; kv.set_updater(lambda k, m, s: kept.append(s)); kv.push('w', [one] * 3); kv.close(); "
        "print(float(kept[0].sum()))",
    ],
    ids=["view-after-delete", "view-after-reinit", "view-after-close", "updater-keeps-stored"],
)
def test_views_outlive_freed_memory_without_a_crash(code: str) -> None:
    result = run_script(
        f"""
        import numpy as np, kvcli
        kv = kvcli.create("device", num_devices=2)
        one = np.ones((300, 300), np.float32)
        kv.init("w", one)
        kv.push("w", [one] * 2)
        kv.push("w", [one] * 2)
        {code}
        """
    )
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-500:]}"  # was -11
    assert float(result.stdout) in (90000.0 * 2, 90000.0 * 3 + 90000.0 * 0)


def test_segments_of_a_killed_process_group_are_swept_at_the_next_start() -> None:
    code = """
        import json, time
        import numpy as np, kvcli
        kv = kvcli.create("device", num_devices=2)
        kv.init(0, np.zeros(1 << 18, np.float32))
        kv.push(0, [np.ones(1 << 18, np.float32)] * 3)
        print(json.dumps(kv.backend.segment_names()), flush=True)
        time.sleep(60)
        """
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        names = set(json.loads(child.stdout.readline()))
        os.killpg(child.pid, signal.SIGKILL)  # the store *and* its resource tracker die
        child.wait(timeout=10)
        deadline = time.monotonic() + 30
        while group_alive(child.pid):  # the devices too are gone
            assert time.monotonic() < deadline, group_alive(child.pid)
            time.sleep(0.02)
        assert names <= set(leftover_segments(child.pid))  # nobody was left to unlink them
        result = run_script("import kvcli; kvcli.create('device', num_devices=1).close()")
        assert result.returncode == 0, result.stderr
        assert leftover_segments(child.pid) == []
    finally:
        if child.poll() is None:
            child.kill()
        child.stdout.close()


def _small_shm_prefix(size: str) -> list[str]:
    """A command prefix that runs its command with a private /dev/shm of ``size``."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) to mount a small private /dev/shm")
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size={size} tmpfs /dev/shm"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a private tmpfs here: {probe.stderr.decode().strip()}")
    return ["unshare", "-m", "sh", "-c", f'mount -t tmpfs -o size={size} tmpfs /dev/shm && exec "$@"', "sh"]


def test_full_dev_shm_is_a_clear_error_not_a_bus_error() -> None:
    prefix = _small_shm_prefix("64m")
    code = """
        import numpy as np, kvcli
        from kvcli.errors import SharedMemoryError
        from kvcli.store.device.shm import leftover_segments
        import os
        kv = kvcli.create("device", num_devices=2)
        kv.init("w", np.zeros(8388608, np.float32))          # 32 MiB stored
        try:
            kv.push("w", [np.ones(8388608, np.float32)] * 4)  # + merged + 4 slots: 192 MiB
        except SharedMemoryError as error:
            print("refused:", error)
        print("value", float(kv.pull("w").max()))             # unchanged, store usable
        kv.push("w", np.ones(8388608, np.float32))            # a push that fits still works
        print("value", float(kv.pull("w").max()))
        kv.close()
        print("left", leftover_segments(os.getpid()))
        """
    result = subprocess.run(
        [*prefix, sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"exit {result.returncode} (135 is SIGBUS): {result.stderr[-500:]}"
    lines = result.stdout.splitlines()
    assert lines[0].startswith("refused: not enough shared memory for ")
    assert "MiB needed" in lines[0] and "--shm-size" in lines[0] and "'local' store" in lines[0]
    assert lines[1:] == ["value 0.0", "value 1.0", "left []"]


def test_full_dev_shm_through_the_cli(tmp_path) -> None:
    prefix = _small_shm_prefix("64m")
    kvcli_bin = os.path.join(os.path.dirname(sys.executable), "kvcli")
    env = {**os.environ, "KVCLI_HOME": str(tmp_path), "NO_COLOR": "1", "COLUMNS": "300"}
    device = ["--type", "device", "--num-devices", "2"]
    init = subprocess.run([kvcli_bin, *device, "init", "w", "zeros(8388608)"], capture_output=True, env=env)
    assert init.returncode == 0, init.stderr
    result = subprocess.run(
        [*prefix, kvcli_bin, *device, "push", "w", "ones(8388608)", "--devices", "4"],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert result.returncode == 1, f"exit {result.returncode}: {result.stderr[-500:]}"
    assert result.stderr.count("\n") == 1 and "not enough shared memory" in result.stderr
    pulled = subprocess.run([kvcli_bin, "pull", "w", "--json"], capture_output=True, text=True, env=env)
    assert pulled.returncode == 0 and set(json.loads(pulled.stdout)["value"]) == {0.0}  # nothing changed


def test_an_init_whose_memory_is_refused_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every new segment of an init is allocated before anything is replaced: when the
    second one is refused (a full /dev/shm), the first key keeps its value and shape and no
    segment is left behind (was: the first key was already replaced)."""
    import numpy as np

    import kvcli
    from kvcli.errors import SharedMemoryError
    from kvcli.store.device import store as device_store

    with kvcli.create("device", num_devices=2) as kv:
        kv.init("a", np.arange(4, dtype=np.float32))
        segments = set(kv.backend.segment_names())
        made = []
        real = device_store.SharedArray

        def refuse_the_second(shape, dtype):  # noqa: ANN001, ANN202
            if made:
                raise SharedMemoryError("not enough shared memory (test)", needed=20)
            made.append(real(shape, dtype))
            return made[-1]

        monkeypatch.setattr(device_store, "SharedArray", refuse_the_second)
        with pytest.raises(SharedMemoryError, match="test"):
            kv.init(["a", "b"], [np.ones((2, 3), np.float32), np.ones(5, np.float32)])
        assert kv.keys() == ["a"] and kv.info("a").shape == (4,)
        assert kv.pull("a").tolist() == [0, 1, 2, 3]
        assert set(kv.backend.segment_names()) == segments
        assert made[0].name not in leftover_segments()  # the segment allocated first was freed
