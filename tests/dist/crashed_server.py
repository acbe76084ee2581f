"""A dist_sync store whose server Ray has just killed (shared by the tests of both push paths)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator


@contextmanager
def store_with_a_crashed_server(ray: Any) -> Iterator[tuple[Any, Any]]:
    """A one-worker dist_sync store (updater 'sum', key 'w' pushed once: 2.0) whose server
    Ray has just killed and is restarting (max_restarts=1): yields (store, server)."""
    import numpy as np

    import kvcli

    with kvcli.create("dist_sync", timeout=10) as kv:
        kv.set_updater("sum")
        kv.init("w", np.ones(4))
        kv.push("w", np.ones(4))
        assert (kv.pull("w") == 2).all()
        server = kv.backend._group.servers[0]
        ray.kill(server, no_restart=False)  # a crash; Ray restarts it (max_restarts=1)
        yield kv, server
