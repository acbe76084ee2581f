"""Train small models for 20 steps with the KVStore call patterns of MXNet 1.9.1's training
loops, through ``kvcli.mx`` or through MXNet itself, and compare the final weights.

The loops are written here (MXNet's code is not copied); each follows the sequence of
KVStore and optimizer calls that MXNet 1.9.1 makes, as a user bringing MXNet code meets them:

``module``                ``model.py`` as ``mx.mod.Module`` uses it with ``update_on_kvstore``:
                          ``broadcast`` each weight to the devices, ``set_optimizer``, then per
                          step ``pushpull(name, grads, out=weights)``
``module_updater``        ``update_on_kvstore=False``: ``init``, ``pushpull(name, grads)`` in
                          place, then one ``get_updater(opt)`` for all devices with MXNet's
                          per-device index ``i * num_device + k``
``module_row_sparse``     a row-sparse embedding weight (``_create_sparse_kvstore``): ``init``,
                          ``row_sparse_pull`` of the batch's rows to every device (Module's
                          ``prepare``), ``push`` + ``pull`` (skipped for row-sparse outputs)
``trainer``               ``gluon.Trainer.step`` with ``update_on_kvstore=True``: ``broadcast``,
                          ``pushpull(i, grads, out=weights)``; the optimizer's ``param_dict``
                          and a ``rescale_grad`` set before every step
``trainer_updaters``      ``Trainer.step`` with ``update_on_kvstore=False``: ``pushpull(i,
                          grads)`` in place, then one updater per device
``trainer_allreduce``     ``Trainer.allreduce_grads()``, clipping by the global norm (nd ops),
                          then ``Trainer.update()``
``trainer_row_sparse``    a row-sparse weight (update on the store is forced): ``init``,
                          ``row_sparse_pull`` per device of its rows, ``push`` of row-sparse grads
``trainer_sparse_grad``   a dense weight with row-sparse gradients (``sparse_grad=True``):
                          ``push`` + ``pull(..., ignore_sparse=False)`` into the gradients, then
                          one updater per device (lazy updates)

each on a ``local`` and a ``device`` store, with ``sgd`` (momentum), ``adam`` and ``nag``
(momentum), weight decay on: 8 x 2 x 3 = 48 runs on two devices ``cpu(0)``, ``cpu(1)``. The
data and the gradients are numpy (the same bits under both), so only the KVStore and the
optimizers differ. Two more examples: ``per_device_updaters`` runs two ``get_updater(opt)``
of one Adam on weights of ``cpu(0)`` and ``cpu(1)`` for three steps (each device keeps its
own step count in MXNet); ``row_sparse_key`` sets an optimizer (sgd, adam, nag, adagrad) on a
store, inits a row-sparse table and pushes row-sparse gradients from two devices (MXNet
updates only the pushed rows where its optimizer is lazy).

    .venv/bin/python tools/mxnet_training_loops.py                 # kvcli vs the recorded MXNet numbers
    .venv/bin/python tools/mxnet_training_loops.py --mxnet-python /path/to/mxnet/python   # vs MXNet, live
    /path/to/mxnet/python tools/mxnet_training_loops.py --framework mxnet --json out.json

The recorded numbers are ``tests/data/mxnet_training_loops_reference.json``
(``tests/data/make_mxnet_training_loops_reference.py``); ``tests/optim/test_training_loops.py``
replays the scenarios on kvcli. This is a measuring tool, not part of the test suite.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
REFERENCE = REPO_ROOT / "tests" / "data" / "mxnet_training_loops_reference.json"

STEPS = 20
NUM_DEVICES = 2
BATCH = 8
#: Optimizer arguments (MXNet's names); weight decay is on, so wd multipliers matter.
OPTIMIZERS: dict[str, dict[str, float]] = {
    "sgd": {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01},
    "adam": {"learning_rate": 0.05, "wd": 0.01},
    "nag": {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01},
}
KV_TYPES = ("local", "device")
RTOL, ATOL = 1e-5, 1e-6


# ---------------------------------------------------------------------- the models (numpy)
@dataclass
class Model:
    """Parameter shapes and storage types, initial values, and per-device gradients."""

    name: str
    shapes: dict[str, tuple[int, ...]]
    sparse_weight: bool = False  # the first parameter is row-sparse (an embedding table)
    sparse_grad: bool = False  # the first parameter's gradient is row-sparse

    def initial(self) -> dict[str, np.ndarray]:
        rng = np.random.RandomState(7)
        return {n: rng.uniform(-0.5, 0.5, s).astype(np.float32) for n, s in self.shapes.items()}

    def batch(self, step: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.RandomState(100 + step)
        if self.name == "linear":
            x = rng.uniform(-1, 1, (BATCH, 4)).astype(np.float32)
            true_w = np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 1.5, -1.0, 2.0]], np.float32)
            y = x @ true_w.T + np.array([0.5, -0.3], np.float32) + rng.normal(0, 0.05, (BATCH, 2)).astype(np.float32)
            return x, y.astype(np.float32)
        # embedding: two token ids per sample among the first 8 of 10 rows (row 8 never gets
        # a gradient, so lazy and dense updates differ there; row 9 is a padding row)
        tokens = rng.randint(0, 8, (BATCH, 2))
        y = rng.uniform(-1, 1, (BATCH, 3)).astype(np.float32)
        return tokens, y

    def device_slice(self, k: int) -> slice:
        per = BATCH // NUM_DEVICES
        return slice(k * per, (k + 1) * per)

    def rows(self, step: int, k: int | None = None) -> np.ndarray:
        """The embedding rows a device's (or the whole batch's) data uses, sorted."""
        tokens, _ = self.batch(step)
        return np.unique(tokens if k is None else tokens[self.device_slice(k)]).astype(np.int64)

    def grads(self, step: int, k: int, weights: dict[str, np.ndarray]) -> dict[str, Any]:
        """Device ``k``'s gradients of half the squared error on its half of the batch.

        The first parameter's gradient is ``(rows, data)`` when it is row-sparse.
        """
        x, y = self.batch(step)
        x, y = x[self.device_slice(k)], y[self.device_slice(k)]
        if self.name == "linear":
            w, b = weights["fc_weight"], weights["fc_bias"]
            err = (x @ w.T + b - y).astype(np.float32)
            return {"fc_weight": (err.T @ x).astype(np.float32), "fc_bias": err.sum(axis=0).astype(np.float32)}
        table, b = weights["embed_weight"], weights["out_bias"]
        err = (table[x].sum(axis=1) + b - y).astype(np.float32)
        # the padding row: listed in every row-sparse gradient with zeros (a masked loss),
        # so a lazy update still applies to it where MXNet's does
        rows = np.union1d(np.unique(x), [PADDING_ROW])
        data = np.zeros((len(rows), table.shape[1]), np.float32)
        for sample, ids in enumerate(x):
            for token in ids:
                data[np.searchsorted(rows, token)] += err[sample]
        embed: Any = (rows.astype(np.int64), data)
        if not (self.sparse_weight or self.sparse_grad):
            dense = np.zeros(table.shape, np.float32)
            dense[rows] = data
            embed = dense
        return {"embed_weight": embed, "out_bias": err.sum(axis=0).astype(np.float32)}


PADDING_ROW = 9
LINEAR = Model("linear", {"fc_weight": (2, 4), "fc_bias": (2,)})
EMBEDDING_SPARSE = Model("embedding", {"embed_weight": (10, 3), "out_bias": (3,)}, sparse_weight=True)
EMBEDDING_SPARSE_GRAD = Model("embedding", {"embed_weight": (10, 3), "out_bias": (3,)}, sparse_grad=True)


class ParamInfo:
    """What an optimizer's ``param_dict`` reads of a Gluon Parameter."""

    def __init__(self, name: str, lr_mult: float = 1.0, wd_mult: float = 1.0) -> None:
        self.name, self.lr_mult, self.wd_mult = name, lr_mult, wd_mult


# ---------------------------------------------------------------------- helpers
def _contexts(mx: Any) -> list[Any]:
    return [mx.cpu(k) for k in range(NUM_DEVICES)]


def _dense_copies(mx: Any, value: np.ndarray, ctxs: list[Any]) -> list[Any]:
    return [mx.nd.array(value, ctx=c) for c in ctxs]


def _row_sparse(mx: Any, rows: np.ndarray, data: np.ndarray, shape: tuple[int, ...], ctx: Any) -> Any:
    return mx.nd.sparse.row_sparse_array((data, rows), shape=shape, ctx=ctx)


def _device_weights(arrays: list[list[Any]], names: list[str], k: int) -> dict[str, np.ndarray]:
    return {n: arrays[i][k].asnumpy() for i, n in enumerate(names)}


def _write_grads(mx: Any, model: Model, step: int, params: list[list[Any]], grads: list[list[Any]],
                 names: list[str], ctxs: list[Any]) -> None:
    """Compute every device's gradients from its weights and put them into ``grads``
    (dense: in place, as backward does; row-sparse: a new array, as backward makes)."""
    for k, ctx in enumerate(ctxs):
        values = model.grads(step, k, _device_weights(params, names, k))
        for i, name in enumerate(names):
            value = values[name]
            if isinstance(value, tuple):
                grads[i][k] = _row_sparse(mx, value[0], value[1], model.shapes[name], ctx)
            else:
                grads[i][k][:] = value


def _pull_all_rows(mx: Any, kv: Any, key: Any, shape: tuple[int, ...]) -> np.ndarray:
    out = mx.nd.sparse.zeros("row_sparse", shape)
    kv.row_sparse_pull(key, out=out, row_ids=mx.nd.array(np.arange(shape[0]), dtype="int64"))
    return out.asnumpy()


def _close(kv: Any) -> None:
    close = getattr(kv, "close", None)  # kvcli's device stores stop their workers; MXNet has none
    if close is not None:
        close()


# ---------------------------------------------------------------------- model.py (Module)
def _module_kvstore(mx: Any, kvtype: str, arg_params: dict[str, Any], on_kvstore: bool) -> tuple[Any, bool]:
    """What model.py's kvstore selection gives for a string type on two devices."""
    kv = mx.kv.create(kvtype)
    largest = max(int(np.prod(p.shape)) for p in arg_params.values())
    if kvtype == "local" and largest > 16 * 1024 * 1024:
        on_kvstore = False
    return kv, on_kvstore and kv.is_capable(mx.kv.KVStoreBase.OPTIMIZER)


def module_loop(mx: Any, kvtype: str, opt_name: str, model: Model, on_kvstore: bool) -> dict[str, list[Any]]:
    """Module.init_optimizer + fit's update, model.py's KVStore calls (dense or row-sparse weights)."""
    ctxs = _contexts(mx)
    names = list(model.shapes)
    init = model.initial()
    arg_params = {n: mx.nd.array(v) for n, v in init.items()}
    if model.sparse_weight:
        arg_params[names[0]] = arg_params[names[0]].tostype("row_sparse")
        kv, on_kvstore = mx.kv.create(kvtype), True  # sparse weights always update on the store
    else:
        kv, on_kvstore = _module_kvstore(mx, kvtype, arg_params, on_kvstore)
    if on_kvstore:
        idx2name = dict(enumerate(names))
    else:
        idx2name = {i * NUM_DEVICES + k: n for i, n in enumerate(names) for k in range(NUM_DEVICES)}
    opt = mx.optimizer.create(opt_name, rescale_grad=1.0 / BATCH, param_idx2name=idx2name, **OPTIMIZERS[opt_name])
    # the executors' copies of the weights (zeros until the store fills them)
    params = [[mx.nd.zeros(model.shapes[n], ctx=c) for c in ctxs] for n in names]
    if model.sparse_weight:
        params[0] = [mx.nd.sparse.zeros("row_sparse", model.shapes[names[0]], ctx=c) for c in ctxs]
    grads = [[mx.nd.zeros(model.shapes[n], ctx=c) for c in ctxs] for n in names]
    if on_kvstore:
        kv.set_optimizer(opt)
    for i, name in enumerate(names):
        if not on_kvstore or arg_params[name].stype != "default":
            kv.init(name, arg_params[name])
        else:
            kv.broadcast(name, arg_params[name], out=params[i])
    updater = None
    if not on_kvstore:
        updater = mx.optimizer.get_updater(opt)
        for i, name in enumerate(names):  # Module's set_params put the values on the devices
            for array in params[i]:
                array[:] = init[name]
    for step in range(STEPS):
        if model.sparse_weight:  # Module.prepare: the batch's rows to every device
            kv.row_sparse_pull(names[0], params[0], row_ids=mx.nd.array(model.rows(step), dtype="int64"))
        _write_grads(mx, model, step, params, grads, names, ctxs)
        if on_kvstore:
            for i, name in enumerate(names):
                if grads[i][0].stype == "default" and params[i][0].stype == "default":
                    kv.pushpull(name, grads[i], out=params[i], priority=-i)
                else:
                    kv.push(name, grads[i], priority=-i)
                    kv.pull(name, out=params[i], priority=-i)  # row-sparse outputs: skipped
        else:
            per_device: list[list[tuple[int, Any, Any]]] = [[] for _ in ctxs]
            for i, name in enumerate(names):
                kv.pushpull(name, grads[i], priority=-i)
                for k in range(NUM_DEVICES):
                    per_device[k].append((i * NUM_DEVICES + k, grads[i][k], params[i][k]))
            for entries in per_device:
                index, grad, weight = zip(*entries)
                updater(index, grad, weight)  # type: ignore[misc]
    final: dict[str, list[Any]] = {}
    for i, name in enumerate(names):
        if model.sparse_weight and i == 0:
            final[name] = [_pull_all_rows(mx, kv, name, model.shapes[name])]
        else:
            final[name] = [a.asnumpy() for a in params[i]]
    _close(kv)
    return final


# ---------------------------------------------------------------------- gluon.Trainer
def trainer_loop(mx: Any, kvtype: str, opt_name: str, model: Model, on_kvstore: bool,
                 allreduce_then_update: bool = False) -> dict[str, list[Any]]:
    """gluon.Trainer's KVStore calls: step(), or allreduce_grads() + clipping + update()."""
    ctxs = _contexts(mx)
    names = list(model.shapes)
    init = model.initial()
    param_dict = {i: ParamInfo(n, wd_mult=0.0 if n.endswith("bias") else 1.0) for i, n in enumerate(names)}
    opt = mx.optimizer.create(opt_name, param_dict=param_dict, **OPTIMIZERS[opt_name])
    scale = opt.rescale_grad
    updaters = [mx.optimizer.get_updater(opt) for _ in ctxs]
    params = [_dense_copies(mx, init[n], ctxs) for n in names]
    if model.sparse_weight:
        params[0] = [mx.nd.sparse.zeros("row_sparse", model.shapes[names[0]], ctx=c) for c in ctxs]
        on_kvstore = True  # the Trainer forces it for row-sparse weights
    grads = [[mx.nd.zeros(model.shapes[n], ctx=c) for c in ctxs] for n in names]
    kv = mx.kv.create(kvtype)
    if on_kvstore:
        kv.set_optimizer(opt)
    for i, name in enumerate(names):  # Trainer._init_params
        if model.sparse_weight and i == 0:
            kv.init(i, mx.nd.array(init[name]).tostype("row_sparse"))
        else:
            kv.broadcast(i, params[i][0], params[i])
    for step in range(STEPS):
        opt.rescale_grad = scale / BATCH
        if model.sparse_weight:  # Parameter.row_sparse_data on each device: its own rows
            for k in range(NUM_DEVICES):
                kv.row_sparse_pull(0, out=params[0][k], row_ids=mx.nd.array(model.rows(step, k), dtype="int64"),
                                   priority=0)
        _write_grads(mx, model, step, params, grads, names, ctxs)
        for i in range(len(names)):  # Trainer._allreduce_grads
            if grads[i][0].stype != "default":
                kv.push(i, grads[i], priority=-i)
                if not model.sparse_weight:
                    target = params[i] if on_kvstore else grads[i]
                    kv.pull(i, target, priority=-i, ignore_sparse=False)
            elif on_kvstore:
                kv.pushpull(i, grads[i], out=params[i], priority=-i)
            else:
                kv.pushpull(i, grads[i], priority=-i)
        if on_kvstore:
            continue
        if allreduce_then_update:  # the user's step between allreduce_grads() and update()
            for k in range(NUM_DEVICES):
                device_grads = [grads[i][k] for i in range(len(names))]
                total = sum(float(mx.nd.norm(g).asscalar()) ** 2 for g in device_grads)
                ratio = 2.0 / (np.sqrt(total) + 1e-8)
                if ratio < 1.0:
                    for g in device_grads:
                        g *= ratio
            opt.rescale_grad = scale / BATCH
        for k, updater in enumerate(updaters):  # Trainer._update
            indices = tuple(range(len(names)))
            updater(indices, tuple(grads[i][k] for i in indices), tuple(params[i][k] for i in indices))
    final: dict[str, list[Any]] = {}
    for i, name in enumerate(names):
        if model.sparse_weight and i == 0:
            final[name] = [_pull_all_rows(mx, kv, 0, model.shapes[name])]
        else:
            final[name] = [a.asnumpy() for a in params[i]]
    _close(kv)
    return final


PATTERNS: dict[str, Callable[[Any, str, str], dict[str, list[Any]]]] = {
    "module": lambda mx, kv, o: module_loop(mx, kv, o, LINEAR, on_kvstore=True),
    "module_updater": lambda mx, kv, o: module_loop(mx, kv, o, LINEAR, on_kvstore=False),
    "module_row_sparse": lambda mx, kv, o: module_loop(mx, kv, o, EMBEDDING_SPARSE, on_kvstore=True),
    "trainer": lambda mx, kv, o: trainer_loop(mx, kv, o, LINEAR, on_kvstore=True),
    "trainer_updaters": lambda mx, kv, o: trainer_loop(mx, kv, o, LINEAR, on_kvstore=False),
    "trainer_allreduce": lambda mx, kv, o: trainer_loop(mx, kv, o, LINEAR, on_kvstore=False,
                                                        allreduce_then_update=True),
    "trainer_row_sparse": lambda mx, kv, o: trainer_loop(mx, kv, o, EMBEDDING_SPARSE, on_kvstore=True),
    "trainer_sparse_grad": lambda mx, kv, o: trainer_loop(mx, kv, o, EMBEDDING_SPARSE_GRAD, on_kvstore=False),
}


def scenario_ids() -> list[str]:
    """Every run, as ``pattern/kvtype/optimizer``."""
    return [f"{p}/{kv}/{o}" for p in PATTERNS for kv in KV_TYPES for o in OPTIMIZERS]


def run_scenario(mx: Any, scenario: str) -> dict[str, Any]:
    """One run: ``{"weights": {name: [per-device values]}}`` or ``{"error": "Type: message"}``."""
    pattern, kvtype, opt_name = scenario.split("/")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            weights = PATTERNS[pattern](mx, kvtype, opt_name)
    except Exception as error:  # noqa: BLE001 - a crash is a result to report
        return {"error": f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"}
    return {"weights": {n: [np.asarray(v, np.float64).tolist() for v in vs] for n, vs in weights.items()}}


def per_device_updaters(mx: Any) -> list[list[float]]:
    """Two ``get_updater`` of one Adam, weights on cpu(0) and cpu(1), three steps each."""
    opt = mx.optimizer.create("adam", learning_rate=0.1)
    updaters = [mx.optimizer.get_updater(opt) for _ in range(2)]
    weights = [mx.nd.ones((2,), ctx=mx.cpu(k)) for k in range(2)]
    for _ in range(3):
        for updater, weight in zip(updaters, weights):
            updater(0, mx.nd.ones((2,), ctx=weight.context), weight)
    return [w.asnumpy().astype(np.float64).tolist() for w in weights]


#: The optimizers of the row-sparse key example (adagrad's sparse update needs wd=0).
ROW_SPARSE_KEY_OPTIMIZERS: dict[str, dict[str, float]] = {**OPTIMIZERS, "adagrad": {"learning_rate": 0.1}}


def row_sparse_key(mx: Any, kvtype: str, opt_name: str) -> dict[str, Any]:
    """``set_optimizer``, ``init`` of a row-sparse table, three pushes of row-sparse
    gradients from two devices (some rows never pushed), then every row pulled."""
    shape = (6, 2)
    try:
        kv = mx.kv.create(kvtype)
        kv.set_optimizer(mx.optimizer.create(opt_name, **ROW_SPARSE_KEY_OPTIMIZERS[opt_name]))
        kv.init(0, mx.nd.array(np.arange(1, 13, dtype=np.float32).reshape(shape) / 4).tostype("row_sparse"))
        for step, rows in enumerate(([1, 3], [0, 1], [3])):
            grads = []
            for k in range(NUM_DEVICES):
                data = np.full((len(rows), 2), 0.5 * (step + 1) - k, np.float32)
                grads.append(_row_sparse(mx, np.array(rows), data, shape, mx.cpu(k)))
            kv.push(0, grads)
        table = _pull_all_rows(mx, kv, 0, shape)
        _close(kv)
    except Exception as error:  # noqa: BLE001 - a crash is a result to report
        return {"error": f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"}
    return {"weights": {"table": [np.asarray(table, np.float64).tolist()]}}


def run_all(mx: Any, only: list[str] | None = None) -> dict[str, Any]:
    """Every scenario (or ``only`` those) and the two examples, as JSON-able data."""
    ids = only or scenario_ids()
    return {
        "runs": {s: run_scenario(mx, s) for s in ids},
        "per_device_updaters": per_device_updaters(mx),
        "row_sparse_key": {f"{kv}/{o}": row_sparse_key(mx, kv, o) for kv in KV_TYPES for o in ROW_SPARSE_KEY_OPTIMIZERS},
    }


# ---------------------------------------------------------------------- comparison
def compare(got: dict[str, Any], want: dict[str, Any]) -> tuple[str, str]:
    """``(verdict, detail)`` of one run against MXNet's: same, wrong, crash, or both crash."""
    if "error" in want:
        return ("both fail", want["error"]) if "error" in got else ("mxnet fails", want["error"])
    if "error" in got:
        return "crash", got["error"]
    worst = 0.0
    for name, values in want["weights"].items():
        mine = got["weights"].get(name)
        if mine is None or len(mine) != len(values):
            return "wrong", f"{name}: {len(mine or [])} values, MXNet {len(values)}"
        for a, b in zip(mine, values):
            a, b = np.asarray(a), np.asarray(b)
            if a.shape != b.shape:
                return "wrong", f"{name}: shape {a.shape}, MXNet {b.shape}"
            if not np.allclose(a, b, rtol=RTOL, atol=ATOL):
                return "wrong", f"{name}: max |diff| {np.max(np.abs(a - b)):.3g}"
            worst = max(worst, float(np.max(np.abs(a - b), initial=0.0)))
    return "same", f"max |diff| {worst:.2g}"


def _mxnet_results(python: str, only: list[str] | None) -> dict[str, Any]:
    command = [python, str(Path(__file__).resolve()), "--framework", "mxnet", "--json", "-"]
    if only:
        command += ["--only", *only]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mxnet_training_loops: the MXNet run failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def _load_mx(framework: str) -> Any:
    if framework == "kvcli" and str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    return importlib.import_module("mxnet" if framework == "mxnet" else "kvcli.mx")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=("kvcli", "mxnet"), default="kvcli",
                        help="run the loops through kvcli.mx (default) or through MXNet (with --json)")
    parser.add_argument("--json", metavar="PATH", help="write this framework's results as JSON ('-': stdout) and stop")
    parser.add_argument("--mxnet-python", metavar="PYTHON",
                        help="compare with a live MXNet run under this interpreter, not the recorded numbers")
    parser.add_argument("--reference", type=Path, default=REFERENCE, help="recorded MXNet results (JSON)")
    parser.add_argument("--only", nargs="*", help="scenario ids pattern/kvtype/optimizer (default: all 48)")
    args = parser.parse_args(argv)
    mx = _load_mx(args.framework)
    started = time.perf_counter()
    results = run_all(mx, args.only)
    if args.json:
        results["framework"] = "mxnet " + mx.__version__ if args.framework == "mxnet" else "kvcli"
        text = json.dumps(results, indent=1)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n")
        return 0
    seconds = time.perf_counter() - started
    want = _mxnet_results(args.mxnet_python, args.only) if args.mxnet_python else json.loads(args.reference.read_text())
    counts: dict[str, int] = {}
    print(f"{'run':<40} {'verdict':<12} detail")
    for scenario, got in results["runs"].items():
        verdict, detail = compare(got, want["runs"][scenario])
        counts[verdict] = counts.get(verdict, 0) + 1
        print(f"{scenario:<40} {verdict:<12} {detail}")
    example, example_want = results["per_device_updaters"], want["per_device_updaters"]
    example_ok = np.allclose(example, example_want, rtol=RTOL, atol=ATOL)
    print(f"per_device_updaters: kvcli {np.round(example, 4).tolist()}, MXNet {np.round(example_want, 4).tolist()}"
          f" -> {'same' if example_ok else 'wrong'}")
    examples = [(k, *compare(v, want["row_sparse_key"][k])) for k, v in results["row_sparse_key"].items()]
    for key, verdict, detail in examples:
        print(f"row_sparse_key/{key:<27} {verdict:<12} {detail}")
    same_keys = sum(verdict == "same" for _, verdict, _ in examples)
    print(f"row_sparse_key: {same_keys} of {len(examples)} give MXNet's rows")
    total = len(results["runs"])
    others = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()) if k != "same")
    print(f"{counts.get('same', 0)} of {total} runs give MXNet's final weights"
          + (f"; {others}" if others else "") + f" (kvcli: {seconds:.1f} s)")
    return 0 if counts.get("same", 0) == total and example_ok and same_keys == len(examples) else 1


if __name__ == "__main__":
    sys.exit(main())
