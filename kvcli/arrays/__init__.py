"""Numpy-level values, a leaf every other package may use.

:mod:`~kvcli.arrays.kinds` (the key type and the dtypes a value may have, without numpy),
:mod:`~kvcli.arrays.core` (keys, dtypes a store holds, ``as_numpy``, outputs),
:mod:`~kvcli.arrays.sparse` (row-sparse values), :mod:`~kvcli.arrays.summation` (``sum_into``),
:mod:`~kvcli.arrays.npyio` (the bounded, pickle-free ``.npy``/``.npz`` I/O).
Nothing here imports the store, the optimizers, the session or the MXNet layer. The package
itself imports nothing, so importing one of its modules stays light.
"""
