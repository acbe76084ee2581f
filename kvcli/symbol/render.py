"""Draw a :class:`~kvcli.symbol.graph.Graph` the way ``mx.viz.plot_network`` does.

Same look as MXNet 1.9.1: filled boxes 1.3 x 0.8034 in, oval inputs, the 8-colour
ColorBrewer palette by kind of operator, labels such as ``Convolution\\n7x7/2x2, 64``, edges
drawn from each operator back to its inputs with open arrow tails, weights and biases hidden.
Differences, all deliberate: edge labels show the *full* shape (MXNet drops the batch
dimension and labels a multi-output node's edges with its last output's shape) and node ids
are unique even when names repeat or contain ``:``. Colours are MXNet's, op for op
(:func:`kvcli.symbol.ops.draw_kind`); ``mx.viz.plot_network`` itself is in :mod:`kvcli.symbol.viz`.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Union

from kvcli import config
from kvcli.errors import GraphvizMissingError, SymbolError
from kvcli.osutil import PLAIN_FILE, atomic_write
from kvcli.symbol.graph import Graph
from kvcli.symbol.plan import (KIND_COLOUR, PALETTE, WEIGHT_SUFFIXES, Plan, build_plan,  # noqa: F401
                               looks_like_weight, node_colour, node_label)
from kvcli.symbol.shapes import ShapeResult

if TYPE_CHECKING:  # pragma: no cover
    from graphviz import Digraph

    from kvcli.symbol.layout import Progress

#: plot_network's default node attributes.
NODE_ATTRS = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034", "style": "filled"}
#: Readable mode (the CLI): the same size as a minimum, boxes grow to fit their labels.
READABLE_ATTRS = {**NODE_ATTRS, "fixedsize": "false", "margin": "0.08,0.04"}
#: Weights drawn on request (--show-weights): small ovals in small type, still legible.
SMALL_ATTRS = {"width": "0.4", "height": "0.25", "fontsize": "9", "margin": "0.04,0.02"}
FORMATS = (".svg", ".pdf", ".png", ".dot", ".gv")
#: Above this many drawn nodes, graphviz's layout takes minutes; we refuse unless asked.
DEFAULT_MAX_NODES = 20000
#: graphviz settings that bound the layout's time (network simplex and crossing-minimisation
#: iterations, straight edges): a few seconds for thousands of nodes instead of hours.
BOUNDED_ATTRS = {"nslimit": "2", "nslimit1": "2", "mclimit": "0.2", "searchsize": "20",
                 "splines": "line", "remincross": "false"}

#: Longest node name used as its DOT id (longer names get ``node<i>``).
MAX_ID = 1000
_PLAIN_ID = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*|-?(\.[0-9]+|[0-9]+(\.[0-9]*)?))$")
_DOT_KEYWORDS = {"node", "edge", "digraph", "graph", "subgraph", "strict"}


def dot_quote(text: str) -> str:
    """A DOT identifier or label that graphviz always reads as plain text.

    Unlike ``graphviz.quoting.quote`` this never passes ``<...>`` through as an HTML-like
    label (which could carry ``HREF="javascript:..."``) and escapes every backslash and quote,
    so a name can neither end the string early nor become an escape sequence (``\\N``, ``\\l``).
    """
    if _PLAIN_ID.match(text) and text.lower() not in _DOT_KEYWORDS:
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


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
    """Build the :class:`graphviz.Digraph` of ``graph`` with plot_network's labels (no layout).

    ``shapes`` (from :func:`kvcli.symbol.shapes.infer_shapes`) adds shape labels to edges;
    ``caption`` is drawn as a visible title (``title`` only names the graph, as in MXNet).
    """
    plan = build_plan(graph, shapes, hide_weights=hide_weights)
    return plan_to_digraph(plan, title=title, rankdir=rankdir, node_attrs=node_attrs,
                           save_format=save_format, caption=caption)


def plan_to_digraph(
    plan: Plan,
    title: str = "plot",
    rankdir: Optional[str] = None,
    node_attrs: Optional[Mapping[str, str]] = None,
    save_format: str = "pdf",
    caption: Optional[str] = None,
    readable: bool = False,
    bounded: bool = False,
    svg_ids: bool = False,
) -> "Digraph":
    """The :class:`graphviz.Digraph` of a :class:`~kvcli.symbol.plan.Plan`.

    ``readable`` lets boxes grow to fit their labels; ``bounded`` adds :data:`BOUNDED_ATTRS`
    so ``dot`` finishes in seconds on big graphs. ``svg_ids`` names node ``i`` ``v{i}`` and
    edge ``k`` ``e{k}`` (in DOT and so in the SVG: the HTML viewer finds them by these ids).
    Every label and id is plain text (:func:`dot_quote`).
    """
    from graphviz import Digraph, nohtml

    base = dict(READABLE_ATTRS if readable else NODE_ATTRS)
    base.update(node_attrs or {})
    dot = Digraph(name=nohtml(title), format=save_format)  # nohtml: '<...>' is not markup
    body = dot.body
    # Graph attributes are written by hand too: Digraph.attr() would let '<...>' through as HTML.
    graph_attrs: dict[str, str] = {}
    if rankdir:
        graph_attrs["rankdir"] = rankdir
    if caption:
        graph_attrs.update(label=caption, labelloc="t", fontsize="20")
    if bounded:
        graph_attrs.update(BOUNDED_ATTRS)
    if graph_attrs:
        body.append("\tgraph [" + " ".join(f"{k}={dot_quote(v)}" for k, v in graph_attrs.items()) + "]\n")
    names = [n.name for n in plan.nodes]
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    if svg_ids:
        ids = [f"v{i}" for i in range(len(names))]
    else:
        # a name is its own id when it is unique, plain and short (graphviz refuses long strings)
        ids = [name if seen[name] == 1 and ":" not in name and "\\" not in name and len(name) <= MAX_ID
               else f"node{i}" for i, name in enumerate(names)]
    # Lines are written straight into ``dot.body`` in exactly the form Digraph.node()/edge()
    # produce (label first, then sorted attributes), but each id is quoted once and the
    # constant attribute tail once per colour: several times faster on big graphs.
    q = _quoter()
    tails: dict[tuple[str, str, bool, bool], str] = {}
    for i, node in enumerate(plan.nodes):
        folded = bool(node.fold)
        key = (node.fill, node.shape, folded, node.small)
        tail = tails.get(key)
        if tail is None:
            attrs = dict(base)
            attrs["shape"] = node.shape
            attrs["fillcolor"] = node.fill
            if folded:  # a fold is drawn doubled, like a stack of boxes
                attrs["peripheries"] = "2"
            if node.small:
                attrs.update(SMALL_ATTRS)
            tail = " ".join(f"{k}={q(str(v))}" for k, v in sorted(attrs.items()))
            tails[key] = tail
        extra = f" id={ids[i]}" if svg_ids else ""
        body.append(f"\t{q(ids[i])} [label={q(node.label)} {tail}{extra}]\n")
    for k, e in enumerate(plan.edges):
        extra = f" id=e{k}" if svg_ids else ""
        body.append(f"\t{q(ids[e.head])} -> {q(ids[e.tail])} [label={q(e.label)} arrowtail=open dir=back{extra}]\n")
    return dot


def _quoter() -> "Callable[[str], str]":
    """:func:`dot_quote`, memoised (ids and labels repeat across nodes and edges)."""
    cache: dict[str, str] = {}

    def q(text: str) -> str:
        out = cache.get(text)
        if out is None:
            out = cache[text] = dot_quote(text)
        return out

    return q


def drawn_nodes(graph: Graph, hide_weights: bool = True) -> int:
    """How many nodes :func:`to_digraph` draws (for the size guard)."""
    if not hide_weights:
        return len(graph.nodes)
    return sum(1 for n in graph.nodes if not (n.is_variable and looks_like_weight(n.name)))


def dot_program() -> Optional[str]:
    """Path of graphviz's ``dot`` (``KVCLI_DOT`` overrides), or ``None`` if it is missing."""
    override = config.get(config.DOT)
    if override:
        return config.check_program(config.DOT, override)
    return shutil.which("dot")


INSTALL_HINT = ("install graphviz (Debian/Ubuntu: sudo apt-get install graphviz; macOS: brew "
                "install graphviz; conda: conda install graphviz)")


def render_bytes(dot: "Digraph", fmt: str = "svg", timeout: Optional[float] = None,
                 progress: Optional["Progress"] = None) -> bytes:
    """Lay out ``dot`` and return the picture (``svg``, ``pdf``, ``png``) as bytes
    (``progress``: see :data:`kvcli.symbol.layout.Progress`)."""
    from kvcli.symbol.layout import run_dot

    program = dot_program()
    if program is None:
        raise GraphvizMissingError(f"graphviz's 'dot' program was not found; {INSTALL_HINT}")
    return run_dot(program, dot.source, fmt, None, timeout=timeout, progress=progress) or b""


def write(dot: "Digraph", out: Union[str, os.PathLike[str]], timeout: Optional[float] = None,
          progress: Optional["Progress"] = None, fmt: Optional[str] = None,
          notes: Optional[list[str]] = None) -> Path:
    """Write ``dot`` to ``out``: ``.dot``/``.gv`` as source, ``.svg``/``.pdf``/``.png`` via ``dot``.

    ``out`` ``"-"`` writes to standard output (``fmt``: ``svg`` by default, or ``dot``).
    The picture appears only when complete (see :func:`kvcli.symbol.layout.run_dot`); a PNG
    that graphviz had to shrink adds a one-line note to ``notes``; ``progress`` shows that
    ``dot`` is working (see :data:`kvcli.symbol.layout.Progress`).
    Without the ``dot`` program the DOT source is still written next to ``out`` and
    :class:`GraphvizMissingError` says how to install graphviz.
    """
    from kvcli.symbol.layout import run_dot

    to_stdout = str(out) == "-"
    path = Path(out)
    ext = "." + fmt if fmt else (".svg" if to_stdout else path.suffix.lower())
    if ext not in FORMATS:
        raise SymbolError(f"{path}: unknown output format '{ext or '(none)'}'; "
                          f"use one of {', '.join(FORMATS[:4])}")
    source = dot.source
    if to_stdout:
        if ext in (".dot", ".gv"):
            sys.stdout.write(source)
            sys.stdout.flush()
            return path
        sys.stdout.buffer.write(render_bytes(dot, ext[1:], timeout=timeout, progress=progress))
        sys.stdout.flush()
        return path
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    if ext in (".dot", ".gv"):
        atomic_write(path, source.encode("utf-8"), mode=PLAIN_FILE, sync=False)
        return path
    program = dot_program()
    if program is None:
        fallback = path.with_suffix(".dot")
        atomic_write(fallback, source.encode("utf-8"), mode=PLAIN_FILE, sync=False)
        raise GraphvizMissingError(
            f"graphviz's 'dot' program was not found, so {path.name} was not drawn; wrote "
            f"{fallback} instead. To draw it, {INSTALL_HINT}, then run: "
            f"dot -T{ext[1:]} {fallback} -o {path}")
    run_dot(program, source, ext[1:], path, timeout=timeout, progress=progress, notes=notes)
    return path
