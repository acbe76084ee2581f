"""Device processes and shared memory: started once, always released — on close, on an
exception, on garbage collection, when a device dies, and when the store's process dies."""

from __future__ import annotations

import gc
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import kvcli
from kvcli.errors import DeviceError
from kvcli.store.device.shm import leftover_segments

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs Linux /proc to inspect processes")

BIG = (300, 300)  # large enough that several devices share the sum


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def wait_until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def start_devices(kv) -> list[int]:
    kv.init(0, np.zeros(BIG, np.float32))
    kv.push(0, [np.ones(BIG, np.float32)] * 4)
    pids = kv.backend.device_pids
    assert len(pids) == kv.backend.num_devices and all(alive(p) for p in pids)
    return pids


def test_devices_start_lazily_once_and_stop_on_close() -> None:
    kv = kvcli.create("device", num_devices=3)
    kv.init(0, np.zeros(BIG, np.float32))
    kv.push(0, np.ones(BIG, np.float32))
    assert kv.backend.device_pids == []  # a single-device push needs no process
    pids = start_devices(kv)
    kv.push(0, [np.ones(BIG, np.float32)] * 2)
    assert kv.backend.device_pids == pids  # started once
    segments = kv.backend.segment_names()
    assert segments and set(segments) <= set(leftover_segments(os.getpid()))
    kv.close()
    assert not any(alive(p) for p in pids)
    assert leftover_segments(os.getpid()) == []


def test_exception_inside_with_block_still_releases_everything() -> None:
    with pytest.raises(RuntimeError, match="boom"):
        with kvcli.create("device", num_devices=2) as kv:
            pids = start_devices(kv)
            raise RuntimeError("boom")
    assert not any(alive(p) for p in pids)
    assert leftover_segments(os.getpid()) == []


def test_a_forgotten_store_is_released_when_collected() -> None:
    kv = kvcli.create("device", num_devices=2)
    pids = start_devices(kv)
    del kv
    gc.collect()
    assert wait_until(lambda: not any(alive(p) for p in pids))
    assert leftover_segments(os.getpid()) == []


def test_deleting_a_key_frees_its_memory() -> None:
    with kvcli.create("device", num_devices=2) as kv:
        start_devices(kv)
        kv.init(1, np.zeros(10))
        names = set(kv.backend.segment_names())
        kv.delete(0)
        remaining = set(leftover_segments(os.getpid()))
        assert remaining == set(kv.backend.segment_names()) and remaining < names
        kv.init(1, np.zeros((4, 4)))  # a new shape replaces the key's memory
        assert set(kv.backend.segment_names()).isdisjoint(remaining)


def test_a_device_that_dies_is_restarted_and_no_push_is_half_applied() -> None:
    kv = kvcli.create("device", num_devices=2, timeout=10)
    pids = start_devices(kv)
    kv.push(0, [np.full(BIG, 2, np.float32)] * 2)  # stored: 4
    os.kill(pids[1], signal.SIGKILL)
    assert wait_until(lambda: not alive(pids[1]))
    try:
        # the device's other threads may still be exiting: it is either seen dead and
        # restarted first, or found dead during the push, which then changes nothing
        kv.push(0, [np.ones(BIG, np.float32)] * 3)
        expected = 3.0
    except DeviceError as error:
        assert re.fullmatch(r"device 1 \(pid \d+\) died \(exit code -9\); it will be restarted on the next push", str(error))
        np.testing.assert_array_equal(kv.pull(0), np.full(BIG, 4, np.float32))
        kv.push(0, [np.ones(BIG, np.float32)] * 3)
        expected = 3.0
    np.testing.assert_array_equal(kv.pull(0), np.full(BIG, expected, np.float32))
    new_pids = kv.backend.device_pids
    assert new_pids[0] == pids[0] and new_pids[1] != pids[1] and all(alive(p) for p in new_pids)
    kv.close()
    assert not any(alive(p) for p in new_pids)
    assert leftover_segments(os.getpid()) == []


def test_killing_the_store_process_leaves_no_device_and_no_memory(tmp_path) -> None:
    script = textwrap.dedent(
        """
        import json, sys, time
        import numpy as np
        import kvcli
        kv = kvcli.create("device", num_devices=2)
        kv.init(0, np.zeros((300, 300), np.float32))
        kv.push(0, [np.ones((300, 300), np.float32)] * 3)
        print(json.dumps({"pids": kv.backend.device_pids, "segments": kv.backend.segment_names()}), flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        state = json.loads(child.stdout.readline())
        assert all(alive(p) for p in state["pids"])
        assert set(state["segments"]) <= set(leftover_segments(child.pid))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        assert wait_until(lambda: not any(alive(p) for p in state["pids"]))
        # Python's resource tracker unlinks what the killed process created
        assert wait_until(lambda: leftover_segments(child.pid) == [])
    finally:
        if child.poll() is None:
            child.kill()
        child.stdout.close()


def test_device_arrays_are_read_in_place_and_freed_when_collected() -> None:
    from kvcli.mx import cpu, nd
    from kvcli.store.device.shm import device_descriptor, live_device_arrays

    shape = (600, 600)  # 1.4 MB of float32: big enough to live in device memory
    with kvcli.create("device", num_devices=2) as kv:
        kv.init(0, np.zeros(shape, np.float32))
        values = [nd.ones(shape, ctx=cpu(i)) for i in range(3)]
        names = {device_descriptor(v._kvcli_buffer())[0] for v in values}
        assert names <= live_device_arrays()
        kv.push(0, values)
        assert len(kv.backend.segment_names()) == 2  # stored + merged: no slot was needed for a copy
        np.testing.assert_array_equal(kv.pull(0), np.full(shape, 3, np.float32))
        del values
        gc.collect()
        assert names.isdisjoint(live_device_arrays())
        assert names.isdisjoint(leftover_segments(os.getpid()))
        kv.push(0, [np.ones(shape, np.float32)] * 2)  # devices unmap the freed arrays
        np.testing.assert_array_equal(kv.pull(0), np.full(shape, 2, np.float32))
        assert len(kv.backend.segment_names()) == 4  # plain numpy values are copied into two slots
