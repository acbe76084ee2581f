"""Save ResNet-50 v1, MobileNet 1.0 and a mix of the other costed operators as MXNet 1.9.1
writes them, and record MXNet's shape inference for every node, for the MAC tests.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv), from the repository root:

    $MXNET_PYTHON tests/data/make_mxnet_cost_reference.py

Writes
  tests/data/mxnet_cost/resnet50_v1-symbol.json    -- gluon model zoo ``resnet50_v1`` and
  tests/data/mxnet_cost/mobilenet1.0-symbol.json      ``mobilenet1.0`` called on a symbol
                                                       variable (untrained: no weights)
  tests/data/mxnet_cost/cost_mix-symbol.json         -- built with ``mx.sym``: grouped, depthwise,
                                                       1-d and 3-d convolutions, deconvolutions
                                                       (strided, grouped), FullyConnected with
                                                       ``flatten=False``, fused RNNs (LSTM with 2
                                                       bidirectional layers, GRU, tanh)
  tests/data/mxnet_cost_reference.json              -- per model: the inputs given and, for
                                                       every operator node, its name, op, attrs
                                                       and the shapes MXNet's ``infer_shape``
                                                       gives its inputs and visible outputs

The MACs themselves are not computed here: the test computes them from these shapes with the
papers' formulas, independently of kvcli's code, and compares them with kvcli's.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
from mxnet.gluon.model_zoo import vision

HERE = Path(__file__).resolve().parent
MADE = HERE / "mxnet_cost"


def zoo(name: str) -> mx.sym.Symbol:
    net = vision.get_model(name)
    return net(mx.sym.var("data"))


def mix() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")  # (N, 8, 16, 16)
    grouped = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=16, num_group=4, name="grouped")
    depthwise = mx.sym.Convolution(grouped, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=16,
                                   num_group=16, no_bias=True, name="depthwise")
    up = mx.sym.Deconvolution(depthwise, kernel=(4, 4), stride=(2, 2), pad=(1, 1), num_filter=8, name="up")
    upg = mx.sym.Deconvolution(up, kernel=(3, 3), num_filter=12, num_group=2, no_bias=True, name="up_grouped")
    flat = mx.sym.FullyConnected(upg, num_hidden=10, name="fc_flat")
    seq = mx.sym.Variable("seq")  # (N, 20, 6)
    conv1d = mx.sym.Convolution(seq, kernel=(3,), num_filter=5, name="conv1d")
    per_step = mx.sym.FullyConnected(conv1d, num_hidden=7, flatten=False, name="fc_per_step")
    vol = mx.sym.Variable("vol")  # (N, 2, 6, 6, 6)
    conv3d = mx.sym.Convolution(vol, kernel=(3, 3, 3), num_filter=4, name="conv3d")
    tnc = mx.sym.Variable("tnc")  # (T, N, C) = (5, N, 12)
    lstm = mx.sym.RNN(tnc, mx.sym.Variable("lstm_parameters"), mx.sym.Variable("lstm_state"),
                      mx.sym.Variable("lstm_state_cell"), mode="lstm", state_size=9, num_layers=2,
                      bidirectional=True, name="lstm")
    gru = mx.sym.RNN(lstm, mx.sym.Variable("gru_parameters"), mx.sym.Variable("gru_state"), mode="gru",
                     state_size=6, num_layers=1, name="gru")
    tanh = mx.sym.RNN(gru, mx.sym.Variable("tanh_parameters"), mx.sym.Variable("tanh_state"),
                      mode="rnn_tanh", state_size=4, num_layers=3, name="rnn_tanh")
    return mx.sym.Group([flat, per_step, conv3d, tanh])


MODELS = {
    "resnet50_v1": (lambda: zoo("resnet50_v1"), {"data": (1, 3, 224, 224)}),
    "mobilenet1.0": (lambda: zoo("mobilenet1.0"), {"data": (1, 3, 224, 224)}),
    "cost_mix": (mix, {"data": (2, 8, 16, 16), "seq": (2, 6, 20), "vol": (3, 2, 6, 6, 6), "tnc": (5, 2, 12),
                       "lstm_state": (4, 2, 9), "lstm_state_cell": (4, 2, 9), "gru_state": (1, 2, 6),
                       "tanh_state": (3, 2, 4)}),
}


def record(sym: mx.sym.Symbol, inputs: dict[str, tuple[int, ...]]) -> list[dict]:
    """Every operator node: name, op, attrs, MXNet's shapes of its inputs and visible outputs."""
    internals = sym.get_internals()
    arg_shapes, out_shapes, aux_shapes = internals.infer_shape(**inputs)
    variables = dict(zip(internals.list_arguments(), arg_shapes))
    variables.update(zip(internals.list_auxiliary_states(), aux_shapes))
    outputs: dict[str, list[list[int]]] = {}
    for j, shape in enumerate(out_shapes):  # grouped by node, in order (variables too)
        outputs.setdefault(internals[j].name, []).append(list(shape))
    nodes = json.loads(sym.tojson())["nodes"]
    done = []
    for node in nodes:
        if node["op"] == "null":
            continue
        ins = []
        for src, k, _ in node["inputs"]:
            source = nodes[src]
            ins.append(list(variables[source["name"]]) if source["op"] == "null" else outputs[source["name"]][k])
        done.append({"name": node["name"], "op": node["op"], "attrs": node.get("attrs", {}),
                     "inputs": ins, "outputs": outputs[node["name"]]})
    return done


def main() -> None:
    reference = {"mxnet": mx.__version__, "models": {}}
    for name, (make, inputs) in MODELS.items():
        sym = make()
        sym.save(str(MADE / f"{name}-symbol.json"))
        loaded = mx.sym.load(str(MADE / f"{name}-symbol.json"))
        reference["models"][name] = {"file": f"mxnet_cost/{name}-symbol.json",
                                     "inputs": {k: list(v) for k, v in inputs.items()},
                                     "nodes": record(loaded, inputs)}
        print(name, len(reference["models"][name]["nodes"]), "operator nodes")
    (HERE / "mxnet_cost_reference.json").write_text(json.dumps(reference, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
