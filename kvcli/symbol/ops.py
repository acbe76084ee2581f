"""The operator table: each known MXNet op's inputs, outputs, drawing kind and shape rule.

One table serves the loader (how many outputs a node has, for ``node_row_ptr`` and for
checking input indices), the builder (which weight/bias/label variables to create when the
caller does not pass them), the summary (which inputs are learnable parameters, which are
auxiliary states, which are labels), the renderer (the drawing kind) and shape inference (the
rule). The rules' code lives in :mod:`kvcli.symbol.shape_rules`, which lists each one with its
operators; this module attaches them with :func:`attach_shape_rule` (the dependency is one-way:
ops -> shape_rules). An op is declared nowhere else.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from kvcli.symbol import shape_rules as _shape_rules
from kvcli.symbol.attrs import Attrs
from kvcli.symbol.shape_rules import ShapeRule as ShapeRule

# Drawing kinds, mapped to plot_network's palette (plan.KIND_COLOUR). Each op's kind is the one
# MXNet 1.9.1's plot_network paints it with, exactly: only Convolution/FullyConnected (learned),
# Activation/LeakyReLU, BatchNorm, Pooling, Concat/Flatten/Reshape and "Softmax" have a colour
# of their own; everything else (relu, sigmoid, tanh, LRN, softmax, SoftmaxOutput,
# Deconvolution ...) is "other". See draw_kind for aliases.
INPUT, LEARNED, ACTIVATION, NORM, POOL, RESHAPE, SOFTMAX, OTHER = (
    "input", "learned", "activation", "norm", "pool", "reshape", "softmax", "other",
)


@dataclass(frozen=True)
class OpSpec:
    """What kvcli knows about one operator (independent of shapes).

    ``inputs(attrs)`` lists the input names in MXNet's order (aux states last, as in the
    JSON); ``params``/``aux``/``labels`` say which of those names are learnable parameters,
    auxiliary states and training labels. ``outputs(attrs)`` is the number of outputs the
    node really has (what ``node_row_ptr`` counts); ``visible(attrs)`` how many a Symbol
    exposes (BatchNorm computes 3 but shows 1).
    """

    name: str
    inputs: Callable[[Attrs], list[str]]
    params: frozenset[str] = frozenset()
    aux: frozenset[str] = frozenset()
    labels: frozenset[str] = frozenset()
    outputs: Callable[[Attrs], int] = field(default=lambda a: 1)
    visible: Optional[Callable[[Attrs], int]] = None
    kind: str = OTHER
    variadic: bool = False  # inputs come from *args (Concat, add_n): named arg0, arg1, ...
    output_names: tuple[str, ...] = ()  # MXNet's names for multiple outputs (else output0, 1..)
    creation: bool = False  # no inputs; the ``shape`` attribute is the output (a 0 is inferred)
    #: ``__init__`` MXNet gives the variable at an input slot when composing (its
    #: FSetInputVarAttrOnCompose): created variables, and given ones that have none yet
    input_init: Mapping[str, str] = field(default_factory=dict)
    #: ``rule(attrs, input_shapes, output_shapes)`` fills in the unknown (``None``) shapes it can
    shape_rule: Optional[ShapeRule] = None

    def num_visible(self, attrs: Attrs) -> int:
        return (self.visible or self.outputs)(attrs)


REGISTRY: dict[str, OpSpec] = {}


def _fixed(*names: str) -> Callable[[Attrs], list[str]]:
    names_list = list(names)
    return lambda a: list(names_list)


def _register(spec: OpSpec, *aliases: str) -> None:
    for name in (spec.name, *aliases):
        if name in REGISTRY:  # one declaration per operator: a second is a mistake in this file
            raise ValueError(f"operator {name!r} is registered twice")
        REGISTRY[name] = spec


def _weights(bias_default_off: bool) -> Callable[[Attrs], list[str]]:
    def inputs(a: Attrs) -> list[str]:
        return ["data", "weight"] if a.bool("no_bias", bias_default_off) else ["data", "weight", "bias"]

    return inputs


def _num_outputs(a: Attrs) -> int:
    return a.int("num_outputs", 1)


def _variadic(a: Attrs) -> list[str]:
    return [f"arg{i}" for i in range(a.int("num_args", 0))]


def _rnn_inputs(a: Attrs) -> list[str]:
    names = ["data", "parameters", "state"]
    if a.str("mode", "").lower() == "lstm":
        names.append("state_cell")
    if a.bool("use_sequence_length"):
        names.append("sequence_length")
    return names


def _rnn_outputs(a: Attrs) -> int:
    if not a.bool("state_outputs"):
        return 1
    return 3 if a.str("mode", "").lower() == "lstm" else 2


def _leaky_inputs(a: Attrs) -> list[str]:
    return ["data", "gamma"] if a.str("act_type", "leaky").lower() == "prelu" else ["data"]


_PARAMS = frozenset({"weight", "bias", "gamma", "beta", "parameters"})

_register(OpSpec("Convolution", _weights(False), _PARAMS, kind=LEARNED), "Convolution_v1")
_register(OpSpec("Deconvolution", _weights(True), _PARAMS))
_register(OpSpec("FullyConnected", _weights(False), _PARAMS, kind=LEARNED))
_register(OpSpec("Embedding", _fixed("data", "weight"), _PARAMS, kind=OTHER))
_register(
    OpSpec(
        "BatchNorm",
        _fixed("data", "gamma", "beta", "moving_mean", "moving_var"),
        _PARAMS,
        aux=frozenset({"moving_mean", "moving_var"}),
        outputs=lambda a: 3,
        visible=lambda a: 3 if a.bool("output_mean_var") else 1,
        kind=NORM,
        output_names=("output", "mean", "var"),
        input_init={"moving_mean": '["zero", {}]', "moving_var": '["one", {}]'},
    ),
    "BatchNorm_v1", "CuDNNBatchNorm",
)
def _pooling_outputs(a: Attrs) -> int:
    """MXNet 1.9.1 (its oneDNN build, the one pip installs) gives max pooling of a 1 to 3-d
    kernel in an NCW/NCHW/NCDHW layout a second, hidden output (its workspace)."""
    kernel = a.optional_ints("kernel") or ()
    max_pool = a.str("pool_type", "max").lower() == "max"
    return 2 if max_pool and 1 <= len(kernel) <= 3 and a.str("layout", "NCHW") in ("NCW", "NCHW", "NCDHW") else 1


_register(OpSpec("Pooling", _fixed("data"), kind=POOL, outputs=_pooling_outputs, visible=lambda a: 1))
_register(OpSpec("Pooling_v1", _fixed("data"), kind=POOL))
_register(OpSpec("Activation", _fixed("data"), kind=ACTIVATION))
# rrelu also shows its mask (MXNet's FNumVisibleOutputs); a created or given PReLU gamma starts at 0.25
_register(OpSpec("LeakyReLU", _leaky_inputs, _PARAMS, kind=ACTIVATION,
                 outputs=lambda a: 2 if a.str("act_type", "leaky").lower() == "rrelu" else 1,
                 output_names=("output", "mask"), input_init={"gamma": '["Constant", {"value": 0.25}]'}))
for _name in ("relu", "sigmoid", "tanh", "softsign", "clip", "Cast", "cast", "identity", "_copy",
              "BlockGrad", "stop_gradient", "MakeLoss", "make_loss",
              "smooth_l1", "exp", "log", "sqrt", "square", "abs", "negative", "erf",
              "softmin", "zeros_like", "ones_like"):
    _register(OpSpec(_name, _fixed("data")))  # MXNet paints even relu/sigmoid/tanh "other"
# creation ops: no inputs; shape (and dtype) come from attributes (MXNet's RNN begin states)
_register(OpSpec("_zeros", _fixed(), creation=True), "_ones", "_full", "_zeros_without_dtype", "_empty")
_register(OpSpec("L2Normalization", _fixed("data"), outputs=lambda a: 2, visible=lambda a: 1,
                 output_names=("output", "norm")))
_register(OpSpec("LRN", _fixed("data"), outputs=lambda a: 2, visible=lambda a: 1))  # its hidden tmp_norm
_register(OpSpec("InstanceNorm", _fixed("data", "gamma", "beta"), _PARAMS, outputs=lambda a: 3,
                 visible=lambda a: 1, output_names=("output", "mean", "var")))
_register(OpSpec("LayerNorm", _fixed("data", "gamma", "beta"), _PARAMS,
                 outputs=lambda a: 3, visible=lambda a: 3 if a.bool("output_mean_var") else 1,
                 output_names=("output", "mean", "std")))
_register(OpSpec("Dropout", _fixed("data"), outputs=lambda a: 2, visible=lambda a: 1))
_register(OpSpec("Flatten", _fixed("data"), kind=RESHAPE), "flatten")
_register(OpSpec("Reshape", _fixed("data"), kind=RESHAPE), "reshape")
_register(OpSpec("transpose", _fixed("data")))
_register(OpSpec("SwapAxis", _fixed("data")), "swapaxes")
_register(OpSpec("expand_dims", _fixed("data")))
_register(OpSpec("squeeze", _fixed("data")))
_register(OpSpec("Concat", _variadic, kind=RESHAPE, variadic=True), "concat")
_register(OpSpec("add_n", _variadic, variadic=True), "ElementWiseSum", "_sum")
_register(OpSpec("stack", _variadic, variadic=True))
# gluon's fused RNN exports concatenate their flattened weights into the RNN's parameters
_register(OpSpec("_rnn_param_concat", _variadic, variadic=True))
_register(OpSpec("SpatialTransformer", _fixed("data", "loc"), outputs=lambda a: 3, visible=lambda a: 1,
                 output_names=("output", "grid_dst", "grid_src")))
for _name in ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div",
              "_plus", "_minus", "_mul", "_div", "_Plus", "_Minus", "_Mul", "_Div", "_add", "_sub",
              "_power", "_Power", "_maximum", "_minimum", "_Maximum", "_Minimum"):
    _register(OpSpec(_name, _fixed("lhs", "rhs")))
for _name in ("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_plus",
              "broadcast_minus", "broadcast_power", "broadcast_maximum", "broadcast_minimum"):
    _register(OpSpec(_name, _fixed("lhs", "rhs")))
for _name in ("_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
              "_rdiv_scalar", "_power_scalar", "_rpower_scalar", "_maximum_scalar",
              "_minimum_scalar", "_PlusScalar", "_MinusScalar", "_RMinusScalar", "_MulScalar",
              "_DivScalar", "_RDivScalar", "_PowerScalar", "_RPowerScalar"):
    _register(OpSpec(_name, _fixed("data")))
for _name in ("sum", "mean", "max", "min", "prod", "nansum", "nanprod", "norm"):
    _register(OpSpec(_name, _fixed("data")))
for _name in ("sum", "max", "min"):
    REGISTRY[f"{_name}_axis"] = REGISTRY[_name]  # MXNet's old spellings of the same reductions
_LOSS_LABEL = frozenset({"label"})
for _name in ("SoftmaxOutput", "Softmax", "LinearRegressionOutput", "LogisticRegressionOutput",
              "MAERegressionOutput", "SVMOutput"):
    _register(OpSpec(_name, _fixed("data", "label"), labels=_LOSS_LABEL,
                     kind=SOFTMAX if _name == "Softmax" else OTHER))
for _name in ("softmax", "log_softmax", "SoftmaxActivation"):
    _register(OpSpec(_name, _fixed("data")))
_register(OpSpec("SliceChannel", _fixed("data"), outputs=_num_outputs), "split")
_register(OpSpec("RNN", _rnn_inputs, frozenset({"parameters"}), outputs=_rnn_outputs,
                 output_names=("output", "state_output", "statecell_output")))
_register(OpSpec("WarpCTC", _fixed("data", "label"), labels=_LOSS_LABEL))
_register(OpSpec("MultiBoxPrior", _fixed("data")), "_contrib_MultiBoxPrior")
_register(OpSpec("MultiBoxTarget", _fixed("anchor", "label", "cls_pred"), labels=_LOSS_LABEL,
                 outputs=lambda a: 3, output_names=("loc_target", "loc_mask", "cls_target")),
          "_contrib_MultiBoxTarget")
_register(OpSpec("MultiBoxDetection", _fixed("cls_prob", "loc_pred", "anchor")),
          "_contrib_MultiBoxDetection")


def attach_shape_rule(rule: ShapeRule, *names: str) -> None:
    """Give each of ``names`` (operators this table declares) its shape rule.

    Called for each rule :mod:`kvcli.symbol.shape_rules` lists, at the end of this module; a
    rule for an undeclared op, or a second rule for one op, is a mistake there.
    """
    for name in names:
        current = REGISTRY.get(name)
        if current is None:
            raise ValueError(f"a shape rule for {name!r}, which the operator table does not declare")
        if current.shape_rule is not None:
            raise ValueError(f"operator {name!r} has two shape rules")
        REGISTRY[name] = dataclasses.replace(current, shape_rule=rule)


def spec(op: str) -> Optional[OpSpec]:
    """The :class:`OpSpec` of ``op`` (any MXNet spelling kvcli knows), or ``None``."""
    return REGISTRY.get(op)


def draw_kind(op: str) -> str:
    """The drawing kind of ``op`` as MXNet's plot_network decides it: by the op's exact name,
    so an alias (``Convolution_v1``, ``BatchNorm_v1``) or an unknown op is "other"."""
    s = REGISTRY.get(op)
    return s.kind if s is not None and s.name == op else OTHER


def input_names(op: str, attrs: Attrs, count: int) -> list[str]:
    """Names of a node's ``count`` inputs; unknown ops and extra inputs get ``arg{i}``."""
    s = REGISTRY.get(op)
    names: list[str] = []
    if s is not None:
        try:
            names = s.inputs(attrs) if not s.variadic else []
        except ValueError:
            names = []
    if len(names) < count:
        names = names + [f"arg{i}" for i in range(len(names), count)]
    return names[:count]


# Last, so that every operator above exists when its rule is attached.
for _rule, _names in _shape_rules.RULES:
    attach_shape_rule(_rule, *_names)
