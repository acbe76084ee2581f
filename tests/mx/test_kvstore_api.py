"""MXNet 1.9.1's test_kvstore.py (dense parts) through ``kvcli.mx``, on ``local`` and
``device``, against the values recorded from real MXNet; plus the API Gluon relies on
(in-place pushpull, broadcast, type, is_capable, rank, num_workers, _barrier)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.errors import OutputError, ShapeMismatchError, StoreError, UnsupportedError
from kvcli.mx import nd

from .conftest import LOCAL_TYPES

SHAPE = (4, 4)
KEYS = [5, 7, 11]
STR_KEYS = ["b", "c", "d"]
DEVS = [mx.Context("cpu", i) for i in range(4)]
KEY_KINDS = {"int": (3, KEYS), "str": ("a", STR_KEYS)}


def values(x: Any) -> Any:
    """Nested lists of floats, as the reference records them."""
    if isinstance(x, list):
        return [values(v) for v in x]
    return x.asnumpy().tolist()


def init_kv(make_kv: Any, name: str, kind: str) -> Any:
    key, key_list = KEY_KINDS[kind]
    kv = make_kv(name)
    kv.init(key, nd.zeros(SHAPE))
    kv.init(key_list, [nd.zeros(SHAPE)] * len(key_list))
    return kv


@pytest.fixture(params=LOCAL_TYPES)
def name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.mark.parametrize("kind", KEY_KINDS)
def test_single_and_list_kv_pairs(make_kv, ref, name, kind) -> None:
    expected = ref["basic"][name]
    key, key_list = KEY_KINDS[kind]
    kv = init_kv(make_kv, name, kind)
    kv.push(key, nd.ones(SHAPE))
    val = nd.empty(SHAPE)
    kv.pull(key, out=val)
    assert values(val) == expected[f"single_kv_pair_{kind}"]

    kv = init_kv(make_kv, name, kind)
    kv.push(key_list, [nd.ones(SHAPE) * 4] * 3)
    vals = [nd.empty(SHAPE)] * 3
    kv.pull(key_list, out=vals)
    assert values(vals) == expected[f"list_kv_pair_{kind}"]

    kv = make_kv(name)
    kv.init(key, nd.ones(SHAPE) * 4)
    a = nd.zeros(SHAPE)
    kv.pull(key, out=a)
    assert values(a) == expected[f"init_{kind}"]


@pytest.mark.parametrize("kind", KEY_KINDS)
def test_aggregator_sums_devices(make_kv, ref, name, kind) -> None:
    key, key_list = KEY_KINDS[kind]
    kv = init_kv(make_kv, name, kind)
    kv.push(key, [nd.ones(SHAPE, d) for d in DEVS])
    outs = [nd.empty(SHAPE, d) for d in DEVS]
    kv.pull(key, out=outs)
    single = values(outs)
    kv.push(key_list, [[nd.ones(SHAPE, d) * 2.0 for d in DEVS]] * 3)
    outs = [[nd.empty(SHAPE, d) for d in DEVS]] * 3
    kv.pull(key_list, out=outs)
    assert {"single": single, "list": values(outs)} == ref["basic"][name][f"aggregator_{kind}"]


@pytest.mark.parametrize("kind", KEY_KINDS)
def test_updater_with_int_and_str_keys(make_kv, ref, name, kind) -> None:
    key, key_list = KEY_KINDS[kind]
    seen_keys = set()

    def updater(k: Any, recv: Any, local: Any) -> None:
        seen_keys.add(type(k))
        local += recv

    kv = init_kv(make_kv, name, kind)
    kv._set_updater(updater)
    kv.push(key, [nd.ones(SHAPE, d) for d in DEVS])
    outs = [nd.empty(SHAPE, d) for d in DEVS]
    kv.pull(key, out=outs)
    single = values(outs)
    for _ in range(4):
        kv.push(key_list, [[nd.ones(SHAPE, d) for d in DEVS]] * 3)
    outs = [[nd.empty(SHAPE, d) for d in DEVS]] * 3
    kv.pull(key_list, out=outs)
    assert {"single": single, "list": values(outs)} == ref["basic"][name][f"updater_{kind}"]
    # MXNet's updater gets an int key as int, a str key as bytes (a C string; recorded in
    # tests/data/mxnet_kv_key_lists.json)
    assert seen_keys == {int if kind == "int" else bytes}


def test_pull_after_device_push_and_fresh_init(make_kv, ref, name) -> None:
    kv = make_kv(name)
    a, b = nd.ones(SHAPE), nd.zeros(SHAPE)
    kv.init("1", nd.zeros(SHAPE))
    kv.push("1", [a, a, a, a])
    kv.pull("1", b)
    first = values(b)
    kv.init("2", nd.zeros(SHAPE))
    kv.pull("2", b)
    assert [first, values(b)] == ref["basic"][name]["pull"]


@pytest.mark.parametrize("kind", KEY_KINDS)
def test_the_other_key_kind_is_refused_and_changes_nothing(make_kv, ref, name, kind) -> None:
    recorded = ref["basic"][name][f"invalid_key_types_{kind}"]
    assert set(recorded.values()) == {"MXNetError"}  # MXNet refuses every one of them
    other, other_list = KEY_KINDS["str" if kind == "int" else "int"]
    kv = init_kv(make_kv, name, kind)
    dns = nd.ones(SHAPE) * 2
    calls = [
        (kv.init, other, dns), (kv.push, other, dns), (kv.pull, other, dns),
        (kv.init, other_list, [dns] * 3), (kv.push, other_list, [dns] * 3), (kv.pull, other_list, [dns] * 3),
    ]
    for call, key, value in calls:
        with pytest.raises(StoreError, match="mix int and str keys|not initialised"):
            call(key, value)
    assert sorted(map(str, kv.keys())) == sorted(map(str, [KEY_KINDS[kind][0], *KEY_KINDS[kind][1]]))
    assert (dns.asnumpy() == 2).all()


@pytest.mark.parametrize("created", ["local", "device", "local_allreduce_cpu", "local_allreduce_device",
                                     "local_update_cpu", "LOCAL"])
def test_type_rank_num_workers_is_capable(make_kv, ref, created) -> None:
    recorded = ref["api"]["types"][created]
    kv = make_kv(created)
    assert (kv.type, kv.rank, kv.num_workers) == (recorded["type"], recorded["rank"], recorded["num_workers"])
    assert kv.is_capable(mx.kv.KVStoreBase.OPTIMIZER) is recorded["optimizer"] is True
    assert recorded["is_capable_unknown"] == "ValueError"
    with pytest.raises(ValueError, match="unknown capability 'sparse'"):
        kv.is_capable("sparse")
    assert isinstance(kv, mx.kv.KVStoreBase)
    kv._barrier()  # a single process: returns at once


@pytest.mark.parametrize("name_", ["nccl", "horovod", "byteps"])
def test_unavailable_types_say_what_to_use(name_) -> None:
    with pytest.raises(UnsupportedError, match=rf"store type '{name_}' is not available in kvcli: .*use 'd"):
        mx.kv.create(name_)


def test_bad_type_names(ref) -> None:
    assert ref["api"]["create_not_str"] == "TypeError"
    with pytest.raises(TypeError, match="name must be a string"):
        mx.kv.create(3)
    # MXNet 1.9.1 silently makes a 'local' store of an unknown name; kvcli refuses it
    assert ref["api"]["create_bogus"] is None
    with pytest.raises(StoreError, match="unknown store type 'bogus_store': use one of local, device"):
        mx.kv.create("bogus_store")


def test_nd_array_of_numpy_is_float32_so_a_float32_push_fits(make_kv, ref, name) -> None:
    assert str(nd.array(np.ones((2, 2))).dtype.__name__) == ref["api"]["nd_array_dtype"] == "float32"
    assert nd.array(np.ones(2), dtype="float64").dtype == np.float64
    kv = make_kv(name)
    kv.init(3, nd.array(np.ones((2, 2))))
    kv.push(3, nd.ones((2, 2)) * 3)
    out = nd.zeros((2, 2))
    kv.pull(3, out=out)
    assert values(out) == ref["api"]["init_from_numpy_then_push"]


def test_pushpull_in_place_with_an_updater(make_kv, ref, name) -> None:
    kv = make_kv(name)
    kv.init(4, nd.ones(SHAPE))
    kv._set_updater(lambda k, recv, local: local.__iadd__(recv * 2))
    value = nd.ones(SHAPE) * 3
    assert kv.pushpull(4, value) is None  # as MXNet's: the result is in value
    assert values(value) == ref["api"][f"pushpull_in_place_updater_{name}"]


def test_pushpull_in_place_needs_writable_values(make_kv) -> None:
    kv = make_kv("local")
    kv.init(1, np.zeros(3))
    with pytest.raises(OutputError, match=r"pushpull of key 1 without out= writes the result back .* not a list"):
        kv.pushpull(1, [1.0, 2.0, 3.0])
    out = nd.ones((3,), dtype="float64")
    kv.pull(1, out=out)
    assert (out.asnumpy() == 0).all()  # nothing was pushed


def test_broadcast_errors_change_nothing(make_kv, ref, name) -> None:
    assert ref["api"][f"broadcast_wrong_out_shape_{name}"] == "MXNetError"
    kv = make_kv(name)
    with pytest.raises(ShapeMismatchError, match=r"broadcast \(output 0\) of key 21: shape \(2, 2\)"):
        kv.broadcast(21, nd.ones(SHAPE), nd.empty((2, 2)))
    assert not kv.has(21)
    with pytest.raises(StoreError, match="broadcast takes one value per key"):
        kv.broadcast(22, [nd.ones(SHAPE), nd.ones(SHAPE)], nd.empty(SHAPE))
    assert kv.keys() == []


def test_init_with_a_list_of_one_value_is_init_with_the_value(make_kv, ref, name) -> None:
    kv = make_kv(name)
    kv.init(30, [nd.ones(SHAPE) * 7])  # MXNet's own dist test inits keys this way
    out = nd.zeros(SHAPE)
    kv.pull(30, out=out)
    assert out.asnumpy().tolist() == ref["api"][f"init_one_value_list_{name}"]
    assert ref["api"][f"init_two_value_list_{name}"] == "MXNetError"  # "duplicate init of key"
    with pytest.raises(StoreError, match="init of key 31 got a list of 2 values: init takes one value per key"):
        kv.init(31, [nd.ones(SHAPE), nd.ones(SHAPE) * 2])
    assert not kv.has(31)


def test_broadcast_again_reinitialises(make_kv, ref, name) -> None:
    # MXNet's native store refuses a second broadcast of a key ("duplicate init"); kvcli
    # re-initialises, as its init does (docs/kvstore.md: Differences from MXNet)
    assert ref["api"][f"broadcast_twice_{name}"] == "MXNetError"
    kv = make_kv(name)
    kv.broadcast(20, nd.ones(SHAPE), nd.empty(SHAPE))
    out = nd.empty(SHAPE)
    kv.broadcast(20, nd.ones(SHAPE) * 2, out)
    assert (out.asnumpy() == 2).all()


def test_wrong_shape_push_is_refused(make_kv, ref, name) -> None:
    # MXNet 1.9.1 accepts it without an updater: the stored value takes the pushed shape
    # and a pull into the original shape fails. kvcli refuses the push and keeps the value.
    assert ref["api"][f"wrong_shape_push_{name}"] is None
    assert ref["api"][f"pull_original_shape_after_wrong_push_{name}"] == "MXNetError"
    kv = make_kv(name)
    kv.init(9, nd.zeros(SHAPE))
    with pytest.raises(ShapeMismatchError, match=r"push of key 9: shape \(2, 2\) does not match the stored \(4, 4\)"):
        kv.push(9, nd.ones((2, 2)))
    out = nd.ones(SHAPE)
    kv.pull(9, out=out)
    assert (out.asnumpy() == 0).all()
