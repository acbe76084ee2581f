"""``mx.kv`` / ``mx.kvstore``: MXNet 1.9.1's KVStore API over kvcli's stores.

* :func:`create` looks up :attr:`KVStoreBase.kv_registry` first (user-written stores
  registered with :meth:`KVStoreBase.register`, and MXNet's ``'teststore'``), then kvcli's
  store registry (:data:`kvcli.store.REGISTRY`: ``local``, ``device``, ``dist_sync``, ...).
* :class:`KVStore` is a kvcli store that speaks NDArray and MXNet's Python: updaters receive
  NDArrays (so code that calls ``.asnumpy()`` on them works), ``kv._updater.states`` holds
  NDArrays, ``pull`` / ``pushpull`` / ``broadcast`` / ``row_sparse_pull`` write into the
  arrays given and return None, and what MXNet's Python refuses with an ``assert`` (a pull
  without ``out``, lists of keys and values of other lengths, keys that are not int or str,
  saving or loading optimizer states without an optimizer) is an ``AssertionError`` here too.
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any, Callable

import numpy as np

from kvcli.errors import ArityAssertionError, KeyTypeAssertionError, OptimizerStateAssertionError
from kvcli.mx.ndarray import NDArray
from kvcli.mx.ndarray.sparse import wrap as _as_nd
from kvcli.arrays.core import Key, is_key, is_value_list, normalise_key
from kvcli.mx.optimizer import Optimizer, Updater
from kvcli.store.api import KVStore as _CoreStore


class KVStoreBase:
    """MXNet's abstract KVStore interface; subclass it and :meth:`register` the class to
    make ``mx.kv.create('classname')`` return an instance of it."""

    #: The capability every optimizer-running store has.
    OPTIMIZER = "optimizer"
    #: Registered store classes by lower-case class name (MXNet's registry).
    kv_registry: dict[str, type] = {}

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Broadcast ``value`` (rank 0's) to every rank and store it in ``out``."""
        raise NotImplementedError()

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Push ``value`` and pull the result into ``out`` (into ``value`` when None)."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer: Any) -> None:
        """Run ``optimizer`` on every push."""
        raise NotImplementedError()

    def is_capable(self, capability: str) -> bool:
        """Whether the store supports ``capability`` (e.g. :attr:`OPTIMIZER`)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the optimizer state to ``fname``."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname: str) -> None:
        """Read the optimizer state from ``fname``."""
        raise NotImplementedError()

    @property
    def type(self) -> str:
        """The store's type name."""
        raise NotImplementedError()

    @property
    def rank(self) -> int:
        """This worker's rank in ``[0, num_workers)``."""
        raise NotImplementedError()

    @property
    def num_workers(self) -> int:
        """The number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass: builtins.type) -> builtins.type:  # builtins: ``type`` is a property here
        """Register ``klass`` under its lower-case class name (a decorator); a name already
        taken is replaced, with a warning, as in MXNet."""
        if not isinstance(klass, type):
            raise TypeError(f"KVStoreBase.register takes a class, not {type(klass).__name__}")
        name = klass.__name__.lower()
        old = KVStoreBase.kv_registry.get(name)
        if old is not None:
            warnings.warn(
                f"WARNING: New kvstore {klass.__module__}.{klass.__name__} is overriding existing "
                f"kvstore {old.__module__}.{old.__name__}",
                stacklevel=2,
            )
        KVStoreBase.kv_registry[name] = klass
        return klass


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@KVStoreBase.register
class TestStore(KVStoreBase):
    """MXNet's ``'teststore'``: no storage; ``broadcast`` copies, ``pushpull`` sums a list."""

    __test__ = False  # not a pytest test class
    rank = 0  # one process: rank 0 of 1 worker
    num_workers = 1

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        for o in _as_list(out):
            o[:] = value

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        if isinstance(value, NDArray):  # one value: copied to out; nothing to do in place
            for o in _as_list(out) if out is not None else []:
                o[:] = value
            return
        reduced = value[0].copy()
        for v in value[1:]:
            reduced += v
        for o in value if out is None else _as_list(out):
            o[:] = reduced

    @staticmethod
    def is_capable(capability: str) -> bool:
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError(f"Unknown capability: {capability}")

    @property
    def type(self) -> str:
        return "teststore"


class KVStore(KVStoreBase):
    """An MXNet-flavoured view of a :class:`kvcli.store.api.KVStore`; every method of the
    kvcli store is available, with MXNet's names."""

    def __init__(self, store: _CoreStore) -> None:
        self._store = store

    @property
    def store(self) -> _CoreStore:
        """The underlying kvcli store."""
        return self._store

    @property
    def type(self) -> str:
        """The name the store was created with, e.g. ``'local_allreduce_cpu'``."""
        return self._store.type

    @property
    def rank(self) -> int:
        return self._store.rank

    @property
    def num_workers(self) -> int:
        return self._store.num_workers

    def set_updater(self, updater: Callable[[Key | bytes, Any, Any], None] | str | None) -> None:
        """Set the updater; a callable receives ``(key, input, stored)`` as NDArrays, and a
        str key as bytes (MXNet hands it over as a C string; its own ``Updater`` decodes it)."""
        if callable(updater) and not hasattr(updater, "spec"):
            self._store.set_updater(_NDArrayUpdater(updater))
            return
        self._store.set_updater(updater)

    _set_updater = set_updater

    @property
    def _updater(self) -> Any:
        """MXNet's ``kv._updater``: what a push runs. After ``set_optimizer(opt)``, MXNet's
        ``Updater`` (``.optimizer``, ``.states``: each key's state as NDArrays, views of the
        arrays the optimizer updates); after ``_set_updater(fn)``, ``fn``; None without an
        updater, and on a distributed store, whose servers run it (as in MXNet)."""
        updater = self._store.updater
        if updater is None or self._store.backend.remote:
            return None
        if isinstance(updater, _NDArrayUpdater):
            return updater.given
        if not isinstance(updater, Optimizer):
            return updater  # one of kvcli's spec updaters ('sum', 'scale-add:2')
        per_index = updater.kv_updater  # the optimizer's per-key states
        if not isinstance(per_index, Updater):  # from now on the store runs MXNet's Updater
            shown = Updater(updater)
            shown.take_over(per_index)
            updater.kv_updater = per_index = shown
        return per_index

    def set_optimizer(self, optimizer: Any) -> None:
        self._store.set_optimizer(optimizer)

    def is_capable(self, capability: str) -> bool:
        return self._store.is_capable(capability)

    def init(self, key: Any, value: Any) -> None:
        _assert_keys("init", key, value)
        self._store.init(key, value)

    def push(self, key: Any, value: Any, priority: int = 0) -> None:
        """Push as MXNet does: a key listed twice is pushed once with all its values (summed,
        one update), and keys are updated in MXNet's order (:func:`_grouped`)."""
        _assert_keys("push", key, value)
        key, value = _grouped(key, value, self._store.keys)
        self._store.push(key, value, priority)

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        _assert_keys("broadcast", key, value)
        _assert_keys("broadcast", key, out)
        self._store.broadcast(key, value, out, priority)

    def pull(self, key: Any, out: Any = None, priority: int = 0, ignore_sparse: bool = True) -> None:
        """Copy each key's value into ``out`` (MXNet's pull: ``out`` is required, None is returned)."""
        _assert_out("pull", key, out)
        self._store.pull(key, out=out, priority=priority, ignore_sparse=ignore_sparse)

    def row_sparse_pull(self, key: Any, out: Any = None, priority: int = 0, row_ids: Any = None) -> None:
        """Copy the rows ``row_ids`` of each key into the row-sparse ``out`` (both required, as in MXNet)."""
        _assert_out("row_sparse_pull", key, out)
        if row_ids is None:
            raise ArityAssertionError(f"row_sparse_pull of key {key!r} needs row_ids= (the rows to pull)")
        self._store.row_sparse_pull(key, out=out, priority=priority, row_ids=row_ids)

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Push ``value`` and pull the result into ``out`` (into ``value`` without one); None is
        returned. A key listed twice is pushed once, keys in MXNet's order (:func:`_grouped`),
        the outputs grouped alike."""
        _assert_keys("pushpull", key, value)
        if out is not None:
            _assert_keys("pushpull", key, out)
        grouped_key, grouped_value = _grouped(key, value, self._store.keys)
        if grouped_key is not key and out is not None:
            out = _grouped(key, out, self._store.keys)[1]
        self._store.pushpull(grouped_key, grouped_value, out=out, priority=priority)

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        self._assert_optimizer("save")
        self._store.save_optimizer_states(fname, dump_optimizer)

    def load_optimizer_states(self, fname: str) -> None:
        self._assert_optimizer("load")
        self._store.load_optimizer_states(fname)

    def _assert_optimizer(self, verb: str) -> None:
        """MXNet asserts that the store has an updater before it reads or writes the file."""
        if self._store.updater is None:
            raise OptimizerStateAssertionError(
                f"cannot {verb} optimizer states: this store has no optimizer; call kv.set_optimizer(...) first")

    def _barrier(self) -> None:
        self._store.barrier()

    def __getattr__(self, name: str) -> Any:
        if name == "_store":  # not set yet (e.g. during unpickling): no recursion
            raise AttributeError(name)
        return getattr(self._store, name)

    def __enter__(self) -> "KVStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self._store.close()

    def __repr__(self) -> str:
        return f"<mx.kv.KVStore type={self._store.type!r}>"


def _grouped(key: Any, value: Any, initialised: Callable[[], list[Key]]) -> tuple[Any, Any]:
    """``key`` and ``value`` as MXNet's ``GroupKVPairsPush`` passes them on: the values of a key
    listed more than once joined into one list (one push: summed, one update), and the keys in
    MXNet's order (int keys ascending; str keys in the order they were first initialised, the
    order of the ids MXNet gives them). Anything else -- one key, lists of different lengths, a
    key not initialised -- comes back as it was, for the store to handle or word the error;
    ``key`` itself comes back when nothing changes."""
    if not isinstance(key, (list, tuple)) or not isinstance(value, (list, tuple)) or len(key) != len(value):
        return key, value
    if len(key) < 2 or not all(is_key(k) for k in key):
        return key, value
    groups: dict[Key, list[Any]] = {}
    for k, v in zip(key, value):
        groups.setdefault(normalise_key(k), []).append(v)
    kinds = {type(k) for k in groups}
    if kinds == {int}:
        order = sorted(groups)
    elif kinds == {str}:
        rank = {k: i for i, k in enumerate(initialised())}
        if any(k not in rank for k in groups):
            return key, value
        order = sorted(groups, key=rank.__getitem__)
    else:
        return key, value
    if len(order) == len(key) and order == [normalise_key(k) for k in key]:
        return key, value
    joined = [vals[0] if len(vals) == 1 else [item for v in vals for item in (v if is_value_list(v) else [v])]
              for vals in (groups[k] for k in order)]
    return order, joined



class _NDArrayUpdater:
    """A user's updater (``kv._set_updater(fn)``), called as MXNet calls it: with NDArrays
    (a row-sparse value stays row-sparse)."""

    def __init__(self, given: Callable[[Key | bytes, Any, Any], None]) -> None:
        self.given = given

    def __call__(self, key: Key, merged: np.ndarray, stored: np.ndarray) -> None:
        given = key.encode() if isinstance(key, str) else key  # MXNet hands a str key over as a C string
        self.given(given, _as_nd(merged), _as_nd(stored))


def _assert_keys(verb: str, key: Any, values: Any) -> None:
    """The ``assert``s of MXNet's ``_ctype_key_value``, made before a call reaches its
    engine: keys are int or str (one kind in a list), a list of keys takes a list of values
    (or of outputs) of its length."""
    if not isinstance(key, (list, tuple)):
        _assert_key(key)
        return
    for k in key:
        _assert_key(k)
    if isinstance(values, (list, tuple)) and len(values) != len(key):
        raise ArityAssertionError(
            f"{verb} got {len(key)} keys {list(key)!r} but {len(values)} values: give one value (or one list of "
            "per-device values) per key")
    if len({isinstance(k, str) for k in key}) > 1:
        raise KeyTypeAssertionError(f"{verb} got keys {list(key)!r} of two kinds: use int keys or str keys")


def _assert_key(key: Any) -> None:
    if not isinstance(key, (int, np.integer, str)):
        raise KeyTypeAssertionError(f"key {key!r} is a {type(key).__name__}: keys are int or str (e.g. 3 or 'weight')")


def _assert_out(verb: str, key: Any, out: Any) -> None:
    if out is None:
        raise ArityAssertionError(
            f"{verb} of key {key!r} needs out=: the NDArray (or list of them) to write into, as MXNet's {verb}")
    _assert_keys(verb, key, out)


def create(name: str = "local", **options: Any) -> Any:
    """``mx.kv.create(name)``: a registered store class (see :meth:`KVStoreBase.register`,
    ``'teststore'``), else a kvcli store: ``local``, ``device``, ``local_allreduce_cpu``,
    ``local_allreduce_device``, ``dist_sync``, ``dist_device_sync``, ``dist_async``, ...
    (``options`` go to the kvcli store, e.g. ``num_devices=4``)."""
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    klass = KVStoreBase.kv_registry.get(name.lower())
    if klass is not None:
        return klass(**options)
    import kvcli

    return KVStore(kvcli.create(name, **options))


__all__ = ["KVStore", "KVStoreBase", "TestStore", "create"]
