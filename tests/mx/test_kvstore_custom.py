"""MXNet 1.9.1's test_kvstore_custom.py through ``kvcli.mx``: broadcast and pushpull on
kvcli stores and on MXNet's ``'teststore'``, and user stores made with
``KVStoreBase.register``; expected values recorded from real MXNet."""

from __future__ import annotations

from typing import Any

import pytest

import kvcli.mx as mx
from kvcli.mx import nd

from .conftest import LOCAL_TYPES
from .test_kvstore_api import DEVS, KEYS, SHAPE, STR_KEYS, values

#: MXNet's test runs these on 'device'; kvcli's 'local' must give the same numbers.
STORES = (*LOCAL_TYPES, "teststore")


def recorded_name(name: str) -> str:
    return "teststore" if name == "teststore" else "device"


@pytest.mark.parametrize("name", STORES)
@pytest.mark.parametrize("key", [3, "a"])
def test_broadcast_single_kv_pair(make_kv, ref, name, key) -> None:
    kv = make_kv(name)
    ones, out = nd.ones(SHAPE), nd.empty(SHAPE)
    kv.broadcast(key, ones, out)
    out_list = [nd.empty(SHAPE)] * 3
    kv.broadcast(key + key, ones, out_list)
    assert [values(out), values(out_list)] == ref["custom"][f"broadcast_single_{recorded_name(name)}_{key}"]


@pytest.mark.parametrize("name", LOCAL_TYPES)
def test_broadcast_list_kv_pair(make_kv, ref, name) -> None:
    kv = make_kv(name)
    kv.broadcast(KEYS, [nd.ones(SHAPE)] * 3, [nd.empty(SHAPE)] * 3)
    out_list = [[nd.empty(SHAPE)] * 2 for _ in range(3)]
    kv.broadcast([k + k for k in KEYS], [nd.ones(SHAPE)] * 3, out_list)
    assert values(out_list) == ref["custom"]["broadcast_list_device"]
    str_kv = make_kv(name)
    outs = [nd.empty(SHAPE)] * 3
    str_kv.broadcast(STR_KEYS, [nd.ones(SHAPE)] * 3, outs)
    assert all((o.asnumpy() == 1).all() for o in outs)


@pytest.mark.parametrize("name", STORES)
@pytest.mark.parametrize("key", [3, "a"])
def test_pushpull_out_and_in_place(make_kv, ref, name, key) -> None:
    expected = ref["custom"][f"pushpull_{recorded_name(name)}_{key}"]
    kv = make_kv(name)
    kv.broadcast(key, nd.zeros(SHAPE), out=nd.empty(SHAPE))
    vals = [nd.ones(SHAPE, d) for d in DEVS]
    outs = [nd.empty(SHAPE, d) for d in DEVS]
    kv.pushpull(key, vals, out=outs)
    assert values(outs) == expected["out"]
    kv.pushpull(key, vals)  # in place: every device's value becomes the sum
    assert values(vals) == expected["in_place"]
    if name == "teststore":
        return
    key_list = KEYS if key == 3 else STR_KEYS
    kv.broadcast(key_list, [nd.zeros(SHAPE)] * 3, out=[nd.empty(SHAPE)] * 3)
    vals = [[nd.ones(SHAPE, d) * 2.0 for d in DEVS]] * 3
    outs = [[nd.empty(SHAPE, d) for d in DEVS]] * 3
    kv.pushpull(key_list, vals, out=outs)
    assert values(outs) == expected["list_out"]
    kv.pushpull(key_list, vals)
    assert values(vals) == expected["list_in_place"]


def test_teststore(ref) -> None:
    expected = ref["custom"]["custom_store"]
    kv = mx.kv.create("teststore")
    assert type(kv).__name__ == "TestStore" and isinstance(kv, mx.kv.KVStoreBase)
    out = nd.empty((1,))
    kv.broadcast(1, nd.ones((1,)), out=out)
    assert values(out) == expected["broadcast"]
    assert type(kv).is_capable("optimizer") is expected["is_capable_optimizer"] is False
    with pytest.raises(ValueError, match="Unknown capability: sparse"):
        type(kv).is_capable("sparse")
    arr_list = [nd.empty((1,))] * 2
    kv.pushpull(1, [nd.ones((1,))] * 2, out=arr_list)
    assert values(arr_list) == expected["pushpull_out"]
    kv.pushpull(1, arr_list)
    assert values(arr_list) == expected["pushpull_in_place"]
    assert (kv.type, kv.rank, kv.num_workers) == (expected["type"], expected["rank"], expected["num_workers"])
    for method, args in (("set_optimizer", (mx.optimizer.create("sgd"),)),
                         ("save_optimizer_states", ("test",)), ("load_optimizer_states", ("test",))):
        assert expected[method] == "NotImplementedError"
        with pytest.raises(NotImplementedError):
            getattr(kv, method)(*args)


def test_register_a_user_store(ref) -> None:
    expected = ref["custom"]["register"]
    registry = mx.kv.KVStoreBase.kv_registry
    saved = dict(registry)
    try:
        @mx.kv.KVStoreBase.register
        class MyStore(mx.kv.KVStoreBase):
            def __init__(self) -> None:
                self.data: dict[Any, Any] = {}

            @property
            def type(self) -> str:
                return "mystore"

            def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
                self.data[key] = value.copy()
                for o in out if isinstance(out, list) else [out]:
                    o[:] = value

        made = mx.kv.create("MyStore")
        assert (type(made).__name__, made.type) == (expected["created_class"], expected["type"])
        out = nd.zeros((2,))
        made.broadcast("w", nd.ones((2,)) * 7, out)
        assert out.asnumpy().tolist() == [7, 7]
        with pytest.raises(NotImplementedError):  # what the user did not write
            made.pushpull("w", out)
        with pytest.warns(UserWarning, match="overriding existing kvstore"):
            @mx.kv.KVStoreBase.register
            class mystore(mx.kv.KVStoreBase):  # noqa: N801 - the same name on purpose
                pass
        assert expected["override_warned"] is True
        assert type(mx.kv.create("mystore")).__name__ == "mystore"
        with pytest.raises(TypeError, match="takes a class"):
            mx.kv.KVStoreBase.register(made)
    finally:
        registry.clear()
        registry.update(saved)
    for method in ("broadcast", "is_capable"):
        assert expected[f"base_{method}"] == "NotImplementedError"
    with pytest.raises(NotImplementedError):
        mx.kv.KVStoreBase().broadcast(1, None, None)
    with pytest.raises(NotImplementedError):
        mx.kv.KVStoreBase().is_capable("optimizer")
    with pytest.raises(Exception, match="unknown store type 'mystore'"):
        mx.kv.create("mystore")  # gone with the registration
