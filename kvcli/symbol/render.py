"""Draw a :class:`~kvcli.symbol.graph.Graph` the way ``mx.viz.plot_network`` does.

Same look as MXNet 1.9.1: filled boxes 1.3 x 0.8034 in, oval inputs, the 8-colour
ColorBrewer palette by kind of operator, labels such as ``Convolution\\n7x7/2x2, 64``, edges
drawn from each operator back to its inputs with open arrow tails, weights and biases hidden.
Differences, all deliberate: edge labels show the *full* shape (MXNet drops the batch
dimension and labels a multi-output node's edges with its last output's shape), node ids
are unique even when names repeat or contain ``:``, and a few ops MXNet paints "other"
get their natural colour (Deconvolution like Convolution, ``relu``/``sigmoid``/``tanh`` like
Activation, ``SoftmaxOutput``/``softmax`` like Softmax, L2Normalization like BatchNorm).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Union

from kvcli.errors import GraphvizMissingError, SymbolError
from kvcli.symbol import ops
from kvcli.symbol.graph import Graph, Node
from kvcli.symbol.shapes import ShapeResult, format_shape

if TYPE_CHECKING:  # pragma: no cover
    from graphviz import Digraph

#: plot_network's colour map (ColorBrewer Set3), indexed by kind below.
PALETTE = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69", "#fccde5")
KIND_COLOUR = {
    ops.INPUT: PALETTE[0], ops.LEARNED: PALETTE[1], ops.ACTIVATION: PALETTE[2],
    ops.NORM: PALETTE[3], ops.POOL: PALETTE[4], ops.RESHAPE: PALETTE[5],
    ops.SOFTMAX: PALETTE[6], ops.OTHER: PALETTE[7],
}
#: plot_network's default node attributes.
NODE_ATTRS = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034", "style": "filled"}
#: Names plot_network treats as weights (hidden unless ``hide_weights=False``).
WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean",
                   "_running_var", "_running_mean")
FORMATS = (".svg", ".pdf", ".png", ".dot", ".gv")
#: Above this many drawn nodes, graphviz's layout takes minutes; we refuse unless asked.
DEFAULT_MAX_NODES = 20000

_DIGITS = re.compile(r"\d+")


def looks_like_weight(name: str) -> bool:
    """True for names plot_network hides by default (``*_weight``, ``*_bias``, ...)."""
    return name.endswith(WEIGHT_SUFFIXES)


def _dims(text: Optional[str]) -> str:
    return "x".join(_DIGITS.findall(text or ""))


def node_label(node: Node) -> str:
    """plot_network's label for an operator node (its name for ops it has no label for)."""
    a, op = node.attrs, node.op
    if op in ("Convolution", "Deconvolution") and "kernel" in a and "num_filter" in a:
        stride = _dims(a["stride"]) if "stride" in a else "1"
        return f"{op}\n{_dims(a['kernel'])}/{stride or '1'}, {a['num_filter']}"
    if op == "FullyConnected" and "num_hidden" in a:
        return f"FullyConnected\n{a['num_hidden']}"
    if op == "Activation" and "act_type" in a:
        return f"Activation\n{a['act_type']}"
    if op == "LeakyReLU":
        return f"LeakyReLU\n{a.get('act_type', 'Leaky')}"
    if op == "Pooling" and "pool_type" in a:
        if node.typed.bool("global_pool"):
            return f"Pooling\n{a['pool_type']}, global"
        kernel = _dims(a["kernel"]) if "kernel" in a else "[]"
        stride = _dims(a["stride"]) if "stride" in a else "1"
        return f"Pooling\n{a['pool_type']}, {kernel}/{stride or '1'}"
    if op == "Custom" and "op_type" in a:
        return a["op_type"]
    return node.name


def node_colour(node: Node) -> str:
    """Fill colour by kind of op, as in plot_network (inputs: the first colour)."""
    if node.is_variable:
        return KIND_COLOUR[ops.INPUT]
    spec = ops.spec(node.op)
    return KIND_COLOUR[spec.kind if spec is not None else ops.OTHER]


def _escape(text: str) -> str:
    # graphviz treats backslashes in labels as escapes (\n, \l, \N); keep them literal.
    return text.replace("\\", "\\\\")


def to_digraph(
    graph: Graph,
    shapes: Optional[ShapeResult] = None,
    title: str = "plot",
    rankdir: Optional[str] = None,
    hide_weights: bool = True,
    node_attrs: Optional[Mapping[str, str]] = None,
    save_format: str = "pdf",
    caption: Optional[str] = None,
) -> "Digraph":
    """Build the :class:`graphviz.Digraph` of ``graph`` (no layout is run here).

    ``shapes`` (from :func:`kvcli.symbol.shapes.infer_shapes`) adds shape labels to edges;
    ``caption`` is drawn as a visible title (``title`` only names the graph, as in MXNet).
    """
    from graphviz import Digraph

    base = dict(NODE_ATTRS)
    base.update(node_attrs or {})
    dot = Digraph(name=title, format=save_format)
    if rankdir:
        dot.attr(rankdir=rankdir)
    if caption:
        dot.attr(label=_escape(caption), labelloc="t", fontsize="20")
    nodes = graph.nodes
    names = [n.name for n in nodes]
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    ids = [name if seen[name] == 1 and ":" not in name and "\\" not in name else f"node{i}"
           for i, name in enumerate(names)]
    hidden: set[int] = set()
    # Lines are written straight into ``dot.body`` in exactly the form Digraph.node()/edge()
    # produce (label first, then sorted attributes), but each id is quoted once and the
    # constant attribute tail once per colour: several times faster on big graphs.
    q = _quoter()
    tails: dict[tuple[str, str], str] = {}
    body = dot.body
    for i, node in enumerate(nodes):
        attrs = dict(base)
        if node.is_variable:
            if looks_like_weight(node.name) and hide_weights:
                hidden.add(i)
                continue
            attrs["shape"] = "oval"
            label = node.name
        else:
            label = node_label(node)
        attrs["fillcolor"] = node_colour(node)
        key = (attrs["fillcolor"], attrs["shape"])
        tail = tails.get(key) if not node_attrs else None
        if tail is None:
            tail = " ".join(f"{k}={q(str(v))}" for k, v in sorted(attrs.items()))
            tails[key] = tail
        body.append(f"\t{q(ids[i])} [label={q(_escape(label))} {tail}]\n")
    for i, node in enumerate(nodes):
        if node.is_variable:
            continue
        head_id = q(ids[i])
        for src, k, _ in node.inputs:
            if src in hidden:
                continue
            label = format_shape(shapes.entry(src, k)) if shapes is not None else ""
            body.append(f"\t{head_id} -> {q(ids[src])} [label={q(label)} arrowtail=open dir=back]\n")
    return dot


def _quoter() -> "Callable[[str], str]":
    """graphviz's own quoting, memoised (ids and labels repeat across nodes and edges)."""
    from graphviz.quoting import quote

    cache: dict[str, str] = {}

    def q(text: str) -> str:
        out = cache.get(text)
        if out is None:
            out = cache[text] = quote(text)
        return out

    return q


def drawn_nodes(graph: Graph, hide_weights: bool = True) -> int:
    """How many nodes :func:`to_digraph` draws (for the size guard)."""
    if not hide_weights:
        return len(graph.nodes)
    return sum(1 for n in graph.nodes if not (n.is_variable and looks_like_weight(n.name)))


def dot_program() -> Optional[str]:
    """Path of graphviz's ``dot`` (``KVCLI_DOT`` overrides), or ``None`` if it is missing."""
    override = os.environ.get("KVCLI_DOT")
    if override:
        return override if Path(override).exists() else None
    return shutil.which("dot")


INSTALL_HINT = ("install graphviz (Debian/Ubuntu: sudo apt-get install graphviz; macOS: brew "
                "install graphviz; conda: conda install graphviz)")


def write(dot: "Digraph", out: Union[str, os.PathLike[str]], timeout: Optional[float] = None) -> Path:
    """Write ``dot`` to ``out``: ``.dot``/``.gv`` as source, ``.svg``/``.pdf``/``.png`` via ``dot``.

    Without the ``dot`` program the DOT source is still written next to ``out`` and
    :class:`GraphvizMissingError` says how to install graphviz.
    """
    path = Path(out)
    ext = path.suffix.lower()
    if ext not in FORMATS:
        raise SymbolError(f"{path}: unknown output format '{ext or '(none)'}'; "
                          f"use one of {', '.join(FORMATS[:4])}")
    source = dot.source
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    if ext in (".dot", ".gv"):
        path.write_text(source, encoding="utf-8")
        return path
    program = dot_program()
    if program is None:
        fallback = path.with_suffix(".dot")
        fallback.write_text(source, encoding="utf-8")
        raise GraphvizMissingError(
            f"graphviz's 'dot' program was not found, so {path.name} was not drawn; wrote "
            f"{fallback} instead. To draw it, {INSTALL_HINT}, then run: "
            f"dot -T{ext[1:]} {fallback} -o {path}")
    try:
        proc = subprocess.run([program, f"-T{ext[1:]}", "-o", str(path)], input=source.encode("utf-8"),
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SymbolError(f"{path}: graphviz took longer than {timeout:.0f}s to lay out the graph; "
                          "write a .dot file instead") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SymbolError(f"{path}: graphviz 'dot' failed: {message[0] if message else proc.returncode}")
    return path
