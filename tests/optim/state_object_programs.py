"""What MXNet code sees in an optimizer's ``Updater.states``, and what it gets when it changes
them: one program, run on real MXNet 1.9.1 by ``tests/data/make_mxnet_state_objects_reference.py``
and on ``kvcli.mx`` by ``tests/optim/test_state_objects.py`` with the same inputs.

For one optimizer and its settings, two weights and four steps of gradients (bytes as hex):

* ``updater``: ``mx.optimizer.get_updater(opt)`` updates index 0 (a weight on ``cpu(0)``) and
  index 1 (on ``cpu(1)``) twice, one call per index or one call with lists (``as_list``);
  then each ``states[i]``: its layout (None, NDArray, tuple or list; each NDArray's dtype,
  shape, context and storage type) and its values, and the weights;
* ``modified``: the program halves every array of ``states[0]`` in place
  (``leaf[:] = leaf * 0.5``) and replaces ``states[1]`` by new NDArrays
  (``leaf * 0.25 + 0.125``), then updates both indices once more;
* ``set_states``: ``get_states()`` of that updater loaded with ``set_states`` into the updater
  of a new optimizer of the same settings: its ``states`` at once, and their layout after one
  more update of each index (MXNet moves a loaded state onto its weight's context);
* ``store``: a ``local`` KVStore with ``set_optimizer(opt)``, keys 3 (pushed from two devices)
  and 5: ``kv._updater``'s class and ``states`` after two pushes; then after halving
  ``states[3]`` in place and one more push, the states and the pulled weights.

With ``noisy`` (SGLD, whose noise is each framework's own) only the layouts are kept.
kvcli's code, nothing of MXNet's copied.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SHAPE = (2, 3)


def to_hex(array: np.ndarray) -> dict[str, Any]:
    array = np.ascontiguousarray(array)
    return {"dtype": str(array.dtype), "shape": list(array.shape), "hex": array.tobytes().hex()}


def from_hex(record: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(record["hex"]), dtype=record["dtype"]).reshape(record["shape"]).copy()


def layout(mx: Any, state: Any) -> Any:
    """What a state is: None, ``{"nd": [dtype, shape, context, stype]}``, ``{"tuple"|"list": [...]}``;
    anything else by its class name (so a numpy array shows as ``{"other": "ndarray"}``)."""
    if state is None:
        return None
    if isinstance(state, (tuple, list)):
        return {type(state).__name__: [layout(mx, s) for s in state]}
    if not isinstance(state, mx.nd.NDArray):
        return {"other": type(state).__name__}
    return {"nd": [np.dtype(state.dtype).name, list(state.shape), str(state.context), state.stype]}


def values(state: Any) -> list[dict[str, Any]]:
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [v for s in state for v in values(s)]
    return [to_hex(state.asnumpy())]


def rebuilt(state: Any, change: Any) -> Any:
    """``state`` with every array ``a`` replaced by ``change(a)`` (tuples and lists kept)."""
    if state is None:
        return None
    if isinstance(state, (tuple, list)):
        return type(state)(rebuilt(s, change) for s in state)
    return change(state)


def halve_in_place(state: Any) -> None:
    if isinstance(state, (tuple, list)):
        for s in state:
            halve_in_place(s)
    elif state is not None:
        state[:] = state * 0.5


def run(mx: Any, case: dict[str, Any]) -> dict[str, Any]:
    """The four scenarios of one case (its ``optimizer``, ``kwargs``, ``dtype``, ``as_list``,
    ``noisy``, ``weights`` and ``grads``) on ``mx``."""
    name, kwargs, dtype, noisy = case["optimizer"], case["kwargs"], case["dtype"], case["noisy"]
    weights0 = [from_hex(w) for w in case["weights"]]
    grads = [[from_hex(g) for g in step] for step in case["grads"]]
    contexts = [mx.cpu(0), mx.cpu(1)]

    def record(updater: Any, indices: tuple[int, ...]) -> dict[str, Any]:
        return {str(i): {"layout": layout(mx, updater.states[i]), "values": [] if noisy else values(updater.states[i])}
                for i in indices}

    def weights_of(arrays: list[Any]) -> list[dict[str, Any]]:
        return [] if noisy else [to_hex(a.asnumpy()) for a in arrays]

    updater = mx.optimizer.get_updater(mx.optimizer.create(name, **kwargs))
    ws = [mx.nd.array(w, ctx=c, dtype=dtype) for w, c in zip(weights0, contexts)]

    def step(target: Any, n: int) -> None:
        gs = [mx.nd.array(g, ctx=c, dtype=dtype) for g, c in zip(grads[n], contexts)]
        if case["as_list"]:
            target([0, 1], gs, ws)
        else:
            for i in range(2):
                target(i, gs[i], ws[i])

    result: dict[str, Any] = {}
    for n in range(2):
        step(updater, n)
    result["updater"] = {**record(updater, (0, 1)), "weights": weights_of(ws)}
    halve_in_place(updater.states[0])
    updater.states[1] = rebuilt(updater.states[1], lambda a: a * 0.25 + 0.125)
    step(updater, 2)
    result["modified"] = {**record(updater, (0, 1)), "weights": weights_of(ws)}

    loaded = mx.optimizer.get_updater(mx.optimizer.create(name, **kwargs))
    loaded.set_states(updater.get_states())
    result["set_states"] = {"at_once": record(loaded, (0, 1))}
    step(loaded, 3)
    result["set_states"]["after_update"] = {str(i): layout(mx, loaded.states[i]) for i in (0, 1)}

    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.create(name, **kwargs))
    kv.init([3, 5], [mx.nd.array(w, dtype=dtype) for w in weights0])
    for n in range(2):
        kv.push([3, 5], [[mx.nd.array(grads[n][k], ctx=mx.cpu(k), dtype=dtype) for k in range(2)],
                         mx.nd.array(grads[n][1], dtype=dtype)])
    store: dict[str, Any] = {"class": type(kv._updater).__name__, "pushed": record(kv._updater, (3, 5))}
    halve_in_place(kv._updater.states[3])
    kv.push([3, 5], [mx.nd.array(grads[2][0], dtype=dtype), mx.nd.array(grads[2][1], dtype=dtype)])
    outs = [mx.nd.zeros(SHAPE, dtype=dtype) for _ in range(2)]
    kv.pull([3, 5], out=outs)
    store["modified"] = {**record(kv._updater, (3, 5)), "weights": weights_of(outs)}
    result["store"] = store
    return result
