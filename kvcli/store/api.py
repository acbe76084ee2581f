"""The KVStore: MXNet's KVStore API and every check, over a :class:`~kvcli.store.backend.Backend`.

The store normalises keys and values, validates all of an operation before anything
changes, runs the updater and holds it to its contract, applies MXNet's row-sparse rules
(:class:`~kvcli.store.rowsparse.RowSparseRules`) and 2-bit gradient compression
(:class:`~kvcli.store.compression.GradientCompression`), and pulls into one or many outputs.
A backend only says where values live and how one key's per-device values are summed, so
``local``, ``device`` and the distributed types cannot drift apart. :func:`kvcli.create`
builds a store from the registry (:data:`kvcli.store.REGISTRY`); ``KVStore(backend, type)``
composes one directly.

Values may be numpy arrays, anything ``numpy.asarray`` accepts, or objects with an
``asnumpy()`` method whose ``_kvcli_buffer()`` returns the writable numpy array behind them
(the ``kvcli.mx.ndarray`` shim does this), so ``pull(out=nd_array)`` writes in place.
"""

from __future__ import annotations

import builtins
import threading
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np

from kvcli.arrays.core import (
    ArrayInfo,
    Key,
    as_numpy,
    is_value_list,
    is_writable_array,
    normalise_key,
    one_value_per_key,
    writable_buffer,
)
from kvcli.arrays.sparse import DEFAULT, ROW_SPARSE, RowSparse, as_row_sparse, merge
from kvcli.errors import (
    ArityError,
    KeyTypeError,
    OptimizerStateError,
    OutputError,
    StoreClosedError,
    UnknownKeyError,
    UnsupportedError,
    UpdaterError,
)
from kvcli.store.backend import Backend, UpdaterFn, Value
from kvcli.store.checks import check_array
from kvcli.store.interrupts import deferred_interrupts
from kvcli.store.rowsparse import RowSparseRules

if TYPE_CHECKING:  # imported on first use: a store without compression never loads the coder
    from kvcli.store.compression import GradientCompression


class KVStore:
    """A store of arrays by key, shared by devices (MXNet's KVStore contract).

    ``init`` a key with an array; ``push`` one array (or a list of per-device arrays, summed
    first); the updater ``(key, merged, stored)`` decides how a push changes the stored value
    (default: assign); ``pull`` copies the value out into one array or a list. Every operation
    also takes a list of keys with a list of values. Bad input raises a
    :class:`kvcli.errors.StoreError` subclass and changes nothing.

    Args:
        backend: where the values live (:class:`~kvcli.store.backend.Backend`); the store
            closes it in :meth:`close`.
        type: the type name MXNet code reads back (:attr:`type`), e.g. ``"local"``.
        parse_updater: how a spec string given to :meth:`set_updater` / :meth:`set_optimizer`
            becomes an updater. The store parses nothing itself: :func:`kvcli.create` passes
            the optimizer layer's one parser (:func:`kvcli.updaters.parse_updater`); without
            one the store takes updater objects only.
        compression: whether :meth:`set_gradient_compression` applies (MXNet: the device and
            distributed types; the registry's ``StoreType.compression``).
    """

    #: The capability :meth:`is_capable` knows (MXNet's ``KVStoreBase.OPTIMIZER``).
    OPTIMIZER = "optimizer"

    def __init__(
        self,
        backend: Backend,
        type: str,  # noqa: A002 - MXNet's name
        *,
        parse_updater: Callable[[str], Any] | None = None,
        compression: bool = False,
    ) -> None:
        #: The type name given to :func:`kvcli.create`.
        self.type = type
        self._backend = backend
        self._parse_updater = parse_updater
        self._compression_applies = compression
        self._info: dict[Key, ArrayInfo] = {}
        self._key_kind: builtins.type | None = None
        self._updater: UpdaterFn | None = None
        self._lock = threading.RLock()
        self._closed = False
        self._rows = RowSparseRules()
        self._compression: GradientCompression | None = None

    @property
    def backend(self) -> Backend:
        """Where the values live (device pids, Ray servers, ...: see its class)."""
        return self._backend

    @property
    def rank(self) -> int:
        """This worker's rank among :attr:`num_workers` (0 for a single-process store)."""
        return self._backend.rank

    @property
    def num_workers(self) -> int:
        """How many workers push to this store (1 for a single-process store)."""
        return self._backend.num_workers

    # ------------------------------------------------------------------ values
    def init(self, key: Key | Sequence[Key], value: Any) -> None:
        """Initialise one key, or a list of keys with a list of values.

        Unlike MXNet 1.9.1, which refuses, re-initialising an existing key resets it (its
        optimizer state too); :meth:`has` tells whether a key exists. In a distributed
        store ``init`` is collective: every worker calls it; rank 0's value is stored.
        """
        self._set_values(key, value, reset=True)

    def load(self, key: Key | Sequence[Key], value: Any) -> None:
        """Give keys values kept elsewhere (a session's files), as :meth:`init` does, but
        keep their optimizer state and compression residuals: loading is not a new start."""
        self._set_values(key, value, reset=False)

    def _set_values(self, key: Key | Sequence[Key], value: Any, reset: bool) -> None:
        with self._lock:
            self._check_open()
            pairs = self._pair(key, value, "init")
            pairs = one_value_per_key(pairs, "init", "push is the one that sums per-device values")
            values: list[tuple[Key, Value]] = []
            for k, v in pairs:
                sparse = as_row_sparse(v)
                values.append((k, sparse.copy() if sparse is not None else np.array(as_numpy(v, k), copy=True, order="C")))
            self._backend.write(values, reset)
            for k, array in values:
                self._rows.forget(k)
                self._info[k] = ArrayInfo(array.shape, array.dtype, ROW_SPARSE if isinstance(array, RowSparse) else DEFAULT)
                if reset:
                    self._on_reset(k)
            if self._key_kind is None and pairs:
                self._key_kind = type(pairs[0][0])

    def push(self, key: Key | Sequence[Key], value: Any, priority: int = 0) -> None:
        """Push one array or a list of per-device arrays (summed) to each key.

        With no updater the stored value becomes the sum; with one, ``updater(key, sum,
        stored)`` changes ``stored`` in place, once per key, in the order of the keys.
        """
        del priority  # MXNet's scheduling hint; operations here run in call order
        with self._lock:
            self._check_open()
            plan = [(k, self._device_values(k, v, "push")) for k, v in self._pair(key, value, "push")]
            compression = self._compression
            residuals = None
            if compression is not None:
                for k, arrays in plan:
                    if isinstance(arrays[0], np.ndarray):
                        compression.check(k, arrays[0])
                residuals = {k: compression.residuals_of(k) for k, _ in plan}
                if not self._backend.remote:  # each device's value, before the sum (MXNet's device store)
                    plan = [(k, [compression.round_trip(k, i, a) if isinstance(a, np.ndarray) else a
                                 for i, a in enumerate(arrays)]) for k, arrays in plan]
            if len({k for k, _ in plan}) < len(plan):
                # a key listed twice sees its first push applied before the second is summed
                for k, arrays in plan:
                    self._apply_pushes([self._reduce_push(k, arrays)])
                return
            # All sums first — an interrupt or a device failure here changes nothing — then
            # every key's update at once, which Ctrl-C cannot cut in half.
            try:
                reduced = [self._reduce_push(k, arrays) for k, arrays in plan]
            except BaseException:
                if compression is not None and residuals is not None:  # nothing was pushed: nor compressed
                    for k, saved in residuals.items():
                        compression.set_residuals(k, saved)
                raise
            self._apply_pushes(reduced)

    def pull(
        self,
        key: Key | Sequence[Key],
        out: Any = None,
        priority: int = 0,
        ignore_sparse: bool = True,
    ) -> Any:
        """Copy each key's value into ``out``: one array, or a list of arrays (one per device).

        With ``out=None`` a new numpy array is returned (a list of them for a list of keys;
        a :class:`~kvcli.arrays.sparse.RowSparse` copy for a row-sparse key). A row-sparse
        ``out`` is skipped while ``ignore_sparse`` is True (MXNet's default: such outputs
        are meant for :meth:`row_sparse_pull`); with False it receives the whole value.
        A distributed store pulls after this worker's pushes have been applied.
        """
        del priority
        with self._lock:
            self._check_open()
            if out is None:
                values = self._backend.read(self._keys_of(key))  # every key at once (one call per server)
                copies = [v.copy() if isinstance(v, RowSparse) else np.array(v, copy=True) for v in values]
                return copies if isinstance(key, (list, tuple)) else copies[0]
            # every output is checked before anything is read
            keys, plan = [], []
            for k, o in self._pair(key, out, "pull"):
                keys.append(k)
                plan.append(RowSparseRules.outputs(k, self._info[k], o, ignore_sparse))
            for k, (buffers, targets), value in zip(keys, plan, self._backend.read(keys)):
                self._rows.copy_out(k, value, buffers, targets)
            return out

    def pushpull(self, key: Key | Sequence[Key], value: Any, out: Any = None, priority: int = 0) -> Any:
        """Push ``value`` then pull into ``out``; returns ``out``.

        With ``out=None`` the result is written back into ``value`` (every array of a
        device list), as MXNet and Gluon do, so ``value`` must then be writable arrays.
        """
        with self._lock:
            self._check_open()
            if out is None:  # in place: the pushed values receive the result
                for k, v in self._pair(key, value, "pushpull"):
                    for item in v if is_value_list(v) else [v]:
                        if not is_writable_array(item):
                            raise OutputError(
                                f"pushpull of key {k!r} without out= writes the result back into the pushed "
                                f"values, so each must be a writable numpy or nd array, not a "
                                f"{type(item).__name__}; or pass out=..."
                            )
                out = value
            for k, o in self._pair(key, out, "pull"):  # validate the pull side before the push
                RowSparseRules.outputs(k, self._info[k], o, True)
            self.push(key, value, priority)
            return self.pull(key, out=out, priority=priority)

    def broadcast(self, key: Key | Sequence[Key], value: Any, out: Any, priority: int = 0) -> Any:
        """Initialise each key with ``value`` (rank 0's, in a distributed store) and pull it
        into ``out`` (one array or a list per key); returns ``out``.

        MXNet's native store refuses to broadcast a key twice; here, as with :meth:`init`,
        a second broadcast re-initialises the key. Outputs are checked against the values
        before anything changes.
        """
        del priority
        with self._lock:
            self._check_open()
            values = self._pair(key, value, "broadcast")
            outs = dict(self._pair(key, out, "broadcast"))
            values = one_value_per_key(values, "broadcast", "and one or a list of outputs")
            for k, v in values:
                array = as_numpy(v)
                for index, o in enumerate(outs[k] if isinstance(outs[k], (list, tuple)) else [outs[k]]):
                    check_array(k, writable_buffer(o, k), ArrayInfo(array.shape, array.dtype),
                                f"broadcast (output {index})")
            self.init(key, value)
            return self.pull(key, out=out)

    def is_capable(self, capability: str) -> bool:
        """Whether the store supports ``capability``; MXNet 1.9.1 knows only ``"optimizer"``
        (every kvcli store can run an optimizer). Any other name is an error, as in MXNet."""
        if isinstance(capability, str) and capability.lower() == self.OPTIMIZER:
            return True
        raise UnsupportedError(f"unknown capability {capability!r}: the only one is {self.OPTIMIZER!r}")

    def row_sparse_pull(
        self, key: Key | Sequence[Key], out: Any = None, priority: int = 0, row_ids: Any = None
    ) -> Any:
        """Copy only the rows ``row_ids`` of a row-sparse key into row-sparse outputs.

        ``out`` is one row-sparse array or a list of them (one per device); ``row_ids`` is
        one id array for all of them or a list with one per output (for a list of keys: a
        list with one such entry per key). Each output ends up holding exactly the requested
        rows (sorted, each once; zero where the stored value has none) — MXNet's result.
        The cost grows with the rows requested, not with the size of the table. A dense
        output, a dense key, or an id outside the table is an error and changes nothing.
        With ``out=None`` new :class:`~kvcli.arrays.sparse.RowSparse` values are returned.
        """
        del priority
        if row_ids is None:
            raise ArityError(f"row_sparse_pull of key {key!r} needs row_ids=[...] (the rows to pull)")
        with self._lock:
            self._check_open()
            if out is None:
                made = [RowSparse.zeros(self._info[k].shape, self._info[k].dtype) for k in self._keys_of(key)]
                out = made if isinstance(key, (list, tuple)) else made[0]
            pairs = self._pair(key, out, "row_sparse_pull")
            if isinstance(key, (list, tuple)):  # one row_ids entry per key, as for out
                ids_per_key = [ids for _, ids in self._pair(key, row_ids, "row_sparse_pull")]
            else:
                ids_per_key = [row_ids]
            plan = []
            for (k, o), ids in zip(pairs, ids_per_key):
                targets = RowSparseRules.targets(k, self._info[k], o)
                plan.append((k, targets, RowSparseRules.row_ids(k, self._info[k], ids, len(targets))))
            for k, targets, rows in plan:
                for target, got in zip(targets, self._backend.read_rows(k, rows)):
                    target.data, target.indices = got.data, got.indices
            return out

    # ------------------------------------------------------------------ updaters
    def set_updater(self, updater: UpdaterFn | str | None) -> None:
        """Set how a push changes the stored value: ``updater(key, merged, stored)``.

        ``updater`` may be a callable with MXNet's signature (it must change ``stored`` in
        place), a spec string such as ``"sum"``, ``"scale-add:2"`` or ``"sgd:lr=0.1"`` (see
        :mod:`kvcli.updaters`; parsed by the store's ``parse_updater``), or None for the
        default (assign). In a distributed store it is collective, like ``init``.
        """
        with self._lock:
            if isinstance(updater, str):
                updater = self._parse_spec(updater)
            if updater is not None and not callable(updater):
                raise UpdaterError(
                    f"updater must be callable(key, input, stored) or a spec string, "
                    f"not {type(updater).__name__}"
                )
            if getattr(updater, "spec", None) == "assign":
                updater = None
            self._updater = updater
            self._backend.set_updater(updater)

    _set_updater = set_updater

    def set_optimizer(self, optimizer: Any) -> None:
        """Run ``optimizer`` on every push: the pushed value is the gradient, the stored value
        the weight. Takes a :mod:`kvcli.updaters` optimizer, an MXNet-style
        ``kvcli.mx.optimizer`` object, or a spec string like ``"adam:lr=0.01"``."""
        from kvcli.optim.base import check_optimizer

        self.set_updater(check_optimizer(self._parse_spec(optimizer) if isinstance(optimizer, str) else optimizer))

    def _parse_spec(self, spec: str) -> Any:
        if self._parse_updater is None:
            raise UpdaterError(
                f"this store takes updater objects, not the spec {spec!r}: parse it with "
                "kvcli.updaters.parse_updater(spec), or make the store with kvcli.create()"
            )
        return self._parse_updater(spec)

    @property
    def updater(self) -> UpdaterFn | None:
        """The current updater (None: assign)."""
        return self._updater

    @property
    def updater_spec(self) -> str | None:
        """The spec string of the updater (``"assign"`` when none is set), or None when it is
        a plain Python callable that has no spec and so cannot be saved."""
        if self._updater is None:
            return "assign"
        return getattr(self._updater, "spec", None)

    def save_optimizer_states(self, fname: str | Path, dump_optimizer: bool = False) -> None:
        """Write the updater's state (momentum, Adam moments, step counts) to ``fname``.

        The file is a numpy ``.npz`` archive read without pickle; ``dump_optimizer`` also
        stores the updater spec so :meth:`load_optimizer_states` can restore the updater.
        A distributed store gathers the state from its servers first.
        """
        from kvcli.optim.state import save_state

        with self._lock:
            updater = self._stateful_updater("save")
            self._backend.gather_state(updater)
            save_state(updater, Path(fname), include_spec=dump_optimizer)

    def load_optimizer_states(self, fname: str | Path) -> None:
        """Read state written by :meth:`save_optimizer_states` into the current updater
        (or, when the file holds the spec of one of kvcli's optimizers, into the optimizer it
        describes). A file never brings code: one whose spec names a ``python:`` updater loads
        only into that same updater, set by you. State arrays must fit the keys this store
        holds; on any error nothing changed."""
        from kvcli.optim.state import load_state

        with self._lock:
            shapes = {key: tuple(info.shape) for key, info in self._info.items()}
            self._updater = load_state(Path(fname), self._updater, shapes=shapes)
            self._backend.set_updater(self._updater)

    def _stateful_updater(self, verb: str) -> Any:
        updater = self._updater
        if updater is None or not hasattr(updater, "state_dict"):
            raise OptimizerStateError(
                f"cannot {verb} optimizer states: the updater is "
                f"{'assign' if updater is None else 'a plain Python function'}; "
                "call set_optimizer(...) or set_updater('sgd:...') first"
            )
        return updater

    # ------------------------------------------------------------------ gradient compression
    def set_gradient_compression(self, compression_params: Any) -> None:
        """Compress pushed gradients with MXNet's 2-bit scheme (see
        :mod:`kvcli.store.compression`): ``{'type': '2bit', 'threshold': 0.5}``.

        Supported by ``device`` and the distributed stores, as in MXNet; ``None`` turns it
        off. Residuals are kept per key and device, and reset when a key is re-initialised.
        """
        from kvcli.store.compression import GradientCompression, parse_compression, require_support

        spec = parse_compression(compression_params)
        if spec is not None:
            require_support(self.type, self._compression_applies)
        with self._lock:
            self._check_open()
            if spec is None:
                self._compression = None
            elif self._compression is None:
                self._compression = GradientCompression(spec)
            else:  # a new threshold keeps the residuals, as in MXNet
                self._compression.spec = spec

    @property
    def gradient_compression(self) -> Any:
        """The compression setting (a :class:`~kvcli.store.compression.CompressionSpec`), or None."""
        return None if self._compression is None else self._compression.spec

    def compression_residuals(self, key: Key) -> list[np.ndarray]:
        """Copies of ``key``'s compression residuals, one per device (or server part)."""
        return [] if self._compression is None else self._compression.residuals_of(key)

    def set_compression_residuals(self, key: Key, residuals: Sequence[np.ndarray]) -> None:
        """Restore residuals saved by :meth:`compression_residuals` (e.g. by a session)."""
        if self._compression is not None:
            self._compression.set_residuals(key, list(residuals))

    # ------------------------------------------------------------------ keys
    def view(self, key: Key) -> np.ndarray:
        """A read-only view of ``key``'s value, without a copy where the backend allows.

        It is valid until the next operation on the store; use :meth:`pull` for a copy.
        """
        with self._lock:
            self._check_open()
            value = self._backend.read(self._keys_of(key)[:1])[0]
            # a row-sparse value has no dense array to view: this is a dense copy of it
            view = (value.to_dense() if isinstance(value, RowSparse) else value).view()
            view.flags.writeable = False
            return view

    def keys(self) -> list[Key]:
        """The initialised keys, in the order they were first initialised."""
        self._check_open()
        return list(self._info)

    def has(self, key: Key) -> bool:
        """Whether ``key`` has been initialised (False for anything that is not a key, such
        as ``True`` or ``1.0``, which :meth:`init` refuses)."""
        self._check_open()
        if isinstance(key, bool) or not isinstance(key, (int, np.integer, str)):
            return False
        return normalise_key(key) in self._info

    def info(self, key: Key) -> ArrayInfo:
        """Shape and dtype of ``key``'s value."""
        return self._info_of(normalise_key(key))

    def delete(self, key: Key) -> None:
        """Forget ``key`` (and its optimizer state). In a distributed store it is collective,
        like ``init``: once it returns on any worker, the key is gone everywhere."""
        with self._lock:
            self._check_open()
            k = normalise_key(key)
            self._info_of(k)
            self._backend.forget(k)
            self._rows.forget(k)
            del self._info[k]
            self._on_reset(k)
            if not self._info:
                self._key_kind = None

    def barrier(self) -> None:
        """Wait until every worker calls ``barrier()`` (at once for a single process)."""
        with self._lock:
            self._check_open()
            self._backend.barrier()

    def _barrier(self) -> None:
        """MXNet's name for :meth:`barrier`."""
        self.barrier()

    def close(self) -> None:
        """Stop the store's processes and free its memory. Safe to call twice."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._backend.close()

    def __enter__(self) -> "KVStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Key]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._info)

    def __repr__(self) -> str:
        return f"<KVStore type={self.type!r} keys={len(self._info)} backend={self._backend!r}>"

    # ------------------------------------------------------------------ pushes
    def _reduce_push(self, key: Key, values: Sequence[Value]) -> tuple[Key, bool, Value]:
        """``(key, row-sparse rules?, the sum)`` of one key's pushed values."""
        if RowSparseRules.govern(self._info[key], values):
            return key, True, merge(values)
        return key, False, self._backend.reduce(key, values)  # type: ignore[arg-type]  # dense: govern said so

    def _apply_pushes(self, reduced: list[tuple[Key, bool, Value]]) -> None:
        """Make reduced pushes take effect, in order: a remote backend takes them all; for
        values kept here, the sum is assigned or handed to the updater (row-sparse rules
        where they govern)."""
        backend = self._backend
        if backend.remote:
            backend.apply([(k, merged) for k, _, merged in reduced], self._compression)
            return
        with self._uncut():
            assigned = []
            for k, sparse, merged in reduced:
                if sparse:
                    self._rows.apply_here(k, self._info[k], merged, self._updater, backend.stored(k))
                    continue
                if self._rows.pushed_rows:  # a dense push ends a row-sparse sum's rows
                    self._rows.forget(k)
                if self._updater is None:
                    assigned.append((k, merged))
                else:
                    self._update_here(k, merged, backend.stored(k))  # type: ignore[arg-type]  # a dense key
            if assigned:  # keys are distinct here: the order among them does not matter
                backend.apply(assigned, None)

    def _uncut(self) -> Any:
        """Ctrl-C waits while a push takes effect — unless the updater is user code, which
        may run long (and whose partial effect a session discards anyway)."""
        spec = getattr(self._updater, "spec", None) if self._updater is not None else "assign"
        user_code = spec is None or str(spec).startswith("python:")
        return nullcontext() if user_code else deferred_interrupts()

    def _update_here(self, key: Key, merged: Value, stored: np.ndarray) -> None:
        """Call the updater, then hold it to the contract: ``stored`` is changed in place,
        keeping its shape and dtype, and stays the stored array. An updater that reshapes,
        retypes or replaces it (``stored.shape = (1, 3)``) gets an :class:`UpdaterError` and
        the stored array gets its shape, dtype and place back (values it wrote stay, as with
        any updater that raises)."""
        shape, dtype = stored.shape, stored.dtype
        assert self._updater is not None  # the caller checked
        self._updater(key, merged, stored)
        replaced = self._backend.stored(key) is not stored
        if stored.shape == shape and stored.dtype == dtype and not replaced:
            return
        found = f"{stored.dtype} {stored.shape}" + (" and replaced it" if replaced else "")
        try:  # a view change of the same buffer: undo it (dtype first, it rescales the shape)
            if stored.dtype != dtype:
                stored.dtype = dtype  # type: ignore[misc]  # numpy allows it on a view
            if stored.shape != shape:
                stored.shape = shape
        except (ValueError, AttributeError, TypeError):  # pragma: no cover - cannot be undone: drop the key's copy
            stored = np.zeros(shape, dtype)
            replaced = True
        if replaced:
            self._backend.write([(key, stored)], reset=False)
        raise UpdaterError(
            f"the updater changed the stored value of key {key!r} to {found}, not in place as "
            f"{dtype} {shape}: an updater must change stored's values (stored[:] = ...), never its shape or dtype"
        )

    # ------------------------------------------------------------------ validation
    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"this {self.type!r} store is closed: create a new one with kvcli.create()")

    def _on_reset(self, key: Key) -> None:
        if self._compression is not None:
            self._compression.reset(key)
        reset = getattr(self._updater, "reset", None)
        if reset is not None:
            reset(key)

    def _keys_of(self, key: Any) -> list[Key]:
        keys = list(key) if isinstance(key, (list, tuple)) else [key]
        normalised = [normalise_key(k) for k in keys]
        for k in normalised:
            self._info_of(k)
        return normalised

    def _pair(self, key: Any, value: Any, verb: str) -> list[tuple[Key, Any]]:
        """Pair keys with values (one key and one value, or two lists of equal length)."""
        if isinstance(key, (list, tuple)):
            keys = [normalise_key(k) for k in key]
            if not isinstance(value, (list, tuple)) or len(value) != len(keys):
                got = f"{len(value)} values" if isinstance(value, (list, tuple)) else "one value"
                raise ArityError(
                    f"{verb} got {len(keys)} keys {keys!r} but {got}: pass one value per key, "
                    "in a list of the same length"
                )
            pairs = list(zip(keys, value))
        else:
            pairs = [(normalise_key(key), value)]
        creates = verb in ("init", "broadcast")  # these take keys that do not exist yet
        if not creates:
            for k, _ in pairs:
                self._info_of(k)
        seen: set[Key] = set()
        for k, _ in pairs:
            if k in seen and creates:
                raise ArityError(f"{verb} lists key {k!r} twice: give each key once")
            seen.add(k)
        self._check_key_kinds([k for k, _ in pairs])
        return pairs

    def _check_key_kinds(self, keys: list[Key]) -> None:
        kinds = {type(k) for k in keys}
        if self._key_kind is not None:
            kinds.add(self._key_kind)
        if len(kinds) > 1:
            existing = "int" if self._key_kind is int else "str" if self._key_kind is str else "mixed"
            raise KeyTypeError(
                f"keys {keys!r} mix int and str keys (this store holds {existing} keys): "
                "use one kind of key per store"
            )

    def _info_of(self, key: Key) -> ArrayInfo:
        try:
            return self._info[key]
        except KeyError:
            known = ", ".join(repr(k) for k in list(self._info)[:8]) or "none"
            raise UnknownKeyError(
                f"key {key!r} is not initialised (known keys: {known}): call init({key!r}, value) first"
            ) from None

    def _device_values(self, key: Key, value: Any, verb: str) -> list[Value]:
        info = self._info_of(key)
        if type(value) is np.ndarray and value.shape == info.shape and value.dtype == info.dtype:
            return [value]  # the usual case: one array that fits (checked below otherwise)
        values = list(value) if is_value_list(value) else [value]
        arrays = [_sparse if (_sparse := as_row_sparse(v)) is not None else as_numpy(v, key) for v in values]
        for index, array in enumerate(arrays):
            where = f" (value {index} of {len(arrays)})" if len(arrays) > 1 else ""
            check_array(key, array, info, f"{verb}{where}")
        return arrays
