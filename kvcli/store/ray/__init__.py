"""``dist_sync`` and ``dist_async``: the KVStore's values spread over Ray actors.

Modules: :mod:`~kvcli.store.ray.store` (``RayBackend``, the worker's side), ``join`` (a
worker's place in a group), ``calls`` (actor calls, Ray's failures as kvcli errors), ``sparse``
and ``state`` (row ranges, optimizer state), ``shm`` (the node-local shm path), ``server`` (key
servers), ``coordinator``, ``aggregate`` (node-local pre-sum), ``group`` (groups, connecting to
Ray), ``launch`` (starting workers).

A *group* is one distributed job: ``num_workers`` worker processes (ranks ``0..W-1``) that
push and pull, ``num_servers`` :class:`~kvcli.store.ray.server.KeyServer` actors that hold
the values, and a :class:`~kvcli.store.ray.coordinator.Coordinator` actor for barriers. The
actors are named in the Ray namespace ``kvcli-<group>``, so every worker finds them.

How a worker learns its place — the ``DMLC_*`` variables of MXNet — is environment
variables, set by :func:`kvcli.store.ray.launch.launch` / ``kvcli launch``:

=======================  ================================================================
``KVCLI_RAY_ADDRESS``    the Ray cluster (default: the one this process is connected to,
                         else a new local one)
``KVCLI_GROUP``          the group id (default: a new group of one worker)
``KVCLI_RANK``           this worker's rank (default 0)
``KVCLI_NUM_WORKERS``    the number of workers (default 1)
``KVCLI_NUM_SERVERS``    servers to start when this worker starts the group (default 1)
``KVCLI_DIST_TIMEOUT``   seconds to wait for other workers before failing (default 60)
``KVCLI_BIGARRAY_BOUND`` arrays of at least this many elements are split by rows over the
                         servers (default 1,000,000, as MXNet's ``MXNET_KVSTORE_BIGARRAY_BOUND``)
=======================  ================================================================

The same names, lower-case without the prefix, are options of ``kvcli.create`` (declared
in :data:`kvcli.store.DIST_OPTIONS`: ``address``,
``group``, ``rank``, ``num_workers``, ``num_servers``, ``timeout``, ``bigarray_bound``) plus
``server_restarts`` and ``member`` (a stable id to register this rank with: the commands of
one session, one after another, re-join their kept group as the same worker); an option wins
over the variable. A store created without a launcher is
a group of one worker that starts its own servers and stops them when the store closes.

Semantics (MXNet's):

* ``init``, ``set_updater`` / ``set_optimizer``, ``load_optimizer_states`` and ``delete``
  are collective: every worker calls them, in the same order. Only rank 0's init value and
  updater are sent to the servers; the others wait at a barrier and then check that the
  servers hold what they expect.
* ``push`` sums a worker's per-device values on the worker, then sends the sum. In
  ``dist_sync`` the server applies the updater once per key per step, on the sum of all
  workers' pushes in rank order; in ``dist_async`` it applies each push as it arrives.
  In ``dist_sync``, the workers of one node push to a server on another node through their
  node's aggregator, which sums them first, so one push per node crosses
  (:mod:`kvcli.store.ray.aggregate`: which pushes, and the order of the sum).
* ``pull`` waits until this worker's last push to the key has been applied, so ``push;
  pull`` sees the step's result on every worker. Waiting longer than ``timeout`` raises
  :class:`~kvcli.errors.DistributedError` naming the key and the ranks that did not push;
  when the launcher saw such a rank die or exit, the error comes at once.
* The updater (or optimizer) runs on the servers, and its state lives there;
  ``save_optimizer_states`` gathers it.
* With ``set_gradient_compression``, a worker compresses its (device-summed) push with its
  own residual and sends only the 2-bit codes; the server decodes them and sums the workers
  (see :mod:`kvcli.store.compression`). ``broadcast`` is a collective ``init`` and a pull.

Where values travel depends on where the actors run. Between a worker and a server on the
*same Ray node* (the usual single machine), dense values go through shared memory: the
worker copies its push into a reused segment of its own and the server reads it there;
a ``dist_sync`` server keeps its values in shared memory and a pull copies them out; the
calls carry only descriptors (:mod:`kvcli.store.ray.shm`). ``KVCLI_DIST_NO_SHM`` turns
this off. Otherwise (other nodes, ``dist_async`` pulls, row-sparse and compressed pushes)
values travel through Ray's object store: a push puts the array there (``ray.put``) and
hands the server a reference; a pull gets back a reference to a copy the server put
there — one copy per step, shared by every worker that pulls it (without an updater, a
step made of one such push, one worker's or one node's pre-sum, is answered with the
pushed object itself: no copy, and nothing crosses back). Small values travel inline in
the calls. Such a push returns once its values are handed over (MXNet's push is
asynchronous too): the store's next operation waits for the server's answer and raises
the push's error, if any. When a worker pulled a key after its last push, its next push
asks the server for the step's result, and the push that completes the step gets it back
with its answer: that pull then makes no call of its own.

**Server restarts.** Servers are started with ``max_restarts=server_restarts`` (default 1).
Ray restarts a dead server with no values and no updater. Any operation that was in flight
when it died raises ``DistributedError`` ("... died or is restarting"); afterwards every
push or pull of a key it held raises ``DistributedError`` ("... was restarted by Ray and lost
its values ...: call init(...) again on every worker"; a push to another node: at the store's
next call) — never a stale or zero value. Calling
``init`` again for those keys on every worker restores service: rank 0 re-sends the updater
to the restarted server, and the keys' optimizer state starts afresh, as for any re-init.
"""
