"""The MXNet KVStore scenarios on ``dist_sync`` (few: each starts Ray actors): one worker
against the values recorded from MXNet, and two launched workers for broadcast, in-place
pushpull and compressed pushes (each worker's residual, summed on the server)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

import kvcli.mx as mx  # noqa: E402
from kvcli.mx import nd  # noqa: E402

from . import dist_workers  # noqa: E402
from .test_compression import replay  # noqa: E402
from .test_kvstore_api import DEVS, KEYS, SHAPE, values  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def ray_cluster():
    """A local 2-CPU Ray (or the one another test module started)."""
    from kvcli.store.ray.group import start_local_ray

    import ray

    ray.cloudpickle.register_pickle_by_value(dist_workers)  # the workers need no sys.path
    started = not ray.is_initialized()
    if started:
        start_local_ray(ray, num_cpus=2)
    yield ray
    if started:
        ray.shutdown()


def test_one_worker_runs_the_mxnet_scenarios(ray_cluster, ref) -> None:
    basic = ref["basic"]["local"]
    kv = mx.kv.create("dist_sync")
    try:
        assert (kv.type, kv.rank, kv.num_workers, kv.is_capable("optimizer")) == ("dist_sync", 0, 1, True)
        kv.init(3, nd.zeros(SHAPE))
        kv.init(KEYS, [nd.zeros(SHAPE)] * 3)
        kv.push(3, [nd.ones(SHAPE, d) for d in DEVS])
        outs = [nd.empty(SHAPE, d) for d in DEVS]
        kv.pull(3, out=outs)
        single = values(outs)
        kv.push(KEYS, [[nd.ones(SHAPE, d) * 2.0 for d in DEVS]] * 3)
        outs = [[nd.empty(SHAPE, d) for d in DEVS]] * 3
        kv.pull(KEYS, out=outs)
        assert {"single": single, "list": values(outs)} == basic["aggregator_int"]

        kv.push(KEYS, [nd.ones(SHAPE) * 4] * 3)  # list kv pair
        vals = [nd.empty(SHAPE)] * 3
        kv.pull(KEYS, out=vals)
        assert values(vals) == basic["list_kv_pair_int"]

        kv.init(3, nd.zeros(SHAPE))  # updater: runs on the server, sees int keys
        kv.init(KEYS, [nd.zeros(SHAPE)] * 3)
        kv._set_updater(dist_workers.add_updater)  # by value: servers import nothing
        kv.push(3, [nd.ones(SHAPE, d) for d in DEVS])
        outs = [nd.empty(SHAPE, d) for d in DEVS]
        kv.pull(3, out=outs)
        single = values(outs)
        for _ in range(4):
            kv.push(KEYS, [[nd.ones(SHAPE, d) for d in DEVS]] * 3)
        outs = [[nd.empty(SHAPE, d) for d in DEVS]] * 3
        kv.pull(KEYS, out=outs)
        assert {"single": single, "list": values(outs)} == basic["updater_int"]
        kv._set_updater(None)

        custom = ref["custom"]["pushpull_device_3"]
        kv.broadcast(3, nd.zeros(SHAPE), out=nd.empty(SHAPE))
        vals = [nd.ones(SHAPE, d) for d in DEVS]
        kv.pushpull(3, vals)
        assert values(vals) == custom["in_place"]
        kv._barrier()

        # one worker, one device: the worker's residual is MXNet's device residual
        for key in kv.keys():  # the run uses a str key
            kv.delete(key)
        run = ref["compression"]["single_push"]
        pulled = replay(kv, run)
        assert all(got.tobytes() == np.array(want, np.float32).tobytes() for got, want in zip(pulled, run["pulled"]))
    finally:
        kv.close()


@pytest.mark.parametrize("run_name", ["compressed", "compressed_device_sync"])
def test_two_workers_compress_like_mxnet_dist_bit_for_bit(ray_cluster, ref, run_name) -> None:
    """Each worker compresses its device-summed push with its own residual; the server
    decodes with the threshold as MXNet sends it (C++ to_string: 0.1234567 -> 0.123457)."""
    from kvcli.store.ray.launch import launch

    recorded = ref["dist"][run_name]
    kind = recorded[0]["type"]
    results = launch(dist_workers.compressed_run, 2, args=(kind, recorded))
    for rank, (got, want) in enumerate(zip(results, recorded)):
        assert (got["type"], got["rank"]) == (want["type"], rank)
        assert got["pulled"] == [np.array(p, np.float32).tobytes() for p in want["pulled"]]


def test_two_workers_aggregate_broadcast_and_pushpull_like_mxnet_dist(ray_cluster, ref) -> None:
    from kvcli.store.ray.launch import launch

    recorded = ref["dist"]["plain"]
    results = launch(dist_workers.plain_run, 2, args=("dist_sync", 4))
    assert results == recorded
