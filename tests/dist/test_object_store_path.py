"""The object-store path (servers on other nodes; here forced with KVCLI_DIST_NO_SHM):
pushes answered later, and step results handed back with a push's answer."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

import shm_workers  # noqa: E402  (tests/dist/shm_workers.py: importable by the Ray workers too)

import kvcli  # noqa: E402
from crashed_server import store_with_a_crashed_server  # noqa: E402  (tests/dist/crashed_server.py)
from kvcli.errors import DistributedError  # noqa: E402
from kvcli.store.ray.launch import launch  # noqa: E402
from kvcli.store.ray.server import INLINE_BYTES  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.timeout(120)]


@pytest.fixture
def no_shm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVCLI_DIST_NO_SHM", "1")


def test_a_push_returns_before_its_answer_and_its_error_comes_at_the_next_call(ray_cluster, no_shm):
    with kvcli.create("dist_sync") as kv:
        assert not kv.backend._pools  # every server counts as on another node
        kv.set_updater("scale-add:0.5")
        kv.init(50, np.zeros(2, np.int64))
        kv.push(50, np.ones(2, np.int64))  # handed over; the server's updater fails later
        with pytest.raises(Exception, match="scale-add"):
            kv.pull(50)
        with pytest.raises(DistributedError, match="updater failed"):
            kv.pull(50)  # the step stays failed for every later pull
        kv.push(50, np.ones(2, np.int64))
        with pytest.raises(Exception, match="scale-add"):
            kv.barrier()  # any next call says so, not only a pull of the key


def test_a_failed_last_push_is_raised_by_close(ray_cluster, no_shm):
    kv = kvcli.create("dist_sync")
    kv.set_updater("scale-add:0.5")
    kv.init(50, np.zeros(2, np.int64))
    kv.push(50, np.ones(2, np.int64))
    with pytest.raises(Exception, match="scale-add"):
        kv.close()
    assert kv.backend._group.owned and not kv.backend._pools  # closed all the same: a second close is quiet
    kv.close()


def test_pulls_after_pushes_take_the_result_the_push_brought_back(ray_cluster, no_shm):
    big = INLINE_BYTES // 4 + 1000  # float32 elements: travels by reference
    with kvcli.create("dist_sync", num_servers=2, bigarray_bound=big) as kv:
        kv.set_updater(shm_workers.accumulate)
        keys = ["big", "small", "split"]
        shapes = [(big,), (10,), (2 * big + 10,)]  # "split" is cut by rows over both servers
        kv.init(keys, [np.zeros(s, np.float32) for s in shapes])
        asked = shm_workers.pull_spy(kv)
        outs = [np.empty(s, np.float32) for s in shapes]
        for step in range(1, 5):
            kv.push(keys, [np.full(s, step, np.float32) for s in shapes])
            kv.pull(keys, out=outs)
            total = step * (step + 1) / 2
            assert [float(o.min()) for o in outs] == [total] * 3
            assert [float(o.max()) for o in outs] == [total] * 3
        # only the first step's pull asks (one call per server): later pushes bring the result
        assert len(asked) == 2
        kv.push(keys, [np.full(s, 1, np.float32) for s in shapes])
        kv.push(keys, [np.full(s, 1, np.float32) for s in shapes])  # no pull between: asked again
        assert [float(v[0]) for v in kv.pull(keys)] == [12.0] * 3
        assert len(asked) == 4


def test_a_lone_push_comes_back_as_the_pushed_object_and_lands_in_shared_memory(ray_cluster, no_shm):
    """Without an updater, a step of one push by reference assigns it: pullers get that very
    object (no copy put: where the pusher runs on another node, the result is already
    there), and the server's shared-memory copy, which workers on its node read, holds the
    same numbers. With an updater, each step's new value is put once."""
    import ray

    from kvcli.store.ray.shm import Mappings

    big = INLINE_BYTES // 4 + 1000  # float32 elements: travels by reference
    with kvcli.create("dist_sync") as kv:
        kv.init("w", np.zeros(big, np.float32))
        out = np.empty(big, np.float32)
        for step in range(1, 4):
            value = np.arange(big, dtype=np.float32) * step
            kv.push("w", value)
            kv.pull("w", out=out)
            np.testing.assert_array_equal(out, value)
        assert kv.backend.server_stats()[0]["w"]["puts"] == 0
        where = ray.get(kv.backend._servers[0].pull_many.remote(0, [("w", 3)], 5.0, True))[0]
        mapped = Mappings()
        np.testing.assert_array_equal(mapped.view(where), np.arange(big, dtype=np.float32) * 3)
        mapped.drop([where.name])

        kv.set_updater(shm_workers.accumulate)
        kv.init("u", np.zeros(big, np.float32))
        for step in range(1, 4):
            kv.push("u", np.full(big, step, np.float32))
            kv.pull("u", out=out)
            assert float(out.min()) == float(out.max()) == step * (step + 1) / 2
        assert kv.backend.server_stats()[0]["u"]["puts"] == 3


def test_two_workers_sum_exactly_through_the_object_store(ray_cluster):
    results = launch(shm_workers.lockstep, 2, args=(4,), env={"KVCLI_DIST_NO_SHM": "1"})
    for result in results:
        assert result["sums"] == [[3.0 * step + 2 * k for k in range(30)] for step in range(1, 5)]
        assert result["segments"] == []  # no shared memory at all on this path


def test_a_restarted_server_is_reported_by_the_call_after_the_push(ray_cluster, no_shm):
    """A push that reaches a server Ray restarted (empty) fails; the store's next call says
    so, and a collective re-init then restores service as on the shared-memory path."""
    ray = ray_cluster
    with store_with_a_crashed_server(ray) as (kv, server):

        def restarted() -> bool:
            try:
                return bool(kv.backend._call(server.ping.remote(), "ping")["restarted"])
            except DistributedError:  # still restarting
                return False

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not restarted():
            time.sleep(0.2)
        assert restarted()
        kv.push("w", np.ones(4))  # handed over; the restarted server refuses it
        with pytest.raises(DistributedError, match="restarted by Ray"):
            kv.pull("w")
        kv.init("w", np.ones(4))  # re-init: rank 0 also re-sends the 'sum' updater
        kv.push("w", np.full(4, 2.0))
        assert (kv.pull("w") == 3).all()
