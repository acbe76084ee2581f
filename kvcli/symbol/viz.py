"""``mx.viz`` without MXNet: :func:`plot_network` and :func:`print_summary`.

Same signatures as MXNet 1.9.1's ``mxnet.visualization``. ``plot_network`` returns a
:class:`graphviz.Digraph` that looks like MXNet's; ``print_summary`` prints MXNet's table
layout but with parameter counts taken from inferred shapes, so its totals equal the sum of
``infer_shape``'s argument shapes (MXNet's own version miscounts FullyConnected after
pooling and unrolled RNNs, and crashes on some graphs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import warnings

from kvcli.errors import ShapeInferenceError
from kvcli.symbol.build import Symbol
from kvcli.symbol.dtypes import infer_dtypes
from kvcli.symbol.plan import build_plan
from kvcli.symbol.render import plan_to_digraph
from kvcli.symbol.shapes import Shape, ShapeResult, format_shape, infer_shapes
from kvcli.symbol.summary import Summary, summarize

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

    Args:
        symbol: the network.
        title: the graph's name (and the file name ``render`` uses).
        save_format: graphviz output format for ``render`` (``pdf``, ``svg``, ``png``).
        shape: input shapes, e.g. ``{"data": (1, 3, 224, 224)}``; edges then show shapes.
        dtype: input types, e.g. ``{"data": "float32"}`` (or numpy dtypes); edges then show
            ``shape(dtype)`` as in MXNet.
        node_attrs: graphviz node attributes overriding the defaults.
        hide_weights: hide ``*_weight``/``*_bias``/... inputs (MXNet's default).
    """
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
    plan = build_plan(graph, shapes, hide_weights=hide_weights,
                      dtypes=(lambda node, _k: types[node]) if types is not None else None)
    return plan_to_digraph(plan, title=title, node_attrs=node_attrs, save_format=save_format)


def _dtype_name(value: Any) -> str:
    """``"float32"``, ``np.float32`` or ``np.dtype("float32")`` -> ``"float32"``."""
    import numpy as np

    return np.dtype(value).name


def summary_of(symbol: Symbol, shape: Optional[Mapping[str, Sequence[int]]] = None) -> Summary:
    """The :class:`~kvcli.symbol.summary.Summary` of ``symbol`` for the given input shapes."""
    return summarize(_shapes(_check(symbol), shape))


def print_summary(symbol: Symbol, shape: Optional[Mapping[str, Sequence[int]]] = None,
                  line_length: int = 120, positions: Sequence[float] = (.44, .64, .74, 1.)) -> None:
    """Print MXNet's summary table (layer, output shape, params, previous layer) and totals."""
    summary = summary_of(symbol, shape)
    cols = [int(line_length * p) for p in positions] if positions[-1] <= 1 else [int(p) for p in positions]

    def row(fields: Sequence[Any]) -> None:
        line = ""
        for field, stop in zip(fields, cols):
            line += str(field)
            line = line[:stop]
            line += " " * (stop - len(line))
        print(line.rstrip())

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    for i, layer in enumerate(summary.layers):
        shapes = ", ".join(format_shape(s) for s in layer.output_shapes)
        count: Any = layer.params + layer.aux
        if layer.unknown_params:
            count = f"{count}+?"
        row([f"{layer.name}({layer.op})", shapes, count, layer.previous[0] if layer.previous else ""])
        for extra in layer.previous[1:]:
            row(["", "", "", extra])
        print(("=" if i == len(summary.layers) - 1 else "_") * line_length)
    print(f"Total params: {summary.total_text(summary.params)}")
    print(f"Auxiliary states: {summary.total_text(summary.aux)}")
    print("_" * line_length)
