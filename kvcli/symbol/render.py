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
from kvcli.symbol.graph import Graph
from kvcli.symbol.plan import (KIND_COLOUR, KIND_NAMES, PALETTE, WEIGHT_SUFFIXES, Plan,  # noqa: F401
                               build_plan, looks_like_weight, node_colour, node_label)
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

#: ``kvcli viz --rankdir`` names the side the data starts on (the inputs) and flows away from:
#: ``tb`` inputs at the top, ``lr`` on the left. MXNet's edges point from each consumer back to
#: its inputs (``dir=back``), so dot's own rankdir is the opposite one.
DOT_RANKDIR = {"TB": "BT", "BT": "TB", "LR": "RL", "RL": "LR"}
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
    legend: bool = False,
) -> "Digraph":
    """The :class:`graphviz.Digraph` of a :class:`~kvcli.symbol.plan.Plan`.

    ``readable`` lets boxes grow to fit their labels; ``bounded`` adds :data:`BOUNDED_ATTRS`
    so ``dot`` finishes in seconds on big graphs. ``svg_ids`` names node ``i`` ``v{i}`` and
    edge ``k`` ``e{k}`` (in DOT and so in the SVG: the HTML viewer finds them by these ids).
    ``legend`` adds the graph's label: the caption (if any) over one cell per colour the
    drawing uses, saying what it stands for (:func:`legend_label`). Every label and id from
    the model is plain text (:func:`dot_quote`).
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
    html_label = legend_label(plan, caption) if legend else None
    if html_label is not None:
        graph_attrs.pop("label", None)
        graph_attrs.update(labelloc="t", fontsize="14")
    if bounded:
        graph_attrs.update(BOUNDED_ATTRS)
    if graph_attrs or html_label is not None:
        html = f" label={html_label}" if html_label is not None else ""  # kvcli's own markup, text escaped
        body.append("\tgraph [" + " ".join(f"{k}={dot_quote(v)}" for k, v in graph_attrs.items()) + html + "]\n")
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


def legend_label(plan: Plan, caption: Optional[str] = None) -> Optional[str]:
    """The colour legend as a graphviz HTML-like label: the caption (escaped) in its own row,
    then one filled cell per colour the drawing uses (in the palette's order) naming what it
    stands for, and a doubled cell when something is folded. ``None`` for an empty plan.

    The markup is kvcli's own; the one piece of text that is not, the caption, is escaped,
    so no model or title can add markup (or a link) to it.
    """
    from html import escape

    used = {node.fill for node in plan.nodes if node.members}
    cells = [f'<TD BGCOLOR="{colour}"><FONT POINT-SIZE="11">{escape(KIND_NAMES[kind])}</FONT></TD>'
             for kind, colour in KIND_COLOUR.items() if colour in used]
    if any(node.fold for node in plan.nodes if node.members):
        cells.append('<TD BORDER="3"><FONT POINT-SIZE="11">double border: folded, ×N nodes</FONT></TD>')
    if not cells:
        return None
    per_row = 4  # rows of at most four cells: the legend stays about as narrow as a tall drawing
    rows = []
    if caption:
        span = min(per_row, len(cells))
        rows.append(f'<TR><TD COLSPAN="{span}" BORDER="0"><FONT POINT-SIZE="20">{escape(caption)}</FONT></TD></TR>')
    rows += ["<TR>" + "".join(cells[k:k + per_row]) + "</TR>" for k in range(0, len(cells), per_row)]
    return '<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="4" CELLPADDING="4">' + "".join(rows) + "</TABLE>>"


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
    from kvcli.symbol.layout import run_dot, write_output

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
    if ext in (".dot", ".gv"):
        write_output(path, source.encode("utf-8"))
        return path
    program = dot_program()
    if program is None:
        fallback = path.with_suffix(".dot")
        write_output(fallback, source.encode("utf-8"))
        raise GraphvizMissingError(
            f"graphviz's 'dot' program was not found, so {path.name} was not drawn; wrote "
            f"{fallback} instead. To draw it, {INSTALL_HINT}, then run: "
            f"dot -T{ext[1:]} {fallback} -o {path}")
    if ext == ".pdf":  # printable: cut into A4 pages (kvcli.symbol.pdfpages)
        from kvcli.symbol.pdfpages import paginate

        drawn = run_dot(program, source, "pdf", None, timeout=timeout, progress=progress, notes=notes) or b""
        paged, cut = paginate(drawn)
        write_output(path, paged)
        if notes is not None:
            notes.append(f"{path.name}: {cut.text()}" if cut is not None else
                         f"{path.name}: one page as big as the drawing (graphviz wrote a PDF kvcli does not cut into pages)")
        return path
    run_dot(program, source, ext[1:], path, timeout=timeout, progress=progress, notes=notes)
    return path
