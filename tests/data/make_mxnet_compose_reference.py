"""Record what MXNet 1.9.1 writes for one-operator symbols built with ``mx.sym``.

Run with a Python that has mxnet 1.9.1:  $MXNET_PYTHON tests/data/make_mxnet_compose_reference.py
Writes tests/data/mxnet_compose_reference.json next to this file: for each case (an operator,
its keyword arguments, the inputs given as named variables) MXNet's ``tojson()`` and
``list_outputs()``. tests/symbol/test_mxnet_compose.py builds the same cases with kvcli.mx.sym.
It pins two things MXNet does while composing: the ``__init__`` it puts on some input
variables (BatchNorm's moving statistics, PReLU's gamma), given or created, and how many
outputs each node has (``node_row_ptr``), hidden ones included.
"""

import json
from pathlib import Path

import mxnet as mx

CONV = {"kernel": [3, 3], "num_filter": 4}
CASES = [
    # (op, kwargs, inputs given as variables: {slot: variable name}, number of positional data)
    ("Activation", {"act_type": "relu"}, {}, 1),
    ("BatchNorm", {}, {}, 1),
    ("BatchNorm", {"fix_gamma": False}, {"moving_mean": "mm"}, 1),
    ("BatchNorm", {"output_mean_var": True}, {"moving_var": "mv", "gamma": "g"}, 1),
    ("BlockGrad", {}, {}, 1),
    ("Cast", {"dtype": "float16"}, {}, 1),
    ("Concat", {"dim": 1}, {}, 2),
    ("Convolution", CONV, {}, 1),
    ("Convolution", {**CONV, "no_bias": True}, {"weight": "w"}, 1),
    ("Deconvolution", CONV, {}, 1),
    ("Dropout", {"p": 0.5}, {}, 1),
    ("ElementWiseSum", {}, {}, 3),
    ("Embedding", {"input_dim": 10, "output_dim": 4}, {}, 1),
    ("Flatten", {}, {}, 1),
    ("FullyConnected", {"num_hidden": 3}, {}, 1),
    ("InstanceNorm", {}, {}, 1),
    ("InstanceNorm", {}, {"gamma": "g"}, 1),
    ("L2Normalization", {}, {}, 1),
    ("L2Normalization", {"mode": "channel"}, {}, 1),
    ("LRN", {"nsize": 3}, {}, 1),
    ("LayerNorm", {}, {}, 1),
    ("LayerNorm", {"output_mean_var": True}, {}, 1),
    ("LeakyReLU", {}, {}, 1),
    ("LeakyReLU", {"act_type": "elu"}, {}, 1),
    ("LeakyReLU", {"act_type": "prelu"}, {}, 1),
    ("LeakyReLU", {"act_type": "prelu"}, {"gamma": "g"}, 1),
    ("LeakyReLU", {"act_type": "rrelu"}, {}, 1),
    ("LeakyReLU", {"act_type": "selu"}, {}, 1),
    ("LeakyReLU", {"act_type": "gelu"}, {}, 1),
    ("LinearRegressionOutput", {}, {}, 1),
    ("LogisticRegressionOutput", {}, {}, 1),
    ("MAERegressionOutput", {}, {}, 1),
    ("MakeLoss", {}, {}, 1),
    ("Pooling", {"kernel": [2, 2], "pool_type": "max"}, {}, 1),
    ("Pooling", {"kernel": [2, 2], "pool_type": "avg"}, {}, 1),
    ("Pooling", {"kernel": [2, 2], "pool_type": "max", "pooling_convention": "full"}, {}, 1),
    ("Pooling", {"kernel": [1, 1], "pool_type": "max", "global_pool": True}, {}, 1),
    ("Pooling", {"kernel": [2], "pool_type": "max", "layout": "NWC"}, {}, 1),
    ("RNN", {"state_size": 4, "num_layers": 1, "mode": "lstm"}, {"parameters": "p", "state": "h", "state_cell": "c"}, 1),
    ("RNN", {"state_size": 4, "num_layers": 2, "mode": "gru", "state_outputs": True}, {"parameters": "p", "state": "h"}, 1),
    ("RNN", {"state_size": 4, "num_layers": 1, "mode": "lstm", "state_outputs": True},
     {"parameters": "p", "state": "h", "state_cell": "c"}, 1),
    ("Reshape", {"shape": [-1]}, {}, 1),
    ("SVMOutput", {}, {}, 1),
    ("SliceChannel", {"num_outputs": 3}, {}, 1),
    ("Softmax", {}, {}, 1),
    ("SoftmaxActivation", {}, {}, 1),
    ("SoftmaxOutput", {}, {}, 1),
    ("SpatialTransformer", {"target_shape": [4, 4], "transform_type": "affine", "sampler_type": "bilinear"},
     {"loc": "loc"}, 1),
    ("SwapAxis", {"dim1": 0, "dim2": 1}, {}, 1),
    ("broadcast_add", {}, {}, 2),
    ("broadcast_maximum", {}, {}, 2),
    ("clip", {"a_min": 0.0, "a_max": 1.0}, {}, 1),
    ("elemwise_mul", {}, {}, 2),
    ("expand_dims", {"axis": 1}, {}, 1),
    ("log_softmax", {}, {}, 1),
    ("norm", {}, {}, 1),
    ("smooth_l1", {"scalar": 1.0}, {}, 1),
    ("softmax", {}, {}, 1),
    ("stack", {"axis": 0}, {}, 2),
    ("sum", {"axis": 1}, {}, 1),
    ("transpose", {}, {}, 1),
]


def build(sym, op, kwargs, given, n_data):
    data = [sym.Variable(f"data{i}") for i in range(n_data)]
    inputs = {slot: sym.Variable(var) for slot, var in given.items()}
    args = {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}  # tuples, as users write
    return getattr(sym, op)(*data, **inputs, **args, name="n")


out = []
for op, kwargs, given, n_data in CASES:
    s = build(mx.sym, op, kwargs, given, n_data)
    out.append({"op": op, "kwargs": kwargs, "given": given, "n_data": n_data,
                "json": json.loads(s.tojson()), "outputs": s.list_outputs()})
path = Path(__file__).with_name("mxnet_compose_reference.json")
path.write_text(json.dumps(out, indent=0) + "\n")
print(len(out), "cases,", path.stat().st_size, "bytes")
