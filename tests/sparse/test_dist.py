"""Row-sparse keys on dist_sync: MXNet's sparse cases on a store split over two servers, only
the requested rows travel on row_sparse_pull, and workers' row-sparse pushes are summed by
row in rank order."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'kvcli[dist]' to run the distributed tests")

import kvcli  # noqa: E402
import kvcli.mx as mx  # noqa: E402
from kvcli.store.ray.group import start_local_ray  # noqa: E402
from kvcli.store.ray.launch import launch  # noqa: E402
from kvcli.arrays.summation import sum_into  # noqa: E402
from kvcli.arrays.sparse import RowSparse  # noqa: E402

from . import test_kvstore_mxnet as cases  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.timeout(180)]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ray_session() -> Iterator[Any]:
    """The Ray cluster of the test session (tests/dist starts one), or a local one."""
    started = not ray.is_initialized()
    if started:
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        start_local_ray(ray, num_cpus=2, runtime_env={"env_vars": {"PYTHONPATH": path}})
    # the launched worker function below lives in this test module: ship it by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def dist_store(ray_session: Any) -> Iterator[Any]:
    """One dist_sync store; a (4, 4) value has 16 >= 8 elements, so it is split by rows."""
    with kvcli.create("dist_sync", num_servers=2, bigarray_bound=8) as store:
        yield store


@pytest.fixture
def store_type() -> str:
    return "local"  # the reference numbers these cases compare with


@pytest.fixture
def make_kv(dist_store: Any) -> Any:
    def make() -> Any:
        for key in dist_store.keys():
            dist_store.delete(key)
        dist_store.set_updater(None)
        return mx.kv.KVStore(dist_store)

    return make


# MXNet's cases, replayed on dist_sync (the updater-call recording needs a local updater)
test_push_row_sparse_to_dense_keys = cases.test_push_row_sparse_to_dense_keys
test_aggregate_row_sparse_from_four_devices = cases.test_aggregate_row_sparse_from_four_devices
test_row_sparse_pull_one_and_four_outputs = cases.test_row_sparse_pull_one_and_four_outputs
test_sparse_aggregator = cases.test_sparse_aggregator
test_invalid_pull = cases.test_invalid_pull
test_edges = cases.test_edges
test_wrong_shapes_and_row_ids_are_refused = cases.test_wrong_shapes_and_row_ids_are_refused
test_row_wise_sum_matches_mxnet_and_dense_sum = cases.test_row_wise_sum_matches_mxnet_and_dense_sum


def add_updater(key: Any, recv: Any, local: Any) -> None:
    local += recv


def test_updater_on_servers_gets_row_sparse_values(make_kv: Any, reference: dict[str, Any]) -> None:
    expected = reference["stores"]["local"]["updater_row_sparse_key"]
    kv = cases.init_kv(make_kv(), "row_sparse")
    kv._set_updater(add_updater)
    g1 = mx.nd.sparse.row_sparse_array((np.ones((1, 4), np.float32), [0]), shape=(4, 4))
    g2 = mx.nd.sparse.row_sparse_array((np.array([[2] * 4, [3] * 4], np.float32), [0, 2]), shape=(4, 4))
    kv.push(3, [g1, g2])
    kv.push(3, [g1, mx.nd.ones((4, 4))])
    kv.push(3, mx.nd.ones((4, 4)))
    for _ in range(4):
        kv.push(cases.KEYS, [[mx.nd.ones((4, 4)).tostype("row_sparse") for _ in range(4)]] * 3)
    pulled = mx.nd.sparse.zeros("row_sparse", (4, 4))
    kv.pull(3, out=pulled, ignore_sparse=False)
    np.testing.assert_array_equal(pulled.asnumpy(), expected["key3"])
    listed = [mx.nd.sparse.zeros("row_sparse", (4, 4)) for _ in cases.KEYS]
    kv.pull(cases.KEYS, out=listed, ignore_sparse=False)
    np.testing.assert_array_equal([o.asnumpy() for o in listed], expected["keys"])


def test_only_the_requested_rows_travel(dist_store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in dist_store.keys():
        dist_store.delete(key)
    table = np.arange(40 * 3, dtype=np.float32).reshape(40, 3)
    dist_store.init("emb", RowSparse.all_rows(table))
    assert [len(s["emb"]["applied"]) for s in dist_store.backend.server_stats()] == [1, 1]  # split in two
    server = dist_store.backend._servers[dist_store.backend._layouts["emb"][0][0]]
    part = ray.get(server.pull_rows.remote("emb", 0, 0, 5.0, np.array([2, 5], np.int64)))
    assert part.indices.tolist() == [2, 5] and part.data.shape == (2, 3)  # two rows, not 20

    def no_whole_fetch(keys: Any) -> Any:
        raise AssertionError(f"row_sparse_pull fetched whole values of {keys}")

    monkeypatch.setattr(dist_store.backend, "_fetch", no_whole_fetch)
    rows = dist_store.row_sparse_pull("emb", row_ids=np.array([39, 0, 21, 21]))
    assert rows.indices.tolist() == [0, 21, 39]
    np.testing.assert_array_equal(rows.data, table[[0, 21, 39]])


def sparse_pushes(rank: int, step: int) -> list[RowSparse]:
    """Two devices' row-sparse gradients of ``rank`` at ``step`` (regenerated by the test)."""
    rng = np.random.default_rng(100 * rank + step)
    grads = []
    for _ in range(2):
        rows = np.sort(rng.choice(12, rng.integers(1, 8), replace=False))
        grads.append(RowSparse(rng.standard_normal((len(rows), 3)).astype(np.float32), rows, (12, 3)))
    return grads


def row_sparse_worker(steps: int) -> list[np.ndarray]:
    """Each step: push two devices' row-sparse gradients; row_sparse_pull every row."""
    with kvcli.create("dist_sync") as kv:
        kv.init("emb", RowSparse.zeros((12, 3)))
        seen = []
        for step in range(steps):
            kv.push("emb", sparse_pushes(kv.rank, step))
            seen.append(kv.row_sparse_pull("emb", row_ids=np.arange(12)).to_dense())
        kv.barrier()
        return seen


def test_workers_row_sparse_pushes_are_summed_by_row_in_rank_order(ray_session: Any) -> None:
    steps, workers = 2, 2
    results = launch(row_sparse_worker, workers, args=(steps,), num_servers=2)
    for step in range(steps):
        per_worker = [sum_into(np.empty((12, 3), np.float32), [g.to_dense() for g in sparse_pushes(r, step)])
                      for r in range(workers)]
        expected = sum_into(np.empty((12, 3), np.float32), per_worker)
        for seen in results:
            assert seen[step].tobytes() == expected.tobytes()


def mxnet_test_optimizer_worker(steps: int) -> list[list[float]]:
    """MXNet's own dist test pattern: float16 row-sparse and dense keys, initialised with a
    list of one value, MXNet's Test optimizer (rescale_grad 2) with multi_precision on the
    servers; each rank pushes rank + 1 on row (rank % 2)."""
    kv = mx.kv.create("dist_sync")
    kv.init("rsp16", [mx.nd.ones((2, 3), dtype="float16").tostype("row_sparse")])
    kv.init("dense16", [mx.nd.ones((2, 3), dtype="float16")])
    kv.set_optimizer(mx.optimizer.create("test", rescale_grad=2, multi_precision=True))
    seen = []
    for _ in range(steps):
        grad = mx.nd.zeros((2, 3), dtype="float16")
        grad[kv.rank % 2] = kv.rank + 1
        kv.push("rsp16", grad.tostype("row_sparse"))
        kv.push("dense16", grad)
        out = mx.nd.sparse.zeros("row_sparse", (2, 3), dtype="float16")
        kv.row_sparse_pull("rsp16", out=out, row_ids=mx.nd.array([0, 1]))
        dense = mx.nd.zeros((2, 3), dtype="float16")
        kv.pull("dense16", out=dense)
        assert out.dtype == np.float16 and dense.dtype == np.float16
        seen.append([out.asnumpy()[:, 0].tolist(), dense.asnumpy()[:, 0].tolist()])
    kv._barrier()
    return seen


def test_the_test_optimizer_updates_float16_row_sparse_keys_with_multi_precision(ray_session: Any) -> None:
    results = launch(mxnet_test_optimizer_worker, 2, args=(2,))
    # rank 0 pushes 1 on row 0, rank 1 pushes 2 on row 1; w += 2 * sum per step, from ones
    expected = [[[1.0 + 2 * step, 1.0 + 4 * step]] * 2 for step in (1, 2)]
    for seen in results:
        assert seen == expected
