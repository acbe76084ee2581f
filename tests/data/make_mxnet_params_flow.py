"""Record MXNet 1.9.1 checkpoints and a training step on one, for ``kvcli load-params`` /
``save-params`` (tests/cli/test_params_flow.py, tests/session/test_params_session.py).

Run with a Python that has mxnet 1.9.1 (never kvcli's venv)::

    $MXNET_PYTHON tests/data/make_mxnet_params_flow.py            # (re)write the files below
    $MXNET_PYTHON tests/data/make_mxnet_params_flow.py --check F  # MXNet reads a kvcli-written F

Writes into tests/data/mxnet_params_flow/ (seeded random numbers, no third-party data):

* ``gluon-symbol.json``, ``gluon-0000.params``: a small Gluon network (Conv2D, BatchNorm,
  Dense) exported with ``HybridBlock.export`` (``arg:``/``aux:`` names with Gluon's prefixes);
* ``gluon_parameters.params``: the same network's ``save_parameters`` (``0.weight``, ...);
* ``dtypes.params``: ``nd.save`` of a dict holding every dtype MXNet saves, small arrays and
  arrays over 4 KiB, with ``arg:``/``aux:`` names;
* the training flow on ``../mxnet_checkpoint/small_cnn-0000.params`` (written by
  make_mxnet_checkpoint.py): ``mx.model.load_checkpoint``, a ``local`` KVStore holding every
  array under its file name (``arg:fc1_weight``), ``set_optimizer(SGD(learning_rate=0.1,
  momentum=0.9))``, two pushes of ``grad1.npy`` then ``grad2.npy`` to ``arg:fc1_weight``, a
  pull, and ``mx.model.save_checkpoint`` of the result: ``trained-0001.params``;
  ``flow.json`` records the optimizer, the key, and the pulled weight.

With ``--check FILE``, MXNet loads a ``.params`` file kvcli wrote (``mx.nd.load`` and
``mx.model.load_checkpoint``) and prints its names, dtypes, shapes and a hash of its bytes per
array: the check run by hand that MXNet reads what kvcli writes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "mxnet_params_flow"
CHECKPOINT = HERE / "mxnet_checkpoint" / "small_cnn"
KEY = "arg:fc1_weight"
LR, MOMENTUM = 0.1, 0.9


def gluon_files() -> None:
    from mxnet import gluon

    mx.random.seed(11)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, kernel_size=3), gluon.nn.BatchNorm(), gluon.nn.Dense(5))
    net.initialize(mx.init.Normal(0.5))
    net.hybridize()
    net(mx.nd.ones((1, 2, 6, 6)))  # shapes, and moving statistics that are not all 0 and 1
    with mx.autograd.record():
        net(mx.nd.random.normal(shape=(3, 2, 6, 6)))
    net.export(str(OUT / "gluon"), 0)
    net.save_parameters(str(OUT / "gluon_parameters.params"))


def dtypes_file() -> None:
    rng = np.random.RandomState(5)
    arrays = {
        "arg:f32": rng.normal(size=(3, 4)).astype("float32"),
        "arg:f32_big": rng.normal(size=(40, 30)).astype("float32"),  # 4,800 bytes: a file in a session
        "arg:f64": rng.normal(size=(5,)).astype("float64"),
        "arg:f16": rng.normal(size=(2, 3)).astype("float16"),
        "aux:u8": rng.randint(0, 255, size=(7,)).astype("uint8"),
        "aux:i8": rng.randint(-128, 127, size=(2, 2)).astype("int8"),
        "aux:i32": rng.randint(-(1 << 30), 1 << 30, size=(3,)).astype("int32"),
        "aux:i64": rng.randint(-(1 << 62), 1 << 62, size=(1100,), dtype=np.int64),  # 8,800 bytes
        "aux:flag": rng.randint(0, 2, size=(4,)).astype("bool"),
    }
    mx.nd.save(str(OUT / "dtypes.params"), {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()})


def flow() -> None:
    rng = np.random.RandomState(23)
    sym, args, auxs = mx.model.load_checkpoint(str(CHECKPOINT), 0)
    kv = mx.kv.create("local")
    names = [f"arg:{k}" for k in args] + [f"aux:{k}" for k in auxs]
    values = list(args.values()) + list(auxs.values())
    kv.init(names, values)
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=LR, momentum=MOMENTUM))
    shape = args[KEY[4:]].shape
    grads = [rng.normal(0, 1, size=shape).astype("float32") for _ in range(2)]
    for i, grad in enumerate(grads, 1):
        np.save(OUT / f"grad{i}.npy", grad)
        kv.push(KEY, mx.nd.array(grad))
    out = mx.nd.zeros(shape)
    kv.pull(KEY, out=out)
    args[KEY[4:]] = out
    mx.model.save_checkpoint(str(OUT / "trained"), 1, sym, args, auxs)
    (OUT / "trained-symbol.json").unlink()  # the symbol is small_cnn's, beside the checkpoint
    record = {"optimizer": f"sgd:lr={LR},momentum={MOMENTUM}", "key": KEY, "shape": list(shape),
              "pulled": out.asnumpy().astype("float64").tolist(), "order": names}
    (OUT / "flow.json").write_text(json.dumps(record, indent=1) + "\n")


def check(path: str) -> None:
    """MXNet reads ``path`` (a file kvcli wrote): ``nd.load`` and ``load_checkpoint``."""
    loaded = mx.nd.load(path)
    for name, array in loaded.items():
        digest = hashlib.sha256(array.asnumpy().tobytes()).hexdigest()[:16]
        print(f"nd.load: {name} {array.dtype.__name__} {array.shape} {digest}")
    target = Path(path)
    prefix = target.parent / "mxnet-check"
    shutil.copy(path, f"{prefix}-0000.params")
    shutil.copy(f"{CHECKPOINT}-symbol.json", f"{prefix}-symbol.json")
    _, args, auxs = mx.model.load_checkpoint(str(prefix), 0)
    print(f"load_checkpoint: {len(args)} arg_params, {len(auxs)} aux_params:", sorted(args), sorted(auxs))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
        sys.exit(0)
    OUT.mkdir(exist_ok=True)
    gluon_files()
    dtypes_file()
    flow()
    print("wrote", sorted(p.name for p in OUT.iterdir()))
