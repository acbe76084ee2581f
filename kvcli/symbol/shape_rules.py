"""The shape rules of MXNet 1.9.1's operators, one function per operator family.

Each rule is listed in :data:`RULES` with the operators it serves; :mod:`kvcli.symbol.ops`
attaches them to its one operator table when it is imported (read back as
``ops.spec(op).shape_rule``). This module imports nothing of the operator table, so the
dependency is one-way (ops -> shape_rules). A rule sees one node's input and output shapes
(``None`` = unknown) and fills in what it can; :mod:`kvcli.symbol.shapes` drives them over a
graph."""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence
from kvcli.arrays.reshape import reshape_target as shared_reshape_target
from kvcli.symbol.attrs import Attrs
from kvcli.errors import AttrError


Shape = tuple[int, ...]
Shapes = list[Optional[Shape]]

#: A shape rule: sees one node's attributes, input and output shapes (``None`` = unknown) and
#: fills in what it can, in place.
ShapeRule = Callable[[Attrs, list[Optional[Shape]], list[Optional[Shape]]], None]
Rule = ShapeRule

#: Every rule with the operators it serves, in definition order; the operator table attaches
#: them (and refuses a rule for an op it does not declare, or two rules for one op).
RULES: list[tuple[Rule, tuple[str, ...]]] = []


def attach_shape_rule(fn: Rule, *names: str) -> None:
    """List ``fn`` as the shape rule of the operators ``names`` (attached by :mod:`ops`)."""
    RULES.append((fn, names))


def rule(*names: str) -> Callable[[Rule], Rule]:
    """Decorator: ``fn`` is the shape rule of the operators ``names``."""
    def register(fn: Rule) -> Rule:
        attach_shape_rule(fn, *names)
        return fn

    return register


def data_rule(*names: str) -> Callable[[Callable[[Attrs, Shape, Shapes, Shapes], None]], Rule]:
    """Decorator for a rule that can only work from its data input's shape: ``fn(a, data,
    ins, outs)`` runs once ``ins[0]`` is known (until then the node waits, as MXNet's do)."""
    def register(fn: Callable[[Attrs, Shape, Shapes, Shapes], None]) -> Rule:
        def from_data(a: Attrs, ins: Shapes, outs: Shapes) -> None:
            data = ins[0]
            if data is not None:
                fn(a, data, ins, outs)

        from_data.__name__ = from_data.__qualname__ = fn.__name__
        from_data.__doc__ = fn.__doc__
        attach_shape_rule(from_data, *names)
        return from_data

    return register


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise AttrError(f"axis {axis} is out of range for a {ndim}-d input")
    return axis % ndim


def _prod(dims: Sequence[int]) -> int:
    return math.prod(dims)


# ----------------------------------------------------------------------------- rules


def _same_all(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    """Elementwise: every input and output has one shape; fill all from any known one."""
    known = next((s for s in (*ins, *outs) if s is not None), None)
    if known is None:
        return
    for lst in (ins, outs):
        for k in range(len(lst)):
            if lst[k] is None:
                lst[k] = known


RULES_SAME_ALL = (
    "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_plus", "_minus", "_mul",
    "_div", "_Plus", "_Minus", "_Mul", "_Div", "_add", "_sub", "_power", "_Power", "_maximum",
    "_minimum", "_Maximum", "_Minimum", "add_n", "ElementWiseSum", "_sum",
)
attach_shape_rule(_same_all, *RULES_SAME_ALL)


def _unary(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    """One data input, output of the same shape (activations, scalar arithmetic, ...)."""
    if ins and ins[0] is not None:
        for k in range(len(outs)):
            outs[k] = outs[k] or ins[0]
    elif ins and outs and outs[0] is not None:
        ins[0] = outs[0]


for _n in ("Activation", "relu", "sigmoid", "tanh", "softsign", "clip", "Cast", "cast", "identity",
           "_copy", "BlockGrad", "stop_gradient", "MakeLoss", "make_loss", "L2Normalization",
           "smooth_l1", "exp", "log", "sqrt", "square", "abs", "negative", "erf", "LRN",
           "softmin", "zeros_like", "ones_like", "softmax", "log_softmax", "SoftmaxActivation",
           "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
           "_rdiv_scalar", "_power_scalar", "_rpower_scalar", "_maximum_scalar", "_minimum_scalar",
           "_PlusScalar", "_MinusScalar", "_RMinusScalar", "_MulScalar", "_DivScalar",
           "_RDivScalar", "_PowerScalar", "_RPowerScalar", "Dropout"):
    attach_shape_rule(_unary, _n)


@rule("LeakyReLU")
def _leaky(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    _unary(a, ins[:1], outs)
    data = ins[0] or outs[0]
    ins[0] = data
    if data is not None and len(ins) > 1 and ins[1] is None:  # prelu: one slope per channel
        ins[1] = (data[1] if len(data) > 1 else 1,)


def _spatial(a: Attrs, key: str, d: int, default: int) -> Shape:
    value = a.optional_ints(key)
    if value is None:
        return (default,) * d
    if len(value) != d:
        raise AttrError(f"'{key}' has {len(value)} values but the kernel has {d}")
    return value


def _channels_first(a: Attrs) -> bool:
    layout = a.get("layout")
    return layout is None or layout in ("None", "") or layout.startswith("NC")


def _kernel_geometry(a: Attrs, data: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """kernel, stride, dilate and pad of a convolution over ``data`` (N, C, spatial...)."""
    kernel = a.ints("kernel")
    d = len(kernel)
    if len(data) != d + 2:
        raise AttrError(f"a {d}-d kernel needs a {d + 2}-d input, got {data}")
    return tuple(kernel), _spatial(a, "stride", d, 1), _spatial(a, "dilate", d, 1), _spatial(a, "pad", d, 0)


@rule("Convolution", "Convolution_v1")
def _convolution(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    data = ins[0]
    if data is None or not _channels_first(a):
        return
    kernel, stride, dilate, pad = _kernel_geometry(a, data)
    filters, groups = a.int("num_filter"), a.int("num_group", 1)
    ins[1] = (filters, data[1] // groups, *kernel)
    if len(ins) > 2:
        ins[2] = (filters,)
    spatial = []
    for x, k, s, dl, p in zip(data[2:], kernel, stride, dilate, pad):
        extent = dl * (k - 1) + 1
        if x == 0:  # an unknown dimension (MXNet's partial shapes) stays unknown
            spatial.append(0)
            continue
        if x + 2 * p < extent:
            raise AttrError(f"kernel {kernel} is larger than the padded input {data}")
        spatial.append((x + 2 * p - extent) // s + 1)
    outs[0] = (data[0], filters, *spatial)


@rule("Deconvolution")
def _deconvolution(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    data = ins[0]
    if data is None or not _channels_first(a):
        return
    kernel, stride, dilate, pad = _kernel_geometry(a, data)
    adj = _spatial(a, "adj", len(kernel), 0)
    filters, groups = a.int("num_filter"), a.int("num_group", 1)
    ins[1] = (data[1], filters // groups, *kernel)
    if len(ins) > 2:
        ins[2] = (filters,)
    target = a.optional_ints("target_shape")
    if target and any(target):
        spatial = list(target)
    else:
        spatial = [s * (x - 1) + dl * (k - 1) + 1 - 2 * p + j if x else 0
                   for x, k, s, dl, p, j in zip(data[2:], kernel, stride, dilate, pad, adj)]
    outs[0] = (data[0], filters, *spatial)


@rule("Pooling", "Pooling_v1")
def _pooling(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    data = ins[0]
    if data is None or not _channels_first(a):
        return
    d = len(data) - 2
    if d < 1:
        raise AttrError(f"Pooling needs an input with spatial dims, got {data}")
    if a.bool("global_pool"):
        outs[:] = [(data[0], data[1]) + (1,) * d] * len(outs)  # a second output: MXNet's workspace
        return
    kernel = a.ints("kernel")
    if len(kernel) != d:
        raise AttrError(f"kernel {kernel} does not match the {len(data)}-d input {data}")
    stride, pad = _spatial(a, "stride", d, 1), _spatial(a, "pad", d, 0)
    convention = a.str("pooling_convention", "valid")
    spatial = []
    for x, k, s, p in zip(data[2:], kernel, stride, pad):
        if x == 0:  # unknown stays unknown
            spatial.append(0)
        elif convention == "full":
            spatial.append(int(math.ceil((x + 2 * p - k) / s)) + 1)
        elif convention == "same":
            spatial.append(int(math.ceil(x / s)))
        else:
            spatial.append((x + 2 * p - k) // s + 1)
    outs[:] = [(data[0], data[1], *spatial)] * len(outs)  # a second output: MXNet's workspace, the same shape


@rule("FullyConnected")
def _fully_connected(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    hidden = a.int("num_hidden")
    data = ins[0]  # as in MXNet, nothing (not even the bias) is inferred before the data
    if data is None:
        return
    if a.bool("flatten", True):
        ins[1] = (hidden, _prod(data[1:]))
        outs[0] = (data[0], hidden)
    else:
        ins[1] = (hidden, data[-1])
        outs[0] = (*data[:-1], hidden)
    if len(ins) > 2:
        ins[2] = (hidden,)


@rule("BatchNorm", "BatchNorm_v1", "CuDNNBatchNorm", "InstanceNorm", "LayerNorm")
def _norm(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    data = ins[0] or outs[0]
    if data is None:
        return
    ins[0] = outs[0] = data
    default_axis = -1 if "LayerNorm" in (a.get("__op__", "") or "") else 1
    channels = data[_axis(a.int("axis", default_axis), len(data))] if len(data) > 1 else data[0]
    for k in range(1, len(ins)):
        ins[k] = (channels,)
    for k in range(1, len(outs)):
        outs[k] = (channels,)


@rule("Flatten", "flatten")
def _flatten(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    if ins[0] is not None:
        outs[0] = (ins[0][0], _prod(ins[0][1:])) if ins[0] else (1, 1)


def reshape_target(src: Shape, spec: Shape, reverse: bool = False) -> Shape:
    """MXNet's Reshape with its special values 0, -1, -2, -3, -4 (one implementation, shared
    with ``nd.reshape``: :func:`kvcli.arrays.reshape.reshape_target`)."""
    try:
        return shared_reshape_target(src, spec, reverse)
    except ValueError as error:
        raise AttrError(f"shape {tuple(spec)}: {error}") from None


@data_rule("Reshape", "reshape")
def _reshape(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    spec = a.optional_ints("shape")
    if spec is None:  # the deprecated target_shape / keep_highest form
        target = a.ints("target_shape")
        if a.bool("keep_highest"):
            spec = (data[0], *target)
        else:
            spec = target
        spec = tuple(-1 if v == 0 else v for v in spec)
    outs[0] = reshape_target(data, spec, a.bool("reverse"))


@data_rule("transpose")
def _transpose(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    axes = a.optional_ints("axes") or tuple(reversed(range(len(data))))
    if sorted(_axis(x, len(data)) for x in axes) != list(range(len(data))):
        raise AttrError(f"axes {axes} is not a permutation of a {len(data)}-d input")
    outs[0] = tuple(data[_axis(x, len(data))] for x in axes)


@data_rule("SwapAxis", "swapaxes")
def _swapaxis(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    d1, d2 = _axis(a.int("dim1", 0), len(data)), _axis(a.int("dim2", 0), len(data))
    out = list(data)
    out[d1], out[d2] = out[d2], out[d1]
    outs[0] = tuple(out)


@data_rule("expand_dims")
def _expand_dims(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    axis = a.int("axis")
    axis = _axis(axis, len(data) + 1)
    outs[0] = (*data[:axis], 1, *data[axis:])


@data_rule("squeeze")
def _squeeze(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    axes = a.optional_ints("axis")
    drop = {_axis(x, len(data)) for x in axes} if axes else {i for i, d in enumerate(data) if d == 1}
    for i in drop:
        if data[i] != 1:
            raise AttrError(f"cannot squeeze axis {i} of {data}: its size is not 1")
    out = tuple(d for i, d in enumerate(data) if i not in drop)
    outs[0] = out or (1,)


@rule("Concat", "concat")
def _concat(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    if any(s is None for s in ins) or not ins:
        return
    first = ins[0]
    assert first is not None
    dim = _axis(a.int("dim", 1), len(first))
    total = 0
    for s in ins:
        assert s is not None
        if len(s) != len(first) or any(x != y for i, (x, y) in enumerate(zip(s, first)) if i != dim):
            raise AttrError(f"Concat inputs {first} and {s} differ outside dim {dim}")
        total += s[dim]
    outs[0] = (*first[:dim], total, *first[dim + 1:])


@rule("_rnn_param_concat")
def _rnn_param_concat(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    """Concat, and backwards as MXNet does: a known output with one unknown input gives it
    the rest of the output along ``dim`` (a fused RNN's parameters fix a weight's shape)."""
    out = outs[0]
    unknown = [k for k, s in enumerate(ins) if s is None]
    if out is not None and len(unknown) == 1:
        dim = _axis(a.int("dim", 1), len(out))
        used = 0
        for s in ins:
            if s is not None:
                used += s[dim]
        ins[unknown[0]] = (*out[:dim], out[dim] - used, *out[dim + 1:])
    _concat(a, ins, outs)


@rule("stack")
def _stack(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    """Every input has one shape; the output puts ``num_args`` at ``axis`` (either way round)."""
    known = next((s for s in ins if s is not None), None)
    axis_attr = a.int("axis", 0)
    if known is None and outs[0] is not None:
        out = outs[0]
        axis = _axis(axis_attr, len(out))
        known = (*out[:axis], *out[axis + 1:])
    if known is None:
        return
    for k in range(len(ins)):
        if ins[k] is None:
            ins[k] = known
        elif ins[k] != known:
            raise AttrError(f"stack inputs {known} and {ins[k]} differ")
    axis = _axis(axis_attr, len(known) + 1)
    outs[0] = (*known[:axis], len(ins), *known[axis:])


@rule("SpatialTransformer")
def _spatial_transformer(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    """MXNet's affine/bilinear transformer: data (N, C, H, W) and loc (N, 6) known first."""
    data, loc = ins
    if data is None or loc is None:
        return
    if len(data) != 4 or len(loc) != 2 or loc[1] != 6:
        raise AttrError(f"SpatialTransformer needs data (N, C, H, W) and loc (N, 6), got {data} and {loc}")
    height, width = a.ints("target_shape", (0, 0))
    if height <= 0 or width <= 0:
        raise AttrError(f"SpatialTransformer target_shape must be positive, got {(height, width)}")
    outs[0] = (data[0], data[1], height, width)
    outs[1] = (3, height * width)
    outs[2] = (data[0], 2, height * width)


def broadcast(lhs: Shape, rhs: Shape) -> Shape:
    """NumPy-style broadcasting (MXNet pads the shorter shape with 1s on the left)."""
    n = max(len(lhs), len(rhs))
    lp, rp = (1,) * (n - len(lhs)) + lhs, (1,) * (n - len(rhs)) + rhs
    out = []
    for x, y in zip(lp, rp):
        if x != y and 1 not in (x, y):
            raise AttrError(f"shapes {lhs} and {rhs} do not broadcast")
        out.append(y if x == 1 else x)
    return tuple(out)


@rule("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_plus",
      "broadcast_minus", "broadcast_power", "broadcast_maximum", "broadcast_minimum")
def _broadcast(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    if ins[0] is not None and ins[1] is not None:
        outs[0] = broadcast(ins[0], ins[1])


@data_rule("sum", "mean", "max", "min", "prod", "nansum", "nanprod", "sum_axis", "max_axis", "min_axis")
def _reduce(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    axes = a.optional_ints("axis")
    keep = a.bool("keepdims")
    if axes is None:
        reduced = set(range(len(data)))
    else:
        reduced = {_axis(x, len(data)) for x in axes}
    if a.bool("exclude"):
        reduced = set(range(len(data))) - reduced
    if keep:
        outs[0] = tuple(1 if i in reduced else d for i, d in enumerate(data))
    else:
        outs[0] = tuple(d for i, d in enumerate(data) if i not in reduced) or (1,)


@rule("norm")
def _norm_reduce(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    _reduce(a, ins, outs)


@rule("_zeros", "_ones", "_full", "_zeros_without_dtype", "_empty")  # the ops with creation=True
def _creation(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    """``shape=(0, 512)``: a 0 is filled from the consumer, as MXNet does for RNN begin states."""
    shape = a.ints("shape", ())
    known = outs[0]
    if known is not None:
        if len(known) != len(shape) or any(d and d != k for d, k in zip(shape, known)):
            raise ValueError(f"shape attribute {shape} does not match the {known} its consumer needs")
        return
    if 0 not in shape:
        outs[0] = shape


@rule("Embedding")
def _embedding(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    vocab, dim = a.int("input_dim"), a.int("output_dim")
    ins[1] = (vocab, dim)
    if ins[0] is not None:
        outs[0] = (*ins[0], dim)


@data_rule("SoftmaxOutput", "Softmax")
def _softmax_output(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    outs[0] = data
    if ins[1] is None:
        if a.bool("multi_output"):
            ins[1] = (data[0], *data[2:])
        else:
            ins[1] = data[:-1] or (1,)


@data_rule("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput")
def _regression(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    outs[0] = data
    if ins[1] is None:
        # MXNet's special case: a (N, 1) prediction takes a 1-d label (N,)
        ins[1] = (data[0],) if len(data) == 2 and data[1] == 1 else data


@rule("SVMOutput")
def _svm(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    if ins[0] is not None:
        outs[0] = ins[0]
        if ins[1] is None:
            ins[1] = ins[0][:-1] or (1,)


@data_rule("SliceChannel", "split")
def _slice_channel(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    n = a.int("num_outputs")
    axis = _axis(a.int("axis", 1), len(data))
    if n <= 0 or data[axis] % n:
        raise AttrError(f"cannot split axis {axis} of {data} into {n} equal parts")
    part = data[axis] // n
    if a.bool("squeeze_axis"):
        if part != 1:
            raise AttrError(f"squeeze_axis needs parts of size 1, got {part}")
        shape = (*data[:axis], *data[axis + 1:])
    else:
        shape = (*data[:axis], part, *data[axis + 1:])
    for k in range(len(outs)):
        outs[k] = shape


_RNN_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def rnn_param_size(mode: str, layers: int, input_size: int, state: int, bidirectional: bool) -> int:
    """MXNet's ``GetRnnParamSize`` (no projection): i2h and h2h weights and both biases."""
    dirs = 2 if bidirectional else 1
    size = state * dirs * _RNN_GATES[mode]
    first = (input_size + state + 2) * size
    other = (state * dirs + state + 2) * size
    return first + (layers - 1) * other


@data_rule("RNN")
def _rnn(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    mode = a.str("mode").lower()
    if mode not in _RNN_GATES:
        raise AttrError(f"unknown RNN mode {mode!r}")
    if "projection_size" in a:
        raise AttrError("RNN with projection_size is not supported by kvcli's shape rules")
    if len(data) != 3:
        raise AttrError(f"RNN expects (seq, batch, features) input, got {data}")
    layers, state = a.int("num_layers"), a.int("state_size")
    bidir = a.bool("bidirectional")
    dirs = 2 if bidir else 1
    seq, batch, feat = data
    ins[1] = (rnn_param_size(mode, layers, feat, state, bidir),)
    ins[2] = (layers * dirs, batch, state)
    if mode == "lstm" and len(ins) > 3:
        ins[3] = (layers * dirs, batch, state)
    outs[0] = (seq, batch, dirs * state)
    for k in range(1, len(outs)):
        outs[k] = (layers * dirs, batch, state)


@rule("WarpCTC")
def _warpctc(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    # MXNet's plugin/warpctc: output = data (T*N, alphabet); label = (N * label_length,).
    data = ins[0]
    if data is None:
        return
    outs[0] = data
    if ins[1] is None:
        ins[1] = (a.int("label_length") * (data[0] // a.int("input_length")),)


@data_rule("MultiBoxPrior", "_contrib_MultiBoxPrior")
def _multibox_prior(a: Attrs, data: Shape, ins: Shapes, outs: Shapes) -> None:
    sizes, ratios = a.floats("sizes", (1.0,)), a.floats("ratios", (1.0,))
    anchors = len(sizes) + len(ratios) - 1
    outs[0] = (1, data[2] * data[3] * anchors, 4)


@rule("MultiBoxTarget", "_contrib_MultiBoxTarget")
def _multibox_target(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    anchor, label, cls = ins
    if anchor is None:
        return
    batch = (label or cls or (None,))[0]
    if batch is None:
        return
    count = anchor[1]
    outs[0] = (batch, count * 4)
    outs[1] = (batch, count * 4)
    outs[2] = (batch, count)


@rule("MultiBoxDetection", "_contrib_MultiBoxDetection")
def _multibox_detection(a: Attrs, ins: Shapes, outs: Shapes) -> None:
    cls = ins[0]
    if cls is not None:
        outs[0] = (cls[0], cls[2], 6)
