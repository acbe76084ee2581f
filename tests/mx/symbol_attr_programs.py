"""Symbols with MXNet's attributes (``attr={'lr_mult': ...}`` on an operator, ``Variable(...,
lr_mult=)``, ``mx.AttrScope``, ``_set_attr``) and with operators whose JSON has hidden outputs
(Pooling, LRN), built the same way on real MXNet 1.9.1 and on ``kvcli.mx``.

``tests/data/make_mxnet_symbol_attr_reference.py`` records MXNet's JSON, attributes and the
learning rates an optimizer takes from them, and loads kvcli's JSON in MXNet;
``tests/mx/test_symbol_attrs.py`` compares kvcli with that record. Every node is named, so
MXNet's process-wide automatic names play no part. kvcli's code, nothing of MXNet's copied.
"""

from __future__ import annotations

import json
from typing import Any, Callable


def dense_with_multipliers(mx: Any) -> Any:
    """``attr=`` on an operator, ``Variable(lr_mult=, wd_mult=)``, ``Variable(attr=)`` and an
    ``AttrScope`` (with ``ctx_group``) around an operator."""
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=8, name="fc1", attr={"lr_mult": "0.01", "wd_mult": "0.2"})
    weight = mx.sym.Variable("fc2_weight", lr_mult=0.5, wd_mult=0.1)
    fc2 = mx.sym.FullyConnected(fc1, weight=weight, num_hidden=6, name="fc2")
    with mx.AttrScope(lr_mult="0.3", ctx_group="dev1"):
        fc3 = mx.sym.FullyConnected(fc2, num_hidden=4, name="fc3")
        act = mx.sym.Activation(fc3, act_type="relu", name="relu3", attr={"lr_mult": "2"})
    label = mx.sym.Variable("label", attr={"lr_mult": "3"})
    return mx.sym.SoftmaxOutput(act, label=label, name="softmax")


def convolution_net(mx: Any) -> Any:
    """Convolution, BatchNorm (its auxiliary states too), pooling and LRN with attributes,
    nested scopes (the inner adds to the outer; ``attr=`` wins over both)."""
    data = mx.sym.Variable("data")
    with mx.AttrScope(wd_mult="0.5"):
        conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv1", attr={"lr_mult": "0.1"})
        with mx.AttrScope(lr_mult="0.7", ctx_group="g1"):
            bn = mx.sym.BatchNorm(conv, name="bn1")
            norm = mx.sym.LRN(bn, nsize=3, name="lrn1")
            conv2 = mx.sym.Convolution(norm, kernel=(1, 1), num_filter=2, no_bias=True, name="conv2",
                                       attr={"wd_mult": "0"})
    pool = mx.sym.Pooling(conv2, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    flat = mx.sym.Flatten(pool, name="flat")
    return mx.sym.FullyConnected(flat, num_hidden=3, name="fc", attr={"lr_mult": "1e-3"})


def variable_forms(mx: Any) -> Any:
    """``Variable``'s own arguments as MXNet writes them (an int ``lr_mult``, a list shape)."""
    a = mx.sym.Variable("a", lr_mult=1, wd_mult=2.0, shape=[2, 3])
    b = mx.sym.Variable("b", shape=(2, 3), dtype="float16", attr={"wd_mult": "0", "note": "kept"})
    c = mx.sym.Variable("c", stype="row_sparse", lr_mult=0.25)
    return mx.sym.Group([a, b, c])


def hidden_keys(mx: Any) -> Any:
    """The other hidden keys, one given already stored, and a key that starts with one."""
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=2, name="fc1", attr={"__mirror_stage__": "True"})
    fc2 = mx.sym.FullyConnected(fc1, num_hidden=2, name="fc2", attr={"force_mirroring": "True"})
    return mx.sym.FullyConnected(fc2, num_hidden=2, name="fc3", attr={"lr_multx": "2", "ctx_group": "g"})


def set_attr(mx: Any) -> Any:
    """``_set_attr`` after the symbol is made (on the operator only, not its variables)."""
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    fc._set_attr(lr_mult="2", ctx_group="g")
    weight = mx.sym.Variable("w2")
    weight._set_attr(wd_mult="0.5")
    return mx.sym.FullyConnected(fc, weight=weight, num_hidden=2, name="fc2")


def pooling_outputs(mx: Any) -> Any:
    """Pooling of every kind (MXNet counts a hidden workspace output for some) and LRN."""
    data = mx.sym.Variable("data")
    variants = [
        {"kernel": (2, 2)}, {"kernel": (2, 2), "pool_type": "avg"}, {"kernel": (2,)},
        {"kernel": (2, 2, 2)}, {"global_pool": True}, {"global_pool": True, "kernel": (1, 1)},
        {"kernel": (2, 2), "pool_type": "sum"}, {"kernel": (2, 2), "pool_type": "lp", "p_value": 2},
        {"kernel": (2, 2), "layout": "NHWC"}, {"kernel": (2, 2), "layout": "NCHW"},
        {"kernel": (2, 2), "pooling_convention": "full", "stride": (2, 2)},
    ]
    outs = [mx.sym.Pooling(data, name=f"pool{i}", **kw) for i, kw in enumerate(variants)]
    outs.append(mx.sym.LRN(data, nsize=5, name="lrn"))
    return mx.sym.Group(outs)


def json_text_layout(mx: Any) -> Any:
    """What decides the JSON text's layout: names and attributes to escape (quotes, tabs,
    backslashes, UTF-8), attribute maps of none, one and several keys, operators with more
    than ten inputs and groups of more than ten heads (their lists go on several lines)."""
    odd = mx.sym.Variable('x\u00e9"q\\n', attr={"note": "tab\there\r\nand \\ more"})
    parts = [mx.sym.Variable(f"v{i}") for i in range(11)]
    many = mx.sym.add_n(*parts, name="sum11")
    cat = mx.sym.Concat(*parts, dim=1, name="cat11")
    fc = mx.sym.FullyConnected(odd, num_hidden=2, name="f\u00fc", no_bias=True, flatten=False)
    return mx.sym.Group([odd, many, cat, fc] + [mx.sym.relu(p, name=f"r{i}") for i, p in enumerate(parts[:8])])


PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "dense_with_multipliers": dense_with_multipliers,
    "convolution_net": convolution_net,
    "variable_forms": variable_forms,
    "hidden_keys": hidden_keys,
    "set_attr": set_attr,
    "pooling_outputs": pooling_outputs,
    "json_text_layout": json_text_layout,
}


def describe(mx: Any, sym: Any) -> dict[str, Any]:
    """What MXNet code reads of a symbol's attributes, and the rates an optimizer takes."""
    arguments = sym.list_arguments()
    opt = mx.optimizer.SGD(sym=sym, learning_rate=1.0, wd=0.1, param_idx2name=dict(enumerate(arguments)))
    heads = list(sym)
    return {
        "json": json.loads(sym.tojson()),
        "json_text": sym.tojson(),  # MXNet's layout, byte for byte
        "attr_dict": sym.attr_dict(),
        "list_attr": [h.list_attr() for h in heads],
        "attr": [{k: h.attr(k) for k in ("lr_mult", "__lr_mult__", "wd_mult", "ctx_group", "num_hidden", "shape")}
                 for h in heads],
        "list_arguments": arguments,
        "list_outputs": sym.list_outputs(),
        "opt_lr_mult": opt.lr_mult,
        "opt_wd_mult": opt.wd_mult,
        "lrs": [opt._get_lr(i) for i in range(len(arguments))],
        "wds": [opt._get_wd(i) for i in range(len(arguments))],
    }


#: Calls MXNet refuses: name -> the call (each takes ``mx``).
REFUSED: dict[str, Callable[[Any], Any]] = {
    "deprecated_suffix_key": lambda mx: mx.sym.FullyConnected(
        mx.sym.Variable("data"), num_hidden=2, name="fc", attr={"fc_weight_lr_mult": "0.1"}),
    "scope_value_not_a_string": lambda mx: mx.AttrScope(lr_mult=0.1),
}
