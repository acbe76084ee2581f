"""Write the MXNet-made model files and record MXNet 1.9.1's shape inference on every model.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv), from the repository root:

    $MXNET_PYTHON tests/data/make_mxnet_model_reference.py

Writes
  tests/data/mxnet_models/*-symbol.json     -- networks saved by MXNet itself: an MLP and a
                                               LeNet built with ``mx.sym``, and three gluon
                                               model-zoo networks called on a symbol variable
                                               (untrained: no weights are downloaded)
  tests/data/mxnet_model_reference.json     -- for every file in mxnet_models/ and
                                               sample_models/: the inputs given, and MXNet's
                                               learnable-parameter total, auxiliary-state total
                                               and output shapes from ``infer_shape``

Learnable parameters = the sum of ``prod(shape)`` over the argument shapes, the given inputs
and ``*label*`` arguments excluded; auxiliary states = the sum over the auxiliary shapes
(BatchNorm moving statistics). Two sample models need a change before stock MXNet 1.9.1 loads
them, made here in memory (the files stay as published): the SSD graph names its prior and
target ops as MXNet 0.9 did (``MultiBoxPrior``; 1.x calls them ``_contrib_MultiBoxPrior``), and
the OCR graph ends in the WarpCTC plugin, absent from stock MXNet, so it is cut at WarpCTC's
input (WarpCTC has no parameters).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import mxnet as mx
from mxnet.gluon.model_zoo import vision

HERE = Path(__file__).resolve().parent
MADE = HERE / "mxnet_models"
SAMPLES = HERE / "sample_models"

#: Inputs per model file (folder/name) that make every shape known.
INPUTS: dict[str, dict[str, tuple[int, ...]]] = {
    "sample_models/mxnet_v1.3_resnet50_attrs.json": {"data": (1, 3, 224, 224)},
    "sample_models/mxnet_v1.4_insightface_fresnet_1052nodes_attrs.json": {"data": (1, 3, 112, 112)},
    "sample_models/mxnet_v0.8_vgg16_reduced_param.json": {"data": (1, 3, 300, 300)},
    "sample_models/mxnet_v1.6_gluon_lenet_mnist_attrs.json": {"data": (1, 1, 28, 28)},
    "sample_models/mxnet_v1.4_gluon_mlp_dropout_attrs.json": {"data": (1, 625)},
    "sample_models/mxnet_v0.8_mlp_batchnorm.json": {"data": (1, 200)},
    "sample_models/mxnet_v0.9_embedding_bag_ffn_attr.json": {"data": (1, 200)},
    "sample_models/mxnet_v0.9_ssd300_vgg16_attr.json": {"data": (1, 3, 300, 300), "label": (1, 58, 6)},
    "sample_models/mxnet_v0.9_ocr_lstm_warpctc_attr.json": {"data": (1, 30, 80)},
    "sample_models/mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json": {f"data/{t}": (1,) for t in range(129)},
    "mxnet_models/mlp-symbol.json": {"data": (32, 784)},
    "mxnet_models/lenet-symbol.json": {"data": (32, 1, 28, 28)},
    "mxnet_models/squeezenet1.0-symbol.json": {"data": (1, 3, 224, 224)},
    "mxnet_models/densenet121-symbol.json": {"data": (1, 3, 224, 224)},
    "mxnet_models/inceptionv3-symbol.json": {"data": (1, 3, 299, 299)},
}

#: Recurrent start states MXNet needs given before it infers anything; they are inputs, not
#: learnable (kvcli infers their shapes from the step they feed, so its tests give only INPUTS).
STATES: dict[str, dict[str, tuple[int, ...]]] = {
    "sample_models/mxnet_v0.9_ocr_lstm_warpctc_attr.json": {
        f"l{layer}_init_{kind}": (1, 128) for layer in (0, 1) for kind in ("c", "h")},
    "sample_models/mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json": {
        f"l{layer}_init_{kind}": (1, 512) for layer in (0, 1, 2) for kind in ("c", "h")},
}


def mlp() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=128, name="fc1")
    relu1 = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(relu1, num_hidden=64, name="fc2")
    relu2 = mx.sym.Activation(fc2, act_type="relu", name="relu2")
    fc3 = mx.sym.FullyConnected(relu2, num_hidden=10, name="fc3")
    return mx.sym.SoftmaxOutput(fc3, name="softmax")


def lenet() -> mx.sym.Symbol:
    with mx.name.NameManager():  # the automatic names (activation0, pooling0, ...) start at 0
        data = mx.sym.Variable("data")
        conv1 = mx.sym.Convolution(data, kernel=(5, 5), num_filter=20, name="conv1")
        pool1 = mx.sym.Pooling(mx.sym.Activation(conv1, act_type="tanh"), pool_type="max", kernel=(2, 2),
                               stride=(2, 2))
        conv2 = mx.sym.Convolution(pool1, kernel=(5, 5), num_filter=50, name="conv2")
        pool2 = mx.sym.Pooling(mx.sym.Activation(conv2, act_type="tanh"), pool_type="max", kernel=(2, 2),
                               stride=(2, 2))
        fc1 = mx.sym.FullyConnected(mx.sym.Flatten(pool2), num_hidden=500, name="fc1")
        fc2 = mx.sym.FullyConnected(mx.sym.Activation(fc1, act_type="tanh"), num_hidden=10, name="fc2")
        return mx.sym.SoftmaxOutput(fc2, name="softmax")


def write_made_models() -> None:
    MADE.mkdir(exist_ok=True)
    mlp().save(str(MADE / "mlp-symbol.json"))
    lenet().save(str(MADE / "lenet-symbol.json"))
    for name, make in [("squeezenet1.0", vision.squeezenet1_0), ("densenet121", vision.densenet121),
                       ("inceptionv3", vision.inception_v3)]:
        make()(mx.sym.Variable("data")).save(str(MADE / f"{name}-symbol.json"))


def loadable(key: str) -> mx.sym.Symbol:
    """The model as stock MXNet 1.9.1 can load it (see the module docstring)."""
    text = (HERE / key).read_text(encoding="utf-8")
    if "ssd300" in key:
        text = text.replace('"MultiBoxPrior"', '"_contrib_MultiBoxPrior"')
        text = text.replace('"MultiBoxTarget"', '"_contrib_MultiBoxTarget"')
    if "warpctc" in key:
        doc = json.loads(text)
        ctc = next(n for n in doc["nodes"] if n["op"] == "WarpCTC")
        below = doc["nodes"][ctc["inputs"][0][0]]["name"]
        doc["nodes"] = [n for n in doc["nodes"] if n["op"] != "WarpCTC"]  # load refuses an unknown op
        doc["heads"] = [ctc["inputs"][0]]
        doc["arg_nodes"] = [i for i in doc["arg_nodes"] if i < len(doc["nodes"])]
        symbol = mx.sym.load_json(json.dumps(doc))
        return symbol.get_internals()[f"{below}_output"]
    return mx.sym.load_json(text)


def record(key: str) -> dict:
    inputs = INPUTS[key]
    given = {**inputs, **STATES.get(key, {})}
    symbol = loadable(key)
    args, outputs, aux = symbol.infer_shape(**given)
    learnable = sum(
        math.prod(shape)
        for name, shape in zip(symbol.list_arguments(), args)
        if name not in given and "label" not in name
    )
    return {
        "inputs": {name: list(shape) for name, shape in inputs.items()},
        "states": {name: list(shape) for name, shape in STATES.get(key, {}).items()},
        "learnable": learnable,
        "aux": sum(math.prod(shape) for shape in aux),
        "outputs": [list(shape) for shape in outputs],
    }


def main() -> None:
    write_made_models()
    reference = {"mxnet_version": mx.__version__, "models": {key: record(key) for key in INPUTS}}
    out = HERE / "mxnet_model_reference.json"
    out.write_text(json.dumps(reference, indent=1) + "\n", encoding="utf-8")
    for key, entry in reference["models"].items():
        print(f"{key}: {entry['learnable']:,} learnable, {entry['aux']:,} aux, first output {entry['outputs'][0]}")


if __name__ == "__main__":
    main()
