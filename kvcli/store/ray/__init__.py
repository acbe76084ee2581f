"""The distributed store on Ray.

:mod:`~kvcli.store.dist.store` (``DistStore``), :mod:`~kvcli.store.dist.server` (key servers),
:mod:`~kvcli.store.dist.group` (groups), :mod:`~kvcli.store.dist.shm` (the node-local shm
path), :mod:`~kvcli.store.dist.sparse`, :mod:`~kvcli.store.dist.state`,
:mod:`~kvcli.store.dist.launch` (starting workers).
"""
