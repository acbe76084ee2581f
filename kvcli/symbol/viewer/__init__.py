"""``kvcli viz model.json -o model.html``: one self-contained, offline HTML viewer.

The page embeds the SVG that graphviz's ``dot`` draws for the (folded when big) plan, the
data of every graph node as JSON, the unfolded drawing's boxes and edges, the summary table,
and a small hand-written viewer (:data:`SCRIPTS` and ``viewer.css`` in this package; no network
access of any kind): pan and zoom, search with next/previous, a side panel per node,
collapse/expand of name-prefix and repeated-block groups, expanding a fold
(``l0_t0 … l0_t29 (×30)``) into its members in place, a sortable summary table, export to
SVG/PNG. An expanded view is laid out in the browser by dagre (``dagre.min.js``, MIT, bundled
with its licence in ``LICENSE-dagre.txt``, which the page carries as a comment).

Everything from the model file reaches the page as text only: names and attributes are in
a JSON ``<script type="application/json">`` block with ``<`` escaped, and the SVG's labels
were written by :func:`kvcli.symbol.render.dot_quote` (never HTML-like labels).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from importlib import resources
from typing import TYPE_CHECKING, Any, Optional

from kvcli.symbol.fold import MAX_FOLD_NAME, MIN_REPEAT, name_templates
from kvcli.symbol.plan import OUTPUT_OP, Plan, counts_text, cut
from kvcli.symbol.shapes import format_shape
from kvcli.symbol.summary import PARAM, AUX, Summary, short_name, variable_roles
from kvcli.symbol.viewer.facts import box_facts
from kvcli.symbol.viewer.weights import DEFAULT_VALUES, params_data

#: Most member names listed per folded node (the count is always given).
MAX_MEMBERS = 200
#: Most collapsible groups offered in the side bar (largest first).
MAX_GROUPS = 300
_SEP = re.compile(r"[_/.:-]")

if TYPE_CHECKING:  # pragma: no cover
    from kvcli.symbol.params import ParamsCheck


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


#: The viewer's script, by purpose, in the order the page runs them: one function holds them
#: all (they share its variables), so each file is a part of that function's body.
SCRIPTS = ("page.js", "panel.js", "search.js", "expand.js", "table.js", "cost.js", "start.js")


def viewer_script() -> str:
    """The viewer's hand-written script: :data:`SCRIPTS` inside one strict-mode function."""
    return '(function () {\n  "use strict";\n' + "".join(_asset(name) for name in SCRIPTS) + "})();\n"


def _svg_body(svg: str) -> str:
    """The ``<svg>`` element alone: no XML prolog, no DOCTYPE (which names an http DTD)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def _json_script(data: Any) -> str:
    # "<" escaped: no "</script>" or "<!--" can appear inside the block, whatever the names are
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


def base_data(plan: Plan, base: Plan) -> dict[str, Any]:
    """The unfolded drawing that folds of ``plan`` expand into: one box per drawn graph node.

    ``nodes`` are ``[graph index, label, fill, shape, small]``; ``edges`` are
    ``[head, tail, label index]`` into ``labels``, an end being a graph index, or ``-(d + 1)``
    for ``plan``'s output-shape label ``d``. Only what ``plan`` draws is included.
    """
    draw_of = {m: d for d, node in enumerate(plan.nodes) for m in node.members}
    drawn = set(draw_of)
    out_of = {id(node): d for d, node in enumerate(plan.nodes) if node.op == OUTPUT_OP}
    # an output label folded with others (fold_repeats): found by the draw node it labels
    folded_out = {e.tail: e.head for e in plan.edges if plan.nodes[e.head].op == OUTPUT_OP}
    head_of = {e.head: base.nodes[e.tail].members[0] for e in base.edges
               if base.nodes[e.head].op == OUTPUT_OP and base.nodes[e.tail].members}
    end: dict[int, int] = {}
    nodes = []
    for b, node in enumerate(base.nodes):
        if node.op == OUTPUT_OP:
            d = out_of.get(id(node))
            if d is None and b in head_of and head_of[b] in draw_of:
                d = folded_out.get(draw_of[head_of[b]])
            if d is not None:
                end[b] = -(d + 1)
            continue
        if len(node.members) != 1:
            raise ValueError(f"base plan node {node.name!r} is folded; pass the plan before folding")
        g = node.members[0]
        if g in drawn:
            end[b] = g
            nodes.append([g, node.label, node.fill, node.shape, int(node.small)])
    labels: dict[str, int] = {}
    edges = []
    for e in base.edges:
        if e.head in end and e.tail in end:
            edges.append([end[e.head], end[e.tail], labels.setdefault(e.label, len(labels))])
    return {"nodes": nodes, "edges": edges, "labels": list(labels)}


def node_data(plan: Plan, summary: Summary, dtypes: Optional[list[Optional[str]]] = None,
              base: Optional[Plan] = None, rankdir: str = "TB",
              params: Optional["ParamsCheck"] = None, values: Optional[int] = DEFAULT_VALUES) -> dict[str, Any]:
    """The JSON the viewer reads: draw nodes, every graph node's details, the unfolded
    drawing (:func:`base_data`), groups, summary.

    ``base`` is the plan before folding (``None``: ``plan`` itself, which must have no folds).
    ``params`` (``--params``) adds each tensor's statistics, the check's problems and the
    first ``values`` values of each tensor (``None``: all; :mod:`kvcli.symbol.viewer.weights`).
    """
    if base is None:
        if any(draw.fold for draw in plan.nodes):
            raise ValueError("a folded plan needs base= (the plan before folding) so its folds can expand")
        base = plan
    graph, shapes = plan.graph, plan.shapes
    draw_of = {m: d for d, draw in enumerate(plan.nodes) for m in draw.members}
    roles = variable_roles(graph, set(shapes.given) if shapes is not None else set())
    layer_of = {layer.index: layer for layer in summary.layers}

    def shape_text(i: int, k: int) -> str:
        return format_shape(shapes.entry(i, k)) if shapes is not None else "?"

    # a weight shared by several nodes (an unrolled RNN's steps) is counted once, at its
    # first user; the others say what they share and where it is counted
    owner: dict[int, int] = {}
    user: dict[int, int] = {}  # a variable's first consumer: where a hidden weight is shown
    for i, node in enumerate(graph.nodes):
        for src, _, _ in node.inputs:
            user.setdefault(src, i)
            if roles.get(src) in (PARAM, AUX):
                owner.setdefault(src, i)

    def size(src: int) -> Optional[int]:
        shape = shapes.entry(src, 0) if shapes is not None else None
        return math.prod(shape) if shape is not None else None

    nodes_out = []
    for i, node in enumerate(graph.nodes):
        item: dict[str, Any] = {"name": node.name, "op": node.op, "d": draw_of.get(i, -1)}
        if node.attrs:
            item["attrs"] = node.attrs
        if node.is_variable:
            item["role"] = roles.get(i, "input")
            item["out"] = [shape_text(i, 0)]
            if i not in draw_of and user.get(i, -1) in draw_of:
                item["by"] = user[i]  # not drawn (a weight): found, linked and shown at its consumer
        else:
            ins: list[list[str]] = []
            weights: list[list[str]] = []
            for src, k, _ in node.inputs:
                edge = [graph.nodes[src].name, shape_text(src, k)]
                src_type = dtypes[src] if dtypes is not None else None
                if src_type:
                    edge.append(src_type)
                (weights if roles.get(src) in (PARAM, AUX) else ins).append(edge)
            item["in"] = ins
            if weights:
                item["weights"] = weights
            shared = [[graph.nodes[src].name, size(src), graph.nodes[owner[src]].name]
                      for src, _, _ in node.inputs if roles.get(src) in (PARAM, AUX) and owner.get(src, i) != i]
            if shared:
                item["shared"] = shared
            n_out = len(shapes.outputs[i]) if shapes is not None else 1
            item["out"] = [shape_text(i, k) for k in range(n_out)]
            layer = layer_of.get(i)
            if layer is not None:
                item["params"], item["aux"] = layer.params, layer.aux
                item["macs"], item["bytes"] = layer.macs, layer.out_bytes  # None: unknown
        if dtypes is not None and dtypes[i]:
            item["dtype"] = dtypes[i]
        nodes_out.append(item)
    draws = []
    for draw in plan.nodes:
        entry: dict[str, Any] = {"label": draw.label, "name": cut(draw.name), "title": draw.heading,
                                 "op": cut(draw.op), "members": draw.members[:MAX_MEMBERS],
                                 "count": len(draw.members), "fill": draw.fill, "shape": draw.shape}
        if draw.small:
            entry["small"] = 1
        if draw.fold:
            entry["fold"] = draw.fold
        if len(draw.members) > 1:  # what the box stands for, over all its members
            entry["box"] = box_facts(draw, graph, shapes, roles, layer_of)
        draws.append(entry)
    rows = [{"name": short_name(layer.name), "op": short_name(layer.op),
             "shape": ", ".join(format_shape(s) for s in layer.output_shapes[:3])
             + (f", … ({len(layer.output_shapes)} outputs)" if len(layer.output_shapes) > 3 else ""),
             "params": layer.params, "aux": layer.aux, "macs": layer.macs, "bytes": layer.out_bytes,
             "g": layer.index, "unknown": bool(layer.unknown_params)} for layer in summary.layers]
    out = {
        "draws": draws, "nodes": nodes_out, "groups": groups(plan), "levels": levels(plan),
        "base": base_data(plan, base), "rankdir": rankdir.upper(),
        "summary": {"rows": rows, "params": summary.total_text(summary.params),
                    "aux": summary.total_text(summary.aux), "exact": summary.exact,
                    "macs": summary.macs, "macs_exact": summary.macs_exact, "macs_text": summary.macs_text(),
                    "bytes": summary.out_bytes, "bytes_text": summary.bytes_text(),
                    "outputs": {short_name(k): format_shape(v) for k, v in summary.outputs.items()}},
        "notes": plan.notes,
        "counts": counts_text(len(graph.nodes), len(graph.nodes) - base.drawn_members, plan.drawn_members,
                              plan.drawn_boxes),
    }
    if params is not None:
        out["params"] = params_data(params, values)
    return out


def levels(plan: Plan) -> list[int]:
    """Per draw node, how many edges it is from the nearest input (a node nothing feeds): the
    page expands folds level by level. Breadth-first, so cycles through folds are no matter."""
    from collections import deque

    after: list[list[int]] = [[] for _ in plan.nodes]
    fed = [False] * len(plan.nodes)
    for e in plan.edges:
        after[e.tail].append(e.head)
        fed[e.head] = True
    level = [-1] * len(plan.nodes)
    todo = deque(i for i, f in enumerate(fed) if not f)
    for i in todo:
        level[i] = 0
    while todo:
        i = todo.popleft()
        for j in after[i]:
            if level[j] < 0:
                level[j] = level[i] + 1
                todo.append(j)
    return [x if x >= 0 else 0 for x in level]


def groups(plan: Plan) -> list[dict[str, Any]]:
    """Collapsible groups of draw nodes: name prefixes (``stage3_*``) and repeated blocks
    (``stage3_unit*_conv1``); each has at least two members and is not the whole graph."""
    found: dict[str, list[int]] = {}
    for d, node in enumerate(plan.nodes):
        if node.op == OUTPUT_OP or len(node.name) > MAX_FOLD_NAME:
            continue
        parts = [p for p in _SEP.split(node.name) if p]
        for depth in (1, 2):
            if len(parts) > depth:
                found.setdefault("_".join(parts[:depth]) + "_*", []).append(d)
    templates = name_templates([n.name for n in plan.nodes])
    for d, node in enumerate(plan.nodes):
        hit = templates.get(node.name) if node.op != OUTPUT_OP else None
        if hit is not None:
            found.setdefault(hit[0], []).append(d)
    total = len(plan.nodes)
    out = [{"name": cut(k), "draws": v} for k, v in found.items() if MIN_REPEAT - 1 <= len(v) < total]
    out.sort(key=lambda g: (-len(g["draws"]), g["name"]))
    return out[:MAX_GROUPS]


def build_html(plan: Plan, summary: Summary, svg: str, title: str,
               dtypes: Optional[list[Optional[str]]] = None, base: Optional[Plan] = None,
               rankdir: str = "TB", params: Optional["ParamsCheck"] = None,
               values: Optional[int] = DEFAULT_VALUES) -> str:
    """The whole page as one string (write it with UTF-8).

    ``base`` is the plan before folding (see :func:`node_data`); ``rankdir`` the direction
    ``svg`` was laid out in, which expanded views keep.
    """
    data = node_data(plan, summary, dtypes, base=base, rankdir=rankdir, params=params, values=values)
    data["title"] = title
    script = f"/*\n{_asset('LICENSE-dagre.txt')}*/\n{_asset('dagre.min.js')}\n{viewer_script()}"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp(script)}\">\n"
        f"<title>{html.escape(title)} — kvcli viz</title>\n<style>{_asset('viewer.css')}</style>\n"
        "</head><body>\n"
        f"<div id=\"graph-svg\" hidden>{_svg_body(svg)}</div>\n"
        f"<script type=\"application/json\" id=\"kvcli-data\">{_json_script(data)}</script>\n"
        f"<script>{script}</script>\n"
        "</body></html>\n"
    )


def csp(script: str) -> str:
    """The page's Content-Security-Policy: no network of any kind (not an image, a font or a
    form submission), and no script runs but ``script`` itself (allowed by its SHA-256), so
    text from a model can never become code. Inline styles stay allowed (they cannot run code
    or, with no network, send anything)."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
            "img-src data: blob:; form-action 'none'; base-uri 'none'")
