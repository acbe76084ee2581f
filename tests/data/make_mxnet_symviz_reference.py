"""Record MXNet 1.9.1's ``mx.viz`` and ``mx.sym`` behaviour for kvcli's exactness tests.

Run with a Python that has mxnet 1.9.1 and the graphviz package:
    python tests/data/make_mxnet_symviz_reference.py
Writes tests/data/mxnet_symviz_reference.json next to this file. Every symbol is stored as
MXNet's own JSON (``tojson``), so the tests load exactly the graph MXNet drew; then come
``plot_network(...).source`` for several argument combinations, ``print_summary`` standard
output, and ``infer_shape_partial`` / ``infer_type`` / ``get_internals`` results.
"""

import contextlib
import io
import json
import warnings
from pathlib import Path

import mxnet as mx
import numpy as np
from mxnet import gluon

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent.parent / "sample_graphs"
sym = mx.sym


def lenet():
    data = sym.Variable("data")
    net = sym.Convolution(data, kernel=(5, 5), num_filter=20, name="conv1")
    net = sym.Activation(net, act_type="tanh", name="tanh1")
    net = sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool1")
    net = sym.Convolution(net, kernel=(5, 5), num_filter=50, name="conv2")
    net = sym.BatchNorm(net, name="bn2")
    net = sym.Activation(net, act_type="relu", name="relu2")
    net = sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool2")
    net = sym.Flatten(net, name="flatten")
    net = sym.FullyConnected(net, num_hidden=500, name="fc1")
    net = sym.Activation(net, act_type="tanh", name="tanh3")
    net = sym.FullyConnected(net, num_hidden=10, name="fc2")
    return sym.SoftmaxOutput(net, name="softmax")


def palette():
    """Every op whose colour or label is in question: sigmoid/tanh/LRN/softmax/SoftmaxOutput ..."""
    data = sym.Variable("data")
    a = sym.sigmoid(data, name="sig")
    b = sym.tanh(a, name="th")
    c = sym.relu(b, name="rl")
    d = sym.LRN(c, nsize=3, name="lrn")
    e = sym.Deconvolution(d, kernel=(2, 2), stride=(2, 2), num_filter=3, name="deconv")
    f = sym.L2Normalization(e, name="l2n")
    g = sym.LeakyReLU(f, act_type="leaky", name="leaky")
    h = sym.Pooling(g, pool_type="avg", kernel=(3, 3), global_pool=True, name="gpool")
    i = sym.Pooling(g, pool_type="max", global_pool=True, name="gpool_nokernel")
    j = sym.Concat(h, i, dim=1, name="cat")
    k = sym.Flatten(j, name="flat")
    m = sym.softmax(k, name="sm")
    n = sym.Dropout(m, p=0.5, name="drop")
    return sym.SoftmaxOutput(n, name="out")


def repeated():
    """Two nodes named "same": MXNet's drawing joins them (its warning says so)."""
    a = sym.Variable("a")
    x = sym.Activation(a, act_type="relu", name="same")
    y = sym.Activation(a, act_type="tanh", name="same")
    return sym.FullyConnected(x + y, num_hidden=2, name="fc")


def split():
    """A multi-output node read twice: MXNet labels both edges with its last output's shape."""
    data = sym.Variable("data")
    parts = sym.SliceChannel(data, num_outputs=3, axis=1, name="split")
    return sym.Concat(parts[0], sym.FullyConnected(parts[1], num_hidden=4, name="fc"), dim=1, name="cat")


def fc_after_pool():
    """MXNet's print_summary miscounts this FullyConnected (channels only, not C*H*W)."""
    data = sym.Variable("data")
    net = sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv")
    net = sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool")
    return sym.FullyConnected(net, num_hidden=10, name="fc")


def regression():
    """The seed's network: LinearRegressionOutput's label is inferred as (32,) for (32, 1)."""
    data = sym.Variable("data")
    fc = sym.FullyConnected(data, num_hidden=1, name="fc")
    return sym.LinearRegressionOutput(fc, name="lro")


def spatial_transformer():
    data = sym.Variable("data")
    loc = sym.FullyConnected(sym.Flatten(data), num_hidden=6, name="loc")
    return sym.SpatialTransformer(data, loc, target_shape=(10, 12), transform_type="affine",
                                  sampler_type="bilinear", name="st")


def stack():
    a, b = sym.Variable("a"), sym.Variable("b")
    return sym.stack(a, b, axis=1, name="stk")


class Unrolled(gluon.HybridBlock):
    """A gluon LSTMCell unrolled with merge_outputs=True: the export has a ``stack`` node."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.cell = gluon.rnn.LSTMCell(20, input_size=8)
            self.out = gluon.nn.Dense(5, flatten=False)  # its weight shape comes through the stack

    def hybrid_forward(self, F, x):
        outs, _ = self.cell.unroll(3, x, layout="NTC", merge_outputs=True)
        return self.out(outs)


class Fused(gluon.HybridBlock):
    """A gluon fused LSTM: the export concatenates its weights with ``_rnn_param_concat``.
    Without ``input_size`` the first weight is exported as ``(64, 0)``."""

    def __init__(self, input_size=8, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.rnn = gluon.rnn.LSTM(16, num_layers=2, input_size=input_size)

    def hybrid_forward(self, F, x):
        return self.rnn(x)


def export(block, shape, prefix):
    block.initialize()
    block.hybridize()
    block(mx.nd.zeros(shape))
    block.export(str(HERE / prefix))
    (HERE / f"{prefix}-0000.params").unlink()
    loaded = sym.load(str(HERE / f"{prefix}-symbol.json"))
    return loaded


def params_total(symbol, **shapes):
    """Sum of infer_shape's argument sizes, inputs (the given names) and labels excluded."""
    args, _, _ = symbol.infer_shape(**shapes)
    return int(sum(np.prod(s) for n, s in zip(symbol.list_arguments(), args)
                   if n not in shapes and "label" not in n))


def source(symbol, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mx.viz.plot_network(symbol, **kwargs).source


def summary(symbol, shape):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        mx.viz.print_summary(symbol, shape=shape)
    return out.getvalue()


def shapes(result):
    return [None if r is None else [list(s) for s in r] for r in result]


def types(result):
    return [None if r is None else [None if t is None else np.dtype(t).name for t in r] for r in result]


symbols = {
    "lenet": lenet(),
    "palette": palette(),
    "repeated": repeated(),
    "split": split(),
    "fc_after_pool": fc_after_pool(),
    "regression": regression(),
    "mini_resnet": sym.load(str(SAMPLES / "mini_resnet.json")),
    "mlp": sym.load(str(SAMPLES / "mlp.json")),
}
PLOTS = [
    ("lenet", {}),
    ("lenet", {"shape": {"data": (2, 1, 28, 28)}}),
    ("lenet", {"shape": {"data": (2, 1, 28, 28)}, "hide_weights": False}),
    ("lenet", {"hide_weights": False}),
    ("lenet", {"node_attrs": {"shape": "oval", "fixedsize": "false"}, "title": "net"}),
    ("lenet", {"shape": {"data": (2, 1, 28, 28)}, "dtype": {"data": "float32"}}),
    ("palette", {}),
    ("palette", {"shape": {"data": (1, 3, 8, 8)}}),
    ("repeated", {}),
    ("repeated", {"shape": {"a": (3, 4)}}),
    ("split", {"shape": {"data": (2, 6)}}),
    ("mini_resnet", {"shape": {"data": (1, 3, 32, 32)}}),
    ("mini_resnet", {"hide_weights": False, "node_attrs": {"fontsize": "9"}}),
    ("mlp", {"shape": {"data": (4, 784)}, "title": "mlp"}),
]
SUMMARIES = [
    ("lenet", {"data": (2, 1, 28, 28)}),
    ("mini_resnet", {"data": (1, 3, 32, 32)}),
    ("mlp", {"data": (4, 784)}),
    ("split", {"data": (2, 6)}),
    ("fc_after_pool", {"data": (1, 3, 10, 10)}),
]

out = {"symbols": {k: v.tojson() for k, v in symbols.items()}, "plots": [], "summaries": []}
for name, kwargs in PLOTS:
    out["plots"].append({"symbol": name, "kwargs": kwargs, "source": source(symbols[name], **kwargs)})
for name, shape in SUMMARIES:
    out["summaries"].append({"symbol": name, "shape": shape, "stdout": summary(symbols[name], shape),
                             "params": params_total(symbols[name], **shape)})

fc = sym.FullyConnected(sym.Variable("data"), num_hidden=10, name="fc1")
conv = sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=8, name="c")
out["infer_shape_partial"] = [
    {"symbol": fc.tojson(), "kwargs": {}, "result": shapes(fc.infer_shape_partial())},
    {"symbol": fc.tojson(), "kwargs": {"data": (0, 5)}, "result": shapes(fc.infer_shape_partial(data=(0, 5)))},
    {"symbol": conv.tojson(), "kwargs": {"data": (0, 3, 0, 0)},
     "result": shapes(conv.infer_shape_partial(data=(0, 3, 0, 0)))},
    {"symbol": conv.tojson(), "kwargs": {}, "result": shapes(conv.infer_shape_partial())},
    {"symbol": conv.tojson(), "kwargs": {"data": (0, 3, 9, 9)},
     "result": shapes(conv.infer_shape_partial(data=(0, 3, 9, 9)))},
]
lro = symbols["regression"]
out["regression"] = shapes(lro.infer_shape(data=(32, 5)))
out["infer_type"] = [
    {"symbol": lro.tojson(), "kwargs": {"data": "float32"}, "result": types(lro.infer_type(data="float32"))},
    {"symbol": lro.tojson(), "kwargs": {"data": "float16"}, "result": types(lro.infer_type(data="float16"))},
    {"symbol": lro.tojson(), "kwargs": {}, "result": types(lro.infer_type())},
]
cast = sym.SoftmaxOutput(sym.FullyConnected(sym.Cast(sym.Variable("data"), dtype="float32"), num_hidden=4,
                                            name="fc1"), name="softmax")
out["infer_type_partial"] = {"symbol": cast.tojson(), "result": types(cast.infer_type_partial()),
                             "float16": types(cast.infer_type(data="float16"))}
hinted = sym.Convolution(sym.cast(sym.Variable("data", shape=(1, 0, 0, 0)), dtype="float16"),
                         weight=sym.cast(sym.Variable("weight"), dtype="float16"), pad=(3, 3), num_filter=64,
                         stride=(2, 2), no_bias=True, kernel=(7, 7), name="conv")
out["partial_hint"] = {"symbol": hinted.tojson(), "result": shapes(hinted.infer_shape_partial())}
try:  # an incomplete shape dict: MXNet's print_summary refuses it
    mx.viz.print_summary(sym.FullyConnected(sym.Variable("a") + sym.Variable("b"), num_hidden=2, name="fc"), shape={})
except ValueError as e:
    out["summary_incomplete"] = {"type": type(e).__name__, "text": str(e)}
bn = sym.BatchNorm(sym.Variable("data"), name="bn")
parts = sym.SliceChannel(sym.Variable("data"), num_outputs=3, name="sp")
out["repr"] = {
    "fc_internals": repr(fc.get_internals()),
    "lro_internals": repr(lro.get_internals()),
    "bn_internals": repr(bn.get_internals()),
    "split": repr(parts),
    "split_internals": repr(parts.get_internals()),
    "group": repr(sym.Group([fc, sym.Variable("data")])),
    "fc": repr(fc),
}
# composition by call: fc3(fc3_data=x) puts x where the variable fc3_data was
fc3 = sym.FullyConnected(sym.Variable("fc3_data"), num_hidden=3, name="fc3")
composed = fc3(fc3_data=sym.Variable("x"))
out["compose"] = {"arguments": composed.list_arguments(), "repr": repr(composed),
                  "outputs": composed.list_outputs(),
                  "shapes": shapes(composed.infer_shape(x=(2, 7)))}
st = spatial_transformer()
out["spatial_transformer"] = {"symbol": st.tojson(), "shapes": shapes(st.infer_shape(data=(2, 3, 20, 24))),
                              "arguments": st.list_arguments()}
stk = stack()
out["stack"] = {"symbol": stk.tojson(), "shapes": shapes(stk.infer_shape(a=(2, 5), b=(2, 5)))}
unrolled = export(Unrolled(prefix="unroll_"), (2, 3, 8), "mxnet_gluon_unroll")
fused = export(Fused(prefix="fused_"), (3, 2, 8), "mxnet_gluon_fused")
fused0 = export(Fused(input_size=0, prefix="fusedin_"), (3, 2, 8), "mxnet_gluon_fused_no_input_size")
out["gluon_unroll"] = {"file": "mxnet_gluon_unroll-symbol.json", "shape": {"data": [2, 3, 8]},
                       "params": params_total(unrolled, data=(2, 3, 8)),
                       "outputs": shapes(unrolled.infer_shape(data=(2, 3, 8)))[1]}
out["gluon_fused"] = {"file": "mxnet_gluon_fused-symbol.json", "shape": {"data": [3, 2, 8]},
                      "params": params_total(fused, data=(3, 2, 8)),
                      "outputs": shapes(fused.infer_shape(data=(3, 2, 8)))[1]}
out["gluon_fused_no_input_size"] = {
    "file": "mxnet_gluon_fused_no_input_size-symbol.json", "shape": {"data": [3, 2, 8]},
    "params": params_total(fused0, data=(3, 2, 8)), "outputs": shapes(fused0.infer_shape(data=(3, 2, 8)))[1]}
# The real models of tests/data/sample_models: only the SHA-256 of MXNet's drawing is kept
# (and the summary table whole); tests/symbol/test_mxnet_exact.py compares them.
SHARED_CASES = {
    "mxnet_v1.3_resnet50_attrs.json": {"data": (2, 3, 224, 224)},
    "mxnet_v1.4_insightface_fresnet_1052nodes_attrs.json": {"data": (1, 3, 112, 112)},
    "mxnet_v1.6_gluon_lenet_mnist_attrs.json": {"data": (1, 1, 28, 28)},
    "mxnet_v0.8_vgg16_reduced_param.json": {"data": (1, 3, 300, 300)},
    "mxnet_v0.8_mlp_batchnorm.json": {"data": (5, 784)},
    "mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json": None,
    "mxnet_v0.9_embedding_bag_ffn_attr.json": None,
    "mxnet_v1.4_gluon_mlp_dropout_attrs.json": None,
}
shared = HERE / "sample_models"
if shared.is_dir():
    import hashlib

    def digest(text):
        return hashlib.sha256(text.rstrip("\n").encode()).hexdigest()

    out["shared_models"] = {}
    for f, shape in SHARED_CASES.items():
        s = sym.load(str(shared / f))
        entry = {"shape": shape, "plot": digest(source(s, shape=shape)),
                 "plot_weights": digest(source(s, shape=shape, hide_weights=False))}
        if shape is not None:
            entry["summary"] = summary(s, shape)  # kept whole: the miscounts are compared line by line
        out["shared_models"][f] = entry
(HERE / "mxnet_symviz_reference.json").write_text(json.dumps(out, indent=1) + "\n")
print({k: (v if k in ("gluon_unroll", "gluon_fused", "regression") else "...") for k, v in out.items()})
