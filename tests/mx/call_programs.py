"""KVStore, optimizer and ``nd.array`` calls whose outcome MXNet code depends on: what each
returns, or which classes its error is (so which ``except`` catches it). Run on real MXNet
1.9.1 by ``tests/data/make_mxnet_call_outcomes_reference.py`` and on ``kvcli.mx`` by
``tests/mx/test_call_outcomes.py``; kvcli's error must be an instance of every class MXNet's
is (it may be more: a kvcli error is also an ``MXNetError``). kvcli's code, nothing of
MXNet's copied.
"""

from __future__ import annotations

import os
from typing import Any, Callable

#: The classes an outcome lists, when the error is an instance of them (as ``except`` sees it).
KINDS = ("MXNetError", "ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError", "AttributeError",
         "AssertionError", "OSError")


def _classes(mx: Any) -> dict[str, type]:
    builtins = {k.__name__: k for k in (ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError,
                                        AssertionError, OSError)}
    return {"MXNetError": mx.base.MXNetError, **builtins}


def programs(mx: Any, folder: str) -> dict[str, Callable[[], Any]]:
    """Name -> a call (on fresh stores: each call's outcome does not depend on the others)."""
    shape = (2, 2)

    def store(kind: str = "local", optimizer: bool = False) -> Any:
        kv = mx.kv.create(kind)
        kv.init(3, mx.nd.ones(shape))
        if optimizer:
            kv.set_optimizer(mx.optimizer.SGD(momentum=0.9))
        return kv

    def row_sparse_store() -> Any:
        kv = mx.kv.create("local")
        kv.init(4, mx.nd.ones(shape).tostype("row_sparse"))
        return kv

    def out() -> Any:
        return mx.nd.zeros(shape)

    def rows() -> Any:
        return mx.nd.sparse.zeros("row_sparse", shape)

    ids = lambda: mx.nd.array([0], dtype="int64")  # noqa: E731 - a table of one-liners
    return {
        "pull returns": lambda: store().pull(3, out=out()),
        "pull of a list returns": lambda: store().pull([3], out=[out()]),
        "push returns": lambda: store().push(3, mx.nd.ones(shape)),
        "init returns": lambda: store().init(5, mx.nd.ones(shape)),
        "pushpull returns": lambda: store().pushpull(3, mx.nd.ones(shape), out=out()),
        "pushpull in place returns": lambda: store().pushpull(3, mx.nd.ones(shape)),
        "pushpull of devices returns": lambda: store("device").pushpull(3, [mx.nd.ones(shape)] * 2, out=[out()] * 3),
        "broadcast returns": lambda: store().broadcast(6, mx.nd.ones(shape), out=out()),
        "row_sparse_pull returns": lambda: row_sparse_store().row_sparse_pull(4, out=rows(), row_ids=ids()),
        "pull without out": lambda: store().pull(3),
        "pull of a list without out": lambda: store().pull([3]),
        "row_sparse_pull without out": lambda: row_sparse_store().row_sparse_pull(4, row_ids=ids()),
        "row_sparse_pull without row_ids": lambda: row_sparse_store().row_sparse_pull(4, out=rows()),
        "init of lists of other lengths": lambda: store().init([4, 5], [mx.nd.ones(shape)]),
        "push of lists of other lengths": lambda: store().push([3], [mx.nd.ones(shape)] * 2),
        "pull into lists of other lengths": lambda: store().pull([3], out=[out(), out()]),
        "init of a float key": lambda: store().init(1.5, mx.nd.ones(shape)),
        "init of keys of two kinds": lambda: mx.kv.create("local").init([1, "a"], [mx.nd.ones(shape)] * 2),
        "save states without optimizer": lambda: store().save_optimizer_states(os.path.join(folder, "s")),
        "load states without optimizer": lambda: store().load_optimizer_states(os.path.join(folder, "none")),
        "load states without optimizer, device": lambda: store("device").load_optimizer_states(
            os.path.join(folder, "none")),
        "create with an unknown keyword": lambda: mx.optimizer.create("sgd", learning_rat=0.1),
        "create adam with an unknown keyword": lambda: mx.optimizer.create("adam", beta_1=0.9),
        "constructor with an unknown keyword": lambda: mx.optimizer.SGD(learning_rat=0.1),
        "create of an unknown optimizer": lambda: mx.optimizer.create("sgdx"),
        "array of strings": lambda: mx.nd.array(["a", "b"]),
        "array of rows of two lengths": lambda: mx.nd.array([[1, 2], [3]]),
        "array of number strings": lambda: mx.nd.array(["1", "2.5"]),
    }


def outcome(mx: Any, call: Callable[[], Any]) -> dict[str, Any]:
    """``{"returned": None | a value's class name | its list}`` or ``{"caught": [classes]}``."""
    try:
        value = call()
    except Exception as error:  # the outcome being recorded
        return {"caught": [name for name, kind in _classes(mx).items() if isinstance(error, kind)]}
    if hasattr(value, "asnumpy"):
        return {"returned": type(value).__name__, "values": value.asnumpy().tolist()}
    return {"returned": None if value is None else type(value).__name__}


def run_all(mx: Any, folder: str) -> dict[str, dict[str, Any]]:
    return {name: outcome(mx, call) for name, call in programs(mx, folder).items()}
