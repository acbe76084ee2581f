"""A dist store used by one process (no launcher): the KVStore contract, sharding, restarts."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

import kvcli  # noqa: E402
from crashed_server import store_with_a_crashed_server  # noqa: E402  (tests/dist/crashed_server.py)
from kvcli.errors import (  # noqa: E402
    ArityError,
    DistributedError,
    StoreError,
    UnknownKeyError,
)
from kvcli.store.ray.store import layout_of  # noqa: E402
from kvcli.arrays.sparse import RowSparse  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def kv(ray_cluster):
    """One dist_sync store with two servers, shared by the contract tests of this module."""
    with kvcli.create("dist_sync", num_servers=2, bigarray_bound=50) as store:
        yield store


def test_seed_numbers(kv):
    ones = np.ones((2, 3))
    kv.set_updater(None)
    kv.init(3, ones * 2)
    assert (kv.pull(3) == 2).all()
    kv.push(3, ones * 8)
    assert (kv.pull(3) == 8).all()
    kv.init(3, np.zeros((2, 3)))
    kv.push(3, [ones, ones, ones, ones])
    assert (kv.pull(3) == 4).all()
    kv.set_updater("scale-add:2")
    kv.push(3, ones)
    outs = [np.empty((2, 3)) for _ in range(4)]
    kv.pull(3, out=outs)
    assert all((o == 6).all() for o in outs)
    kv.init([5, 7, 9], [ones, ones, ones])
    kv.push([5, 7, 9], [ones, ones, ones])
    assert all((v == 3).all() for v in kv.pull([5, 7, 9]))
    kv.init([10, 11, 12], [ones * 0.5] * 3)
    kv.push([10, 11, 12], [[ones, ones]] * 3)
    assert all((v == 4.5).all() for v in kv.pull([10, 11, 12]))
    assert (kv.rank, kv.num_workers, kv.type) == (0, 1, "dist_sync")
    kv.barrier()


def test_errors_match_local(kv, ray_cluster):
    local = kvcli.create("local")
    for store in (local, kv):
        store.set_updater(None)
        store.init([3, 5, 7, 9, 10, 11, 12], [np.zeros((2, 3))] * 7)
    for action in (
        lambda s: s.push(99, np.ones((2, 3))),
        lambda s: s.pull(99),
        lambda s: s.push(3, np.ones((3, 2))),
        lambda s: s.push([3, 5], [np.ones((2, 3))]),
        lambda s: s.pull(3, out=np.empty((2, 3), np.float32)),
    ):
        with pytest.raises(Exception) as local_error:
            action(local)
        with pytest.raises(Exception) as dist_error:
            action(kv)
        assert type(dist_error.value) is type(local_error.value)
        assert str(dist_error.value) == str(local_error.value)
    assert isinstance(local_error.value, StoreError)
    with pytest.raises(UnknownKeyError):
        kv.push(99, np.ones((2, 3)))
    with pytest.raises(ArityError):
        kv.init([1, 1], [np.zeros(1), np.zeros(1)])


def test_big_arrays_are_split_by_rows(kv):
    home = layout_of("big", (10, 8), 2, 50)[0][0]
    assert layout_of("big", (10, 8), 2, 50) == [(home, slice(0, 5)), (1 - home, slice(5, 10))]
    assert len(layout_of("big", (10, 8), 3, 50)) == 3
    assert layout_of(4, (3, 2), 2, 50) == [(0, None)]  # small: whole, on its home server
    kv.set_updater("sum")
    value = np.arange(80, dtype=np.float64).reshape(10, 8)
    kv.init(40, value)
    kv.push(40, [value, value])
    assert np.array_equal(kv.pull(40), value * 3)
    held = [stats.get(40) for stats in kv.backend.server_stats()]
    assert sorted(h["shape"] for h in held) == [(5, 8), (5, 8)]
    kv.init(43, RowSparse.all_rows(value))  # a row-sparse key is split by rows the same way
    kv.push(43, [RowSparse(value[[1, 7]], [1, 7], value.shape)] * 2)
    rows = kv.row_sparse_pull(43, row_ids=np.array([7, 1, 0]))
    assert rows.indices.tolist() == [0, 1, 7]
    assert np.array_equal(rows.data, [value[0], value[1] * 3, value[7] * 3])


def test_optimizer_runs_on_servers_and_state_is_gathered(kv, tmp_path):
    local = kvcli.create("local")
    for store in (local, kv):
        store.set_optimizer("adam:lr=0.01")
        store.init([41, 42], [np.ones((12, 5), np.float32), np.ones(3, np.float32)])
    rng = np.random.default_rng(0)
    for _ in range(4):
        grads = [rng.standard_normal((12, 5)).astype(np.float32), rng.standard_normal(3).astype(np.float32)]
        local.push([41, 42], grads)
        kv.push([41, 42], grads)
    for key in (41, 42):
        assert np.array_equal(kv.pull(key), local.pull(key))
    local.save_optimizer_states(tmp_path / "local.npz")
    kv.save_optimizer_states(tmp_path / "dist.npz")
    with np.load(tmp_path / "local.npz") as a, np.load(tmp_path / "dist.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for name in a.files:
            assert np.array_equal(a[name], b[name]), name
    # Loading ships the state back to the servers (split over both for key 41).
    kv.load_optimizer_states(tmp_path / "local.npz")
    grad = [np.full((12, 5), 0.5, np.float32), np.full(3, -0.5, np.float32)]
    local.push([41, 42], grad)
    kv.push([41, 42], grad)
    assert np.array_equal(kv.pull(41), local.pull(41))


def test_updater_error_reaches_the_pusher(kv):
    kv.set_updater("scale-add:0.5")
    kv.init(50, np.zeros(2, np.int64))
    with pytest.raises(Exception, match="scale-add"):
        kv.push(50, np.ones(2, np.int64))
    with pytest.raises(DistributedError, match="updater failed"):
        kv.pull(50)


def test_options_are_checked(ray_cluster):
    with pytest.raises(StoreError, match="no option 'devices'"):
        kvcli.create("dist_sync", devices=2)
    with pytest.raises(DistributedError, match="needs a group id"):
        kvcli.create("dist_sync", num_workers=2)
    with pytest.raises(StoreError, match="timeout"):
        kvcli.create("dist_async", timeout=0)


def test_async_single_worker_applies_each_push(ray_cluster):
    with kvcli.create("dist_async") as kv:
        kv.set_updater("sum")
        kv.init("a", np.zeros(3))
        for _ in range(5):
            kv.push("a", np.ones(3))
        assert (kv.pull("a") == 5).all()
        assert kv.type == "dist_async"


def test_restarted_server_refuses_until_init_again(ray_cluster):
    """Documented behaviour: a server Ray restarts comes back empty; the store says so,
    and a collective re-init (plus the updater rank 0 re-sends) restores service."""
    ray = ray_cluster
    with store_with_a_crashed_server(ray) as (kv, server):
        errors = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                kv.pull("w")
            except DistributedError as error:
                errors.append(str(error))
                if "was restarted by Ray" in errors[-1]:
                    break
            time.sleep(0.2)
        assert errors and "restarted by Ray and lost its values" in errors[-1]
        assert "call init(...) for the key again" in errors[-1]
        with pytest.raises(DistributedError, match="restarted by Ray"):
            kv.push("w", np.ones(4))
        kv.init("w", np.ones(4))  # re-init: rank 0 also re-sends the 'sum' updater
        kv.push("w", np.full(4, 2.0))
        assert (kv.pull("w") == 3).all()
        assert ray.get(server.ping.remote())["restarted"]


def test_store_closes_its_servers(ray_cluster):
    kv = kvcli.create("dist_sync")
    servers = kv.backend._group.servers
    kv.close()
    kv.close()
    with pytest.raises(Exception):
        ray_cluster.get(servers[0].ping.remote(), timeout=10)
    with pytest.raises(StoreError, match="closed"):
        kv.pull(1)


@pytest.mark.parametrize("name", ["dist_device_sync", "dist_sync_device"])
def test_mxnet_device_sync_names_are_dist_sync_and_keep_their_type_name(ray_cluster, name):
    from kvcli import mx

    kv = mx.kv.create(name)
    try:
        assert (kv.type, kv.rank, kv.num_workers) == (name, 0, 1)  # MXNet's kv.type is the name given
        kv.init(3, mx.nd.zeros((2, 2)))
        kv.push(3, [mx.nd.ones((2, 2)), mx.nd.ones((2, 2)) * 2])  # two devices: summed on the worker
        out = mx.nd.zeros((2, 2))
        kv.pull(3, out=out)
        assert out.asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    finally:
        kv.store.close()


def test_stopping_a_kept_group_frees_its_servers_shared_memory(ray_cluster):
    """stop_group (the kept-group reaper, reset, delete, cluster down) must let the servers
    unlink their shared memory before it kills them, as a store's close does."""
    from kvcli.store.ray.group import keep_group, stop_group
    from kvcli.store.device.shm import leftover_segments

    kept = keep_group("kept-test-frees-memory", 2, "sync", 30.0)
    pids = []
    for server in kept.servers:
        ray_cluster.get(server.init.remote("w", np.zeros(100, np.float32), "sync"))
        pids.append(ray_cluster.get(server.pid.remote()))
    assert all(leftover_segments(pid) for pid in pids)  # each server holds an arena
    assert stop_group("kept-test-frees-memory")
    assert [leftover_segments(pid) for pid in pids] == [[], []]
    assert not stop_group("kept-test-frees-memory")  # nothing left to stop
