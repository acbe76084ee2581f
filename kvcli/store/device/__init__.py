"""The device store: one worker process per device, values in shared memory.

:mod:`~kvcli.store.device.store` (``DeviceBackend``), :mod:`~kvcli.store.device.worker` (the
worker processes), :mod:`~kvcli.store.device.shm` (shared-memory segments).
"""
