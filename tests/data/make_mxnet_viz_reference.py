"""Record MXNet 1.9.1's plot_network behaviour for kvcli's viz tests.

Run with a Python that has mxnet 1.9.1:  $MXNET_PYTHON tests/data/make_mxnet_viz_reference.py
Writes tests/data/mxnet_viz_reference.json next to this file.
"""

import json
import warnings
from pathlib import Path

import mxnet as mx


def net():
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    return fc + mx.sym.zeros(shape=(0, 4))


def error(fn):
    try:
        fn()
    except Exception as e:  # record the class and the first line, as the user sees it
        lines = [line for line in str(e).splitlines() if line.strip()]
        return {"type": type(e).__name__, "text": str(e), "first": lines[0] if lines else ""}
    return None


out = {}
sym = net()
args, outs, _ = sym.infer_shape(data=(5, 7))
out["zeros_begin_state"] = {"args": dict(zip(sym.list_arguments(), args)), "outputs": outs}
ones = mx.sym.ones(shape=(2, 3)) * 2
out["ones"] = ones.infer_shape()[1]
full = mx.sym.full(shape=(3, 1), val=7.0)
out["full"] = full.infer_shape()[1]
zl = mx.sym.zeros_like(mx.sym.Variable("x"))
out["zeros_like"] = zl.infer_shape(x=(4, 2))[1]
out["misspelled"] = error(lambda: mx.viz.plot_network(sym, shape={"dta": (5, 7)}))
out["empty"] = error(lambda: mx.viz.plot_network(sym, shape={}))
a = mx.sym.Variable("a")
rep = mx.sym.Activation(a, act_type="relu", name="same") + mx.sym.Activation(a, act_type="tanh", name="same")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    mx.viz.plot_network(rep)
out["repeated"] = [{"category": w.category.__name__, "message": str(w.message)} for w in caught]
dot = mx.viz.plot_network(mx.sym.Cast(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc"),
                                      dtype="float16", name="half"),
                          shape={"data": (2, 5)}, dtype={"data": "float32"})
out["dtype_edges"] = sorted(line.strip() for line in dot.source.splitlines() if "->" in line)
Path(__file__).with_name("mxnet_viz_reference.json").write_text(json.dumps(out, indent=1, default=list) + "\n")
print(json.dumps(out, indent=1, default=list))


def lstm_lm():
    """An LSTM language model whose begin states are MXNet's `_zeros` (shape (0, H))."""
    data = mx.sym.Variable("data")
    embed = mx.sym.Embedding(data, input_dim=50, output_dim=16, name="embed")
    steps = mx.sym.SliceChannel(embed, num_outputs=3, axis=1, squeeze_axis=True, name="steps")
    cell = mx.rnn.LSTMCell(num_hidden=24, prefix="lstm_")
    outputs, _ = cell.unroll(3, inputs=[steps[t] for t in range(3)], merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, 24)), num_hidden=50, name="pred")
    return mx.sym.SoftmaxOutput(pred, name="softmax")


lm = lstm_lm()
lm_args, _, lm_aux = lm.infer_shape(data=(4, 3))
zeros = [n["name"] for n in json.loads(lm.tojson())["nodes"] if n["op"] == "_zeros"]
learn = [(n, s) for n, s in zip(lm.list_arguments(), lm_args) if n != "data" and "label" not in n]
total = 0
for _, s in learn:
    size = 1
    for d in s:
        size *= d
    total += size
Path(__file__).with_name("mxnet_lstm_lm_zeros-symbol.json").write_text(lm.tojson())
out["lstm_lm"] = {"zeros_nodes": zeros, "params": total, "aux": len(lm_aux)}
Path(__file__).with_name("mxnet_viz_reference.json").write_text(json.dumps(out, indent=1, default=list) + "\n")
print(out["lstm_lm"])
