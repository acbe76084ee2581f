"""``mx.viz`` without MXNet: :func:`plot_network` and :func:`print_summary`.

Same signatures as MXNet 1.9.1's ``mxnet.visualization``, and the same output: the DOT
source ``plot_network`` builds and the table ``print_summary`` prints are MXNet's, line for
line (tests compare them with MXNet's recorded output). The one deliberate change is the
``Param #`` column, counted from inferred shapes so that it adds up to the total: MXNet's
own guesses miscount FullyConnected after pooling, unrolled RNNs and more, and crash on some
graphs (README, "Differences from MXNet's mx.viz"). The CLI's drawing is
:mod:`kvcli.symbol.plan` / :mod:`kvcli.symbol.render` (same colours, clearer labels).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import warnings

from kvcli.errors import ShapeInferenceError
from kvcli.symbol.build import Symbol
from kvcli.symbol.dtypes import infer_dtypes
from kvcli.symbol.graph import Graph, Node
from kvcli.symbol.plan import looks_like_weight, node_colour, op_label
from kvcli.symbol.render import NODE_ATTRS, dot_quote
from kvcli.symbol.shapes import Shape, ShapeResult, infer_shapes
from kvcli.symbol.summary import Summary, entry_name, visible_outputs, summarize

if TYPE_CHECKING:  # pragma: no cover
    from graphviz import Digraph

__all__ = ["plot_network", "print_summary"]


def _shapes(symbol: Symbol, shape: Optional[Mapping[str, Sequence[int]]]) -> ShapeResult:
    graph = symbol.to_graph()
    given: dict[str, Shape] = {k: tuple(int(d) for d in v) for k, v in (shape or {}).items()}
    arguments = [n.name for n in graph.nodes if n.is_variable]
    known = set(arguments)
    for name in given:
        if name not in known:  # MXNet's infer_shape refuses an unknown keyword the same way
            raise ShapeInferenceError(
                f"InferShapeKeyword argument name {name} not found. Candidate arguments: "
                + ", ".join(arguments[:20]) + (" ..." if len(arguments) > 20 else ""))
    return infer_shapes(graph, given)


def _warn_repeated(symbol: Symbol) -> None:
    """MXNet's RuntimeWarning when names repeat (its drawing would join those nodes)."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for node in symbol.to_graph().nodes:
        if node.name in seen:
            repeated[node.name] = None
        seen.add(node.name)
    if repeated:
        warnings.warn("There are multiple variables with the same name in your graph, this may result "
                      "in cyclic graph. Repeated names: " + ",".join(repeated), RuntimeWarning, stacklevel=3)


def _check(symbol: Any) -> Symbol:
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be a Symbol (kvcli.mx.sym.Symbol)")
    return symbol


def plot_network(symbol: Symbol, title: str = "plot", save_format: str = "pdf",
                 shape: Optional[Mapping[str, Sequence[int]]] = None, dtype: Any = None,
                 node_attrs: Optional[Mapping[str, str]] = None, hide_weights: bool = True) -> "Digraph":
    """Draw ``symbol`` as a :class:`graphviz.Digraph` (call ``.render(path)`` to save it).

    The DOT source is MXNet 1.9.1's for the same symbol and arguments, line for line: its
    labels (``Convolution\\n5x5/1, 20``, ``Pooling\\nmax, 2x2/2x2``), its colours, edge labels
    without the batch dimension, one node line per node even when names repeat, and with
    ``hide_weights=False`` edges to the weights (which graphviz draws as plain ovals).

    Args:
        symbol: the network.
        title: the graph's name (and the file name ``render`` uses).
        save_format: graphviz output format for ``render`` (``pdf``, ``svg``, ``png``).
        shape: input shapes, e.g. ``{"data": (1, 3, 224, 224)}``; edges then show shapes.
        dtype: input types, e.g. ``{"data": "float32"}`` (or numpy dtypes); edges then show
            ``shape(dtype)`` as in MXNet.
        node_attrs: graphviz node attributes overriding the defaults (inputs stay ovals).
        hide_weights: hide ``*_weight``/``*_bias``/... inputs (MXNet's default).
    """
    from graphviz import nohtml

    from kvcli.symbol.quiet import Digraph

    _check(symbol)
    _warn_repeated(symbol)
    shapes = _shapes(symbol, shape) if shape is not None else None
    if shapes is not None and not shapes.complete and not shapes.unknown_ops:
        raise ValueError("Input shape is incomplete")  # MXNet's words; {} lands here too
    graph = symbol.to_graph()
    types = None
    if dtype is not None:
        given = {k: _dtype_name(v) for k, v in dtype.items()}
        inferred = infer_dtypes(graph, given)
        if not given or any(t is None for t in inferred):
            raise ValueError("Input type is incomplete")
        types = inferred
    base = {**NODE_ATTRS, **(node_attrs or {})}
    dot = Digraph(name=nohtml(title), format=save_format)  # renders without graphviz's warnings
    for node in graph.nodes:
        attrs = dict(base)
        if node.is_variable:
            if looks_like_weight(node.name):
                continue  # never a node line; with hide_weights=False its edges still come
            attrs["shape"] = "oval"
            label = node.name
        else:
            label = mxnet_label(node)
        attrs["fillcolor"] = node_colour(node)
        tail = " ".join(f"{dot_quote(k)}={dot_quote(str(v))}" for k, v in sorted(attrs.items()))
        dot.body.append(f"\t{dot_quote(node.name)} [label={dot_quote(label)} {tail}]\n")
    keys = _mxnet_shape_keys(graph) if shapes is not None or types is not None else {}
    for node in graph.nodes:
        if node.is_variable:
            continue
        for src, k, _ in node.inputs:
            source = graph.nodes[src]
            if source.is_variable and looks_like_weight(source.name) and hide_weights:
                continue
            at = keys.get(_mxnet_key(source), (src, k))
            label = ""
            if shapes is not None:
                label = "x".join(str(d) for d in (shapes.entry(*at) or ())[1:])
            if types is not None:
                label += f"({types[at[0]]})"
            dot.body.append(f"\t{dot_quote(node.name)} -> {dot_quote(source.name)} "
                            f"[label={dot_quote(label)} arrowtail=open dir=back]\n")
    return dot


def mxnet_label(node: Node) -> str:
    """MXNet 1.9.1's box label: :func:`kvcli.symbol.plan.op_label` as MXNet writes it, else
    the node's name."""
    return op_label(node, mxnet=True) or node.name


def _mxnet_key(node: Node) -> str:
    """The output name MXNet's plot_network looks an edge's shape up by: ``name`` for a
    variable, ``name_output`` for an op, ``name_output{n-1}`` (the last output) when the op
    has a ``num_outputs`` attribute."""
    if node.is_variable:
        return node.name
    key = node.name + "_output"
    count = node.attrs.get("num_outputs", "").strip()
    if count.isdigit():  # (a malformed count finds no key: the edge's own output is used)
        key += str(int(count) - 1)
    return key


def _mxnet_shape_keys(graph: Graph) -> dict[str, tuple[int, int]]:
    """``get_internals().list_outputs()`` name -> (node, output); a repeated name keeps its last
    node, as MXNet's ``dict(zip(...))`` does. A key MXNet would not find (it raises KeyError)
    falls back to the output the edge reads."""
    keys: dict[str, tuple[int, int]] = {}
    for i in range(len(graph.nodes)):
        for k in range(visible_outputs(graph, i)):
            keys[entry_name(graph, i, k)] = (i, k)
    return keys


def _dtype_name(value: Any) -> str:
    """``"float32"``, ``np.float32`` or ``np.dtype("float32")`` -> ``"float32"``."""
    import numpy as np

    return np.dtype(value).name


def summary_of(symbol: Symbol, shape: Optional[Mapping[str, Sequence[int]]] = None) -> Summary:
    """The :class:`~kvcli.symbol.summary.Summary` of ``symbol`` for the given input shapes."""
    return summarize(_shapes(_check(symbol), shape))


def print_summary(symbol: Symbol, shape: Optional[Mapping[str, Sequence[int]]] = None,
                  line_length: int = 120, positions: Sequence[float] = (.44, .64, .74, 1.)) -> None:
    """Print MXNet 1.9.1's summary table: ``Layer (type)``, ``Output Shape`` (without the batch
    dimension), ``Param #``, ``Previous Layer``, then ``Total params: N``.

    The layout is MXNet's line for line: the first node (the data input) as a ``(null)`` row,
    no other variable rows, multi-output layers without a shape, one extra row per further
    previous layer. The ``Param #`` column is counted from inferred shapes (each shared weight
    once; BatchNorm's gamma and beta, not its moving statistics), so it adds up to the total;
    where MXNet's own guesses are wrong (FullyConnected after Pooling or a multi-output
    layer, Deconvolution, RNN, LayerNorm ...) the numbers here are the right ones. A parameter
    whose shape cannot be inferred shows ``+?`` and the total says "at least".
    """
    result = _shapes(_check(symbol), shape)
    if shape is not None and not result.complete and not result.unknown_ops:
        raise ValueError("Input shape is incomplete")  # MXNet's words, as in plot_network
    summary = summarize(result)
    graph = result.graph
    keys = _mxnet_shape_keys(graph)
    params = {layer.index: layer for layer in summary.layers}
    cols = [int(line_length * p) for p in positions] if positions[-1] <= 1 else [int(p) for p in positions]
    # MXNet's ``heads`` is the set of the first head's three numbers (node, output, version),
    # so node 0 counts as a head and is listed as a previous layer; we keep that.
    first = graph.heads[0] if graph.heads else (0, 0, 0)
    heads = set(first)

    def row(fields: Sequence[Any]) -> None:
        line = ""
        for field, stop in zip(fields, cols):
            line += str(field)
            line = line[:stop]
            line += " " * (stop - len(line))
        print(line)

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    last = len(graph.nodes) - 1
    for i, node in enumerate(graph.nodes):
        if node.is_variable and i > 0:
            continue
        out = ""
        if shape is not None and (not node.is_variable or i in heads):
            at = keys.get(node.name if node.is_variable else node.name + "_output")
            found = result.entry(*at) if at is not None else None
            out = "x".join(str(d) for d in found[1:]) if found is not None else ""
        layer = params.get(i)
        count: Any = layer.params if layer is not None else 0
        if layer is not None and layer.unknown_params:
            count = f"{count}+?"
        previous = [graph.nodes[src].name for src, _, _ in node.inputs
                    if not graph.nodes[src].is_variable or src in heads]
        row([f"{node.name}({node.op})", out, count, previous[0] if previous else ""])
        for extra in previous[1:]:
            row(["", "", "", extra])
        print(("=" if i == last else "_") * line_length)
    total = summary.params if summary.exact else f"at least {summary.params}"
    print(f"Total params: {total}")
    print("_" * line_length)
