"""What a picture shows, before any layout: drawn nodes, drawn edges, their labels.

:func:`build_plan` turns a :class:`~kvcli.symbol.graph.Graph` (plus inferred shapes) into a
:class:`Plan`, one :class:`DrawNode` per drawn graph node. :mod:`kvcli.symbol.fold` then
merges draw nodes (repeated blocks, name groups) or keeps a neighbourhood, and
:mod:`kvcli.symbol.render` writes the plan as DOT. The HTML viewer reads the same plan, so the
picture and the viewer's node data always agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from kvcli.symbol import ops
from kvcli.symbol.graph import Graph, Node
from kvcli.symbol.names import entry_name, short_name
from kvcli.symbol.shapes import ShapeResult, format_shape

#: plot_network's colour map (ColorBrewer Set3), indexed by kind below.
PALETTE = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69", "#fccde5")
KIND_COLOUR = {
    ops.INPUT: PALETTE[0], ops.LEARNED: PALETTE[1], ops.ACTIVATION: PALETTE[2],
    ops.NORM: PALETTE[3], ops.POOL: PALETTE[4], ops.RESHAPE: PALETTE[5],
    ops.SOFTMAX: PALETTE[6], ops.OTHER: PALETTE[7],
}
#: What each colour stands for, as a drawing's legend says it (the ops MXNet paints with it).
KIND_NAMES = {
    ops.INPUT: "input", ops.LEARNED: "Convolution, FullyConnected", ops.ACTIVATION: "Activation, LeakyReLU",
    ops.NORM: "BatchNorm", ops.POOL: "Pooling", ops.RESHAPE: "Concat, Flatten, Reshape", ops.SOFTMAX: "Softmax",
    ops.OTHER: "other operators",
}
#: Names plot_network treats as weights (hidden unless ``hide_weights=False``).
WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean",
                   "_running_var", "_running_mean")
#: A label line longer than this is wrapped at ``_``/``/``/``.`` (readable mode only).
WRAP_AT = 22
#: plot_network-mode labels longer than this are cut too: graphviz refuses a DOT string of
#: about 16,000 characters or more, so a longer name would leave nothing drawn at all.
DOT_STRING_LIMIT = 10_000

_DIGITS = re.compile(r"\d+")
_BREAK = re.compile(r"(?<=[_/.])")


@dataclass
class DrawNode:
    """One box or oval of the picture; ``members`` are the graph nodes it stands for."""

    label: str
    fill: str
    shape: str  # "box" or "oval"
    members: list[int]
    name: str  # the first member's name (a fold's template for folded nodes)
    op: str  # the op ("null" for inputs; "(mixed)" when a fold mixes ops)
    detail: str = ""  # the op part of the label ("Convolution\n3x3/1, 64"); "" for inputs
    fold: str = ""  # how members were merged: "" (one node), "repeat", "pattern", "depth"
    small: bool = False  # a weight drawn with --show-weights: small type, small oval
    title: str = ""  # one line naming it, unwrapped ("t0_l0_i2h … t128_l0_i2h (×129)"); "" = name

    @property
    def heading(self) -> str:
        """The one-line name the viewer shows for it (its tooltip, its panel's heading)."""
        return self.title or cut(self.name)


@dataclass
class DrawEdge:
    """An edge from consumer ``head`` back to producer ``tail`` (plan node indices)."""

    head: int
    tail: int
    label: str


@dataclass
class Plan:
    """Draw nodes and edges of one picture; ``graph`` and ``shapes`` are what they came from."""

    graph: Graph
    shapes: Optional[ShapeResult]
    nodes: list[DrawNode]
    edges: list[DrawEdge]
    notes: list[str] = field(default_factory=list)  # what was folded or cut, for the user

    @property
    def drawn_members(self) -> int:
        """How many graph nodes the picture stands for."""
        return sum(len(n.members) for n in self.nodes)

    @property
    def drawn_boxes(self) -> int:
        """How many boxes and ovals it draws (output-shape labels not counted)."""
        return sum(1 for n in self.nodes if n.members)


def counts_text(in_file: int, hidden: int, drawn: int, boxes: int) -> str:
    """The counts of a drawing, each said once: ``6,084 nodes in the file (15 weights hidden):
    6,069 drawn as 49 boxes``. ``hidden``: weights not drawn; ``drawn``: graph nodes the
    picture stands for; ``boxes``: what it draws (a fold is one box; output labels not counted)."""
    if in_file == drawn == boxes:
        return f"{in_file:,} nodes"
    text = f"{in_file:,} nodes in the file" + (f" ({hidden:,} weights hidden)" if hidden else "")
    return text + f": {drawn:,} drawn" + (f" as {boxes:,} boxes" if boxes != drawn else "")


def looks_like_weight(name: str) -> bool:
    """True for names plot_network hides by default (``*_weight``, ``*_bias``, ...)."""
    return name.endswith(WEIGHT_SUFFIXES)


def _dims(text: Optional[str]) -> str:
    return "x".join(_DIGITS.findall(text or ""))


def op_label(node: Node, mxnet: bool = False) -> Optional[str]:
    """The label of an operator node's box, or ``None`` for ops labelled by name.

    The labels of MXNet 1.9.1's ``plot_network`` (``mxnet=True``, byte for byte): only
    Convolution, FullyConnected, Activation, LeakyReLU, Pooling and Custom get one, and a
    stride attribute with no digits in it prints as nothing. The CLI's labels
    (``mxnet=False``) say more: Deconvolution is labelled as Convolution is, a global
    Pooling says ``global`` (MXNet prints its unused kernel), an empty stride reads ``1``.
    """
    a, op = node.attrs, node.op

    def stride() -> str:
        text = _dims(a["stride"]) if "stride" in a else "1"
        return text if mxnet else text or "1"

    convolutions = ("Convolution",) if mxnet else ("Convolution", "Deconvolution")
    if op in convolutions and "kernel" in a and "num_filter" in a:
        return f"{op}\n{_dims(a['kernel'])}/{stride()}, {a['num_filter']}"
    if op == "FullyConnected" and "num_hidden" in a:
        return f"FullyConnected\n{a['num_hidden']}"
    if op == "Activation" and "act_type" in a:
        return f"Activation\n{a['act_type']}"
    if op == "LeakyReLU":
        return f"LeakyReLU\n{a.get('act_type', 'Leaky')}"
    if op == "Pooling" and "pool_type" in a:
        if not mxnet and node.typed.bool("global_pool"):
            return f"Pooling\n{a['pool_type']}, global"
        kernel = _dims(a["kernel"]) if "kernel" in a else "[]"
        return f"Pooling\n{a['pool_type']}, {kernel}/{stride()}"
    if op == "Custom" and "op_type" in a:
        return a["op_type"]
    return None


def cut(text: str) -> str:
    """``text`` as drawn: cut in the middle with ``…`` and its length when longer than the
    :data:`~kvcli.symbol.names.MAX_NAME` (so labels stay readable, graphviz accepts them, and
    wrapping them stays cheap)."""
    return short_name(text)


def wrapped_name(name: str) -> str:
    """``name`` for a label: :func:`cut`, then wrapped (:func:`wrap`), its length on a line of its own."""
    short = cut(name)
    if short is name or short == name:
        return wrap(name)
    text, _, length = short.rpartition(" (")
    return f"{wrap(text)}\n({length}"


def _cut_lines(label: str) -> str:
    return "\n".join(cut(line) for line in label.split("\n"))


def node_label(node: Node) -> str:
    """plot_network's label for an operator node (its name for ops it has no label for).

    Exactly MXNet's, except that a label graphviz would refuse (longer than
    :data:`DOT_STRING_LIMIT`) is cut with :func:`cut`.
    """
    label = op_label(node)
    text = node.name if label is None else label
    return text if len(text) <= DOT_STRING_LIMIT else _cut_lines(text)


def readable_label(node: Node) -> str:
    """A label naming both the node and its op, long names cut (:func:`cut`) and wrapped so
    boxes stay narrow."""
    name = wrapped_name(node.name)
    if node.is_variable:
        return name
    label = op_label(node)
    return f"{name}\n{cut(node.op) if label is None else _cut_lines(label)}"


def wrap(text: str, width: int = WRAP_AT) -> str:
    """Break ``text`` after ``_``, ``/`` or ``.`` into lines of at most ~``width`` characters.

    Linear in ``len(text)`` (every character is copied a bounded number of times); a piece
    with no break point is cut hard at ``width``.
    """
    if len(text) <= width:
        return text
    lines: list[str] = []
    line: list[str] = []  # pieces of the current line, joined once it is full
    size = 0
    for piece in _BREAK.split(text):
        if len(piece) > width:  # no separator for a long stretch: hard cuts
            if line:
                lines.append("".join(line))
            cuts = range(0, len(piece), width)
            lines.extend(piece[k:k + width] for k in cuts[:-1])
            line, size = [piece[cuts[-1]:]], len(piece) - cuts[-1]
            continue
        if size + len(piece) > width and line:
            lines.append("".join(line))
            line, size = [], 0
        line.append(piece)
        size += len(piece)
    if line:
        lines.append("".join(line))
    return "\n".join(lines)


def node_colour(node: Node) -> str:
    """Fill colour by kind of op, as in plot_network (inputs: the first colour)."""
    if node.is_variable:
        return KIND_COLOUR[ops.INPUT]
    return KIND_COLOUR[ops.draw_kind(node.op)]


def edge_label(shapes: Optional[ShapeResult], src: int, k: int,
               dtypes: Optional[Callable[[int, int], Optional[str]]] = None) -> str:
    """The label of an edge reading output ``k`` of node ``src``: its shape (and dtype)."""
    label = format_shape(shapes.entry(src, k)) if shapes is not None else ""
    if dtypes is not None:
        dtype = dtypes(src, k)
        if dtype:
            label += f"({dtype})"  # MXNet's form: 32x784(float32)
    return label


def build_plan(graph: Graph, shapes: Optional[ShapeResult] = None, hide_weights: bool = True,
               readable: bool = False,
               dtypes: Optional[Callable[[int, int], Optional[str]]] = None) -> Plan:
    """One draw node per drawn graph node (weights hidden unless asked), one edge per input.

    ``readable`` labels every node with its name *and* op and wraps long names (the CLI);
    without it labels are exactly plot_network's.
    """
    index_of: dict[int, int] = {}
    nodes: list[DrawNode] = []
    for i, node in enumerate(graph.nodes):
        if node.is_variable and hide_weights and looks_like_weight(node.name):
            continue
        if node.is_variable:
            label = readable_label(node) if readable else node_label(node)
        else:
            label = readable_label(node) if readable else node_label(node)
        index_of[i] = len(nodes)
        nodes.append(DrawNode(label=label, fill=node_colour(node),
                              shape="oval" if node.is_variable else "box",
                              small=readable and node.is_variable and looks_like_weight(node.name),
                              members=[i], name=node.name, op=node.op,
                              detail="" if node.is_variable else (op_label(node) or node.op)))
    edges: list[DrawEdge] = []
    for i, node in enumerate(graph.nodes):
        if node.is_variable:
            continue
        head = index_of[i]
        for src, k, _ in node.inputs:
            tail = index_of.get(src)
            if tail is not None:
                edges.append(DrawEdge(head, tail, edge_label(shapes, src, k, dtypes)))
    if readable and shapes is not None:
        _add_outputs(graph, shapes, index_of, nodes, edges)
    return Plan(graph=graph, shapes=shapes, nodes=nodes, edges=edges)


#: The op of the label nodes that show the network's output shapes (never folded or grouped).
OUTPUT_OP = "(output)"


def _add_outputs(graph: Graph, shapes: ShapeResult, index_of: dict[int, int],
                 nodes: list[DrawNode], edges: list[DrawEdge]) -> None:
    """A plain-text node under each head saying its name and shape (``softmax_output 1x1000``)."""
    for node_i, k, _ in graph.heads:
        head = index_of.get(node_i)
        if head is None:
            continue
        name = entry_name(graph, node_i, k)
        label = f"{wrapped_name(name)}\n{format_shape(shapes.entry(node_i, k))}"
        edges.append(DrawEdge(len(nodes), head, ""))
        nodes.append(DrawNode(label=label, fill="#ffffff", shape="plaintext", members=[],
                              name=name, op=OUTPUT_OP))


def rank_width(plan: Plan) -> int:
    """The widest rank of a longest-path layering (what makes ``dot``'s crossing step slow).

    Linear in nodes + edges; nodes on a cycle (possible after folding) are left out.
    """
    n = len(plan.nodes)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for e in plan.edges:
        if e.tail != e.head:
            succ[e.tail].append(e.head)
            indeg[e.head] += 1
    rank = [0] * n
    ready = [i for i in range(n) if indeg[i] == 0]
    while ready:
        i = ready.pop()
        for j in succ[i]:
            if rank[i] + 1 > rank[j]:
                rank[j] = rank[i] + 1
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    counts: dict[int, int] = {}
    for r in rank:
        counts[r] = counts.get(r, 0) + 1
    return max(counts.values(), default=0)
