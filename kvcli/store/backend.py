"""The :class:`Backend` protocol: where a :class:`~kvcli.store.api.KVStore` keeps its values.

The store (:mod:`kvcli.store.api`) owns the MXNet API and every check; it calls a backend
only with normalised keys and values it has validated, and owns the copies it hands over.
A backend says where values live and how one key's per-device values are summed:

* :class:`~kvcli.store.local.LocalBackend`: numpy arrays in this process.
* :class:`~kvcli.store.device.store.DeviceBackend`: shared memory; worker processes sum.
* :class:`~kvcli.store.ray.store.RayBackend`: key servers on Ray (values, updater and
  optimizer state live there: it is :attr:`Backend.remote`).

Any object with these members is a backend (structural typing, as httpx's transports).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence, Union

import numpy as np

from kvcli.arrays.core import Key
from kvcli.arrays.sparse import RowSparse

if TYPE_CHECKING:  # imported on first use: a store without compression never loads the coder
    from kvcli.store.compression import GradientCompression

#: A stored value: a dense array or a row-sparse one.
Value = Union[np.ndarray, RowSparse]
#: MXNet's updater signature: ``updater(key, merged, stored)`` changes ``stored`` in place.
UpdaterFn = Callable[[Key, Any, Any], None]


class Backend(Protocol):
    """Storage and reduction for a KVStore.

    Two kinds, told apart by :attr:`remote`:

    * values in this process (``remote`` False): the store runs the updater on
      :meth:`stored` and applies MXNet's row-sparse rules itself; :meth:`apply` then only
      makes a dense sum the stored value (no updater set). The store compresses each
      device's value before :meth:`reduce` (MXNet's device store).
    * values elsewhere (``remote`` True, Ray): every push goes to :meth:`apply`, which
      compresses what it sends (the worker's sum, per server) and hands it to where the
      updater runs; :meth:`set_updater` ships the updater there.
    """

    #: Whether values, updater and optimizer state live outside this process.
    remote: bool

    @property
    def rank(self) -> int:
        """This worker's rank among :attr:`num_workers` (0 for a single-process backend)."""
        ...

    @property
    def num_workers(self) -> int:
        """How many workers push to the values (1 for a single-process backend)."""
        ...

    def write(self, values: Sequence[tuple[Key, Value]], reset: bool) -> None:
        """Make each value (a copy the store hands over) the value of its key, new or
        replaced, dense or row-sparse. ``reset``: an ``init`` (state tied to the key starts
        over) rather than a load of values kept elsewhere. A backend that keeps values in
        this process changes nothing when it raises (the device backend allocates every
        new segment first); Ray's may have initialised some keys on its servers."""
        ...

    def read(self, keys: Sequence[Key]) -> list[Value]:
        """The value of each key, for reading only (a pull copies it out)."""
        ...

    def read_rows(self, key: Key, rows: Sequence[np.ndarray]) -> list[RowSparse]:
        """For each sorted, unique, checked id array: those rows of row-sparse ``key`` (new arrays)."""
        ...

    def stored(self, key: Key) -> Value:
        """The stored value of ``key``, writable in place (the updater's ``stored``)."""
        ...

    def reduce(self, key: Key, arrays: Sequence[np.ndarray]) -> np.ndarray:
        """The sum of ``arrays`` (dense, checked, in order), in a buffer the backend owns."""
        ...

    def apply(self, pushes: Sequence[tuple[Key, Value]], compression: GradientCompression | None) -> None:
        """Make reduced pushes take effect, in order: see the class docstring.
        ``compression`` is given to a :attr:`remote` backend only."""
        ...

    def set_updater(self, updater: UpdaterFn | None) -> None:
        """The updater changed (None: assign); a :attr:`remote` backend ships it."""
        ...

    def gather_state(self, updater: Any) -> None:
        """Bring the optimizer state into ``updater`` before it is saved (a :attr:`remote`
        backend fetches it from where the updater runs)."""
        ...

    def forget(self, key: Key) -> None:
        """Drop the value of ``key``."""
        ...

    def barrier(self) -> None:
        """Wait until every worker reaches this point."""
        ...

    def close(self) -> None:
        """Release processes, memory and connections (called once)."""
        ...
