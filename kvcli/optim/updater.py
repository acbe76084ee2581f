"""MXNet's ``Updater``: one state per index, created on first use (what
``mx.optimizer.get_updater`` returns), with its states as bytes."""

from __future__ import annotations

import numpy as np

from kvcli.errors import OptimizerStateError
from kvcli.optim.base import Optimizer
from kvcli.optim.per_index import PerIndexStates
from kvcli.optim.state import dumps, read_state


class Updater(PerIndexStates):
    """MXNet's ``Updater``: ``updater(index, grad, weight)`` creates each index's state on
    first use and calls ``optimizer.update_multi_precision``; ``states`` holds numpy arrays
    (``kvcli.mx.optimizer.Updater``, ``get_updater``'s, holds NDArray views of them, as MXNet)."""

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states as bytes: kvcli's pickle-free ``.npz`` format (MXNet pickles); with
        ``dump_optimizer`` the bytes also carry the optimizer's spec string."""
        state = {
            "states": {k: {n: np.array(a) for n, a in s.items()} for k, s in self.named_states().items()},
            "counts": dict(self.optimizer._index_update_count),
            "extra": self.optimizer._extra_state(),
        }
        return dumps(state, self.optimizer.name, self.optimizer.spec if dump_optimizer else None)

    def set_states(self, states: bytes) -> None:
        """Load bytes from :meth:`get_states`; when they carry the spec of one of kvcli's
        optimizers, the optimizer becomes the one it names (MXNet's ``dump_optimizer``). A
        spec that names code is never run (see :mod:`kvcli.optim.state`); on any error
        nothing changed."""
        optimizer, saved = read_state(bytes(states), self.optimizer, where="the states", role="optimizer")
        if not isinstance(optimizer, Optimizer):
            raise OptimizerStateError(f"the states name {saved.spec!r}, which is not an optimizer")
        pending = optimizer._restore(saved.as_state())
        self.optimizer = optimizer
        self.clear()
        self.restore(pending, saved.keys)
