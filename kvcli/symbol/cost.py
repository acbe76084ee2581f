"""What running a graph costs: multiply-accumulates (MACs) and output bytes per node.

MACs follow the convention of the ResNet, MobileNet and VGG papers' tables: only the
multiply-accumulates of the layers that hold weights are counted, one per weight use, biases,
normalisation, activations and pooling not at all. For an input of batch N:

* Convolution: ``Kh·Kw·Cin/groups·Cout·Ho·Wo`` per sample (the weight's size times the
  output's spatial size);
* Deconvolution: ``Kh·Kw·Cin·Cout/groups·Hi·Wi`` per sample (each input pixel meets the whole
  kernel once: the weight's size times the *input's* spatial size);
* FullyConnected: ``in·out`` per sample (per position with ``flatten=False``);
* RNN (fused): per step, layer and direction, ``gates·H·(input + H)`` (plus ``H·P`` for a
  projection): the products with its weight matrices, gates 4 (LSTM), 3 (GRU) or 1.

Every other operator does no multiply-accumulate in this convention: 0, not unknown. A node
whose shapes are unknown has unknown MACs (``None``), and the total is then a lower bound.

Output bytes: every visible output's elements times the size of its element type (the types
of :func:`kvcli.symbol.dtypes.infer_dtypes`; inputs are float32 unless given otherwise, as in
MXNet). Linear in nodes + edges: one pass, no per-node allocation beyond the results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

from kvcli.errors import AttrError
from kvcli.symbol import ops
from kvcli.symbol.attrs import Attrs
from kvcli.symbol.dtypes import infer_dtypes
from kvcli.symbol.names import visible_outputs
from kvcli.symbol.roles import INPUT, LABEL, variable_roles
from kvcli.symbol.shapes import Shape, ShapeResult

#: ``rule(attrs, input shapes, output shapes)`` -> MACs, or ``None`` when a shape it needs is unknown.
MacRule = Callable[[Attrs, list[Optional[Shape]], list[Optional[Shape]]], Optional[int]]

#: Bytes per element of each dtype kvcli knows (:data:`kvcli.symbol.dtypes.DTYPES`).
ITEM_BYTES = {"float16": 2, "float32": 4, "float64": 8, "uint8": 1, "int8": 1, "int32": 4, "int64": 8,
              "bool": 1, "bfloat16": 2}
#: The type of an input nobody typed (MXNet's default dtype).
DEFAULT_DTYPE = "float32"


def _at(shapes: list[Optional[Shape]], index: int) -> Optional[Shape]:
    """The ``index``-th shape, ``None`` when a malformed file gave the node fewer inputs."""
    return shapes[index] if index < len(shapes) else None


def _known(*shapes: Optional[Shape]) -> bool:
    return all(s is not None and all(d > 0 for d in s) for s in shapes)


def _convolution(a: Attrs, ins: list[Optional[Shape]], outs: list[Optional[Shape]]) -> Optional[int]:
    weight, out = _at(ins, 1), _at(outs, 0)
    if not _known(weight, out) or out is None or weight is None or len(out) < 2:
        return None
    # weight (Cout, Cin/groups, *kernel): each output element takes Cin/groups·K multiply-adds
    return math.prod(weight) // weight[0] * math.prod(out)


def _deconvolution(a: Attrs, ins: list[Optional[Shape]], outs: list[Optional[Shape]]) -> Optional[int]:
    data, weight = _at(ins, 0), _at(ins, 1)
    if not _known(data, weight) or data is None or weight is None or len(data) < 2:
        return None
    # weight (Cin, Cout/groups, *kernel): each input element meets Cout/groups·K weights
    return math.prod(weight) // weight[0] * math.prod(data)


def _fully_connected(a: Attrs, ins: list[Optional[Shape]], outs: list[Optional[Shape]]) -> Optional[int]:
    data, weight = _at(ins, 0), _at(ins, 1)
    if not _known(data, weight) or data is None or weight is None or not data:
        return None
    rows = data[0] if a.bool("flatten", True) else math.prod(data[:-1])
    return rows * math.prod(weight)  # weight (out, in)


_GATES = {"lstm": 4, "gru": 3, "rnn_relu": 1, "rnn_tanh": 1}


def _rnn(a: Attrs, ins: list[Optional[Shape]], outs: list[Optional[Shape]]) -> Optional[int]:
    data = _at(ins, 0)
    if not _known(data) or data is None or len(data) != 3:
        return None
    steps, batch, size = data  # MXNet's RNN takes (T, N, C)
    gates = _GATES.get(a.str("mode", "").lower())
    if gates is None:
        return None
    hidden, layers = a.int("state_size"), a.int("num_layers", 1)
    directions = 2 if a.bool("bidirectional") else 1
    projection = a.optional_ints("projection_size") if "projection_size" in a else None
    proj = int(projection[0]) if projection else 0
    recurrent = proj or hidden
    if layers < 1 or hidden < 1:
        return None
    # layer 0 reads the input (size), every later one the previous layer's outputs
    # (directions·recurrent): in closed form, since a hostile file may say num_layers=10**9
    widths = (size + recurrent) + (layers - 1) * (directions * recurrent + recurrent)
    per_step = gates * hidden * widths + layers * hidden * proj
    return steps * batch * directions * per_step


#: MAC rules by operator (the operator table's canonical names; aliases find them through it).
MAC_RULES: dict[str, MacRule] = {
    "Convolution": _convolution,
    "Deconvolution": _deconvolution,
    "FullyConnected": _fully_connected,
    "RNN": _rnn,
}
for _name in MAC_RULES:  # a rule for an op the table does not declare is a mistake here
    if ops.spec(_name) is None or ops.spec(_name).name != _name:  # type: ignore[union-attr]
        raise ValueError(f"a MAC rule for {_name!r}, which the operator table does not declare")


@dataclass
class Cost:
    """Per node (graph index): ``macs`` (``None``: unknown) and ``out_bytes`` of its visible
    outputs (``None``: a shape or type unknown); totals over operator nodes."""

    macs: list[Optional[int]]
    out_bytes: list[Optional[int]]
    total_macs: int
    total_out_bytes: int
    #: every operator's MACs are known (else ``total_macs`` is a lower bound)
    macs_exact: bool
    #: every operator's output size is known (else ``total_out_bytes`` is a lower bound)
    bytes_exact: bool


def node_macs(result: ShapeResult, index: int) -> Optional[int]:
    """The MACs of node ``index`` (0 for an op that does none, ``None`` when unknown)."""
    node = result.graph.nodes[index]
    if node.is_variable:
        return 0
    spec = ops.spec(node.op)
    if spec is None:
        return None  # an unknown op may do anything
    rule = MAC_RULES.get(spec.name)
    if rule is None:
        return 0
    try:
        return rule(node.typed, result.inputs_of(index), result.outputs[index])
    except (AttrError, ValueError):  # a malformed attribute: its shapes were not inferred either
        return None


def compute_cost(result: ShapeResult, dtypes: Optional[Mapping[str, str]] = None,
                 roles: Optional[Mapping[int, str]] = None, visible: Optional[Sequence[int]] = None) -> Cost:
    """MACs and output bytes of every node of ``result``'s graph; ``dtypes`` types inputs
    (``{"data": "float16"}``), every other input being float32. ``roles``
    (:func:`kvcli.symbol.roles.variable_roles`) and ``visible`` (each node's
    :func:`~kvcli.symbol.names.visible_outputs`) save the work when the caller has them."""
    graph = result.graph
    # inputs and labels are float32 unless given; weights follow the data they meet (MXNet's rule)
    if roles is None:
        roles = variable_roles(graph, set(result.given))
    given = {graph.nodes[i].name: DEFAULT_DTYPE for i, role in roles.items() if role in (INPUT, LABEL)}
    given.update(dtypes or {})
    types = infer_dtypes(graph, given)
    macs: list[Optional[int]] = []
    sizes: list[Optional[int]] = []
    total_macs = total_bytes = 0
    macs_exact = bytes_exact = True
    for i, node in enumerate(graph.nodes):
        variable = node.op == "null"
        m = 0 if variable else node_macs(result, i)
        item = ITEM_BYTES.get(types[i] or "")
        size: Optional[int] = 0
        count = 1 if variable else visible[i] if visible is not None else visible_outputs(graph, i)
        outs = result.outputs[i][:count]
        for shape in outs:
            if shape is None or item is None or size is None:
                size = None
                break
            size += math.prod(shape) * item
        macs.append(m)
        sizes.append(size)
        if variable:
            continue
        if m is None:
            macs_exact = False
        else:
            total_macs += m
        if size is None:
            bytes_exact = False
        else:
            total_bytes += size
    return Cost(macs, sizes, total_macs, total_bytes, macs_exact, bytes_exact)


def _prefixed(value: float, steps: tuple[tuple[float, str], ...], unit: str) -> str:
    if abs(value) >= steps[-1][0] * 1e18:  # past every prefix (a hostile file's sizes): exact digits
        from decimal import Decimal

        return f"{Decimal(value) / Decimal(steps[-1][0]):.3e} {steps[-1][1]}{unit}"
    for scale, prefix in steps:  # smallest first: the first prefix under which it reads < 1,000
        text = f"{value / scale:.3g}"
        if "e" not in text and abs(float(text)) < 1000:
            return f"{text} {prefix}{unit}"
    return f"{value / steps[-1][0]:.0f} {steps[-1][1]}{unit}"


def si(value: float, unit: str = "") -> str:
    """``3_858_000_000`` -> ``"3.86 G"``: three significant digits and an SI prefix."""
    return _prefixed(value, ((1, ""), (1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T"), (1e15, "P")), unit).rstrip()


def binary(value: float) -> str:
    """``97_153_024`` -> ``"92.7 MiB"``: bytes in powers of 1,024, three significant digits."""
    if abs(value) < 1024:
        return f"{int(value)} B"
    return _prefixed(value, ((1 << 10, "Ki"), (1 << 20, "Mi"), (1 << 30, "Gi"), (1 << 40, "Ti"), (1 << 50, "Pi")), "B")
