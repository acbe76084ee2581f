"""Record a small MXNet 1.9.1 checkpoint (symbol + .params) for `kvcli viz/summary --params`.

Run with a Python that has mxnet 1.9.1:  $MXNET_PYTHON tests/data/make_mxnet_checkpoint.py
Writes into tests/data/mxnet_checkpoint/:

* small_cnn-symbol.json, small_cnn-0000.params: a conv + BatchNorm + FC net saved by
  ``mx.model.save_checkpoint`` (``arg:``/``aux:`` names), weights seeded, some zeros;
* small_cnn-bad.params: the same with fc2_bias missing, an extra array and conv1_weight of the
  wrong shape (what a user gets when a checkpoint and a symbol do not belong together);
* small_cnn_stats.json: per array, numpy's min/max/mean/std/zero share and first values
  as MXNet loads them, the truth the tests compare against.
"""

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent / "mxnet_checkpoint"
HERE.mkdir(exist_ok=True)

data = mx.sym.Variable("data")
net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv1")
net = mx.sym.BatchNorm(net, name="bn1")
net = mx.sym.Activation(net, act_type="relu", name="relu1")
net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
net = mx.sym.FullyConnected(net, num_hidden=8, name="fc1")
net = mx.sym.Activation(net, act_type="relu", name="relu2")
net = mx.sym.FullyConnected(net, num_hidden=3, name="fc2")
net = mx.sym.SoftmaxOutput(net, name="softmax")

shapes = {"data": (1, 1, 8, 8)}
arg_shapes, _, aux_shapes = net.infer_shape(**shapes)
rng = np.random.RandomState(7)
args = {}
for name, shape in zip(net.list_arguments(), arg_shapes):
    if name in ("data", "softmax_label"):
        continue
    value = rng.normal(0, 0.5, size=shape).astype("float32")
    if name.endswith("_bias"):
        value[: shape[0] // 2] = 0  # a share of exact zeros to report
    args[name] = mx.nd.array(value)
auxs = {}
for name, shape in zip(net.list_auxiliary_states(), aux_shapes):
    auxs[name] = mx.nd.array(np.ones(shape, "float32") if name.endswith("_var") else np.zeros(shape, "float32"))
mx.model.save_checkpoint(str(HERE / "small_cnn"), 0, net, args, auxs)

bad = {f"arg:{k}": v for k, v in args.items() if k != "fc2_bias"}
bad["arg:conv1_weight"] = mx.nd.ones((4, 1, 5, 5))
bad["arg:extra_weight"] = mx.nd.zeros((2, 2))
bad.update({f"aux:{k}": v for k, v in auxs.items()})
mx.nd.save(str(HERE / "small_cnn-bad.params"), bad)

loaded = mx.nd.load(str(HERE / "small_cnn-0000.params"))
stats = {}
for key, nd in loaded.items():
    a = nd.asnumpy().astype("float64")
    stats[key] = {"shape": list(a.shape), "dtype": str(nd.dtype.__name__ if hasattr(nd.dtype, "__name__") else nd.dtype),
                  "min": a.min(), "max": a.max(), "mean": a.mean(), "std": a.std(),
                  "zeros": float((a == 0).mean()), "first": a.ravel()[:8].tolist(),
                  "hist": np.histogram(a, bins=20)[0].tolist() if a.min() < a.max() else [a.size]}
(HERE / "small_cnn_stats.json").write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")
print("wrote", sorted(p.name for p in HERE.iterdir()))
