"""The engine takes updater objects and parses no spec string; kvcli.create (the public
entry) gives the stores it makes the optimizer layer's one parser (issue 24)."""

from __future__ import annotations

import numpy as np
import pytest

import kvcli
import kvcli.mx as mx
from kvcli.errors import UpdaterError
from kvcli.store.api import KVStore
from kvcli.store.local import LocalBackend
from kvcli.updaters import Sum, parse_updater


def test_a_store_made_without_the_public_entry_takes_updater_objects_only() -> None:
    with KVStore(LocalBackend(), "local") as kv:
        kv.init("w", np.ones(2, np.float32))
        with pytest.raises(UpdaterError, match=r"parse it with kvcli.updaters.parse_updater\(spec\)"):
            kv.set_updater("sum")
        with pytest.raises(UpdaterError, match="kvcli.create"):
            kv.set_optimizer("sgd:lr=0.5")
        assert kv.updater is None  # nothing changed
        kv.set_updater(Sum())
        kv.push("w", np.full(2, 2.0, np.float32))
        kv.set_optimizer(parse_updater("sgd:lr=0.5"))
        kv.push("w", np.full(2, 2.0, np.float32))
        np.testing.assert_array_equal(kv.pull("w"), [2.0, 2.0])  # 1 + 2, then 3 - 0.5 * 2


def test_the_public_entries_still_take_spec_strings() -> None:
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(2, np.float32))
        kv.set_updater("scale-add:2")
        kv.push("w", np.ones(2, np.float32))
        assert kv.updater_spec == "scale-add:2"
        kv.set_optimizer("sgd:lr=0.5")
        kv.push("w", np.ones(2, np.float32))
        np.testing.assert_array_equal(kv.pull("w"), [2.5, 2.5])
    kv = mx.kv.create("local")
    kv.init(0, mx.nd.ones((2,)))
    kv.set_updater("sum")
    kv.push(0, mx.nd.ones((2,)))
    out = mx.nd.zeros((2,))
    kv.pull(0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), [2.0, 2.0])


def test_set_optimizer_refuses_what_is_not_an_optimizer() -> None:
    with kvcli.create("local") as kv:
        with pytest.raises(UpdaterError, match="set_optimizer takes an optimizer"):
            kv.set_optimizer(lambda key, merged, stored: None)
