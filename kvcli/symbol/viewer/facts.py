"""What a box that stands for many graph nodes (a fold or a group) holds, summed over its members.

A folded box must never show one member's numbers as if they were the box's: the viewer shows
what :func:`box_facts` computes here, over *all* members (not only the ones listed): how many
there are and of which ops, the attributes they share (and how many values the others take),
their output shapes (one, or the first and last and how many), the learnable parameters and
auxiliary states per member and in all (a weight several members use is counted once, and
said so), their multiply-accumulates and output bytes.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from kvcli.symbol.graph import Graph
from kvcli.symbol.plan import DrawNode
from kvcli.symbol.roles import AUX, PARAM
from kvcli.symbol.shapes import ShapeResult, format_shape
from kvcli.symbol.summary import Layer

#: Attribute values shown when members differ (each with its count).
MAX_VALUES = 3


def _range(values: Sequence[int]) -> list[int]:
    return [min(values), max(values)] if values else [0, 0]


def box_facts(draw: DrawNode, graph: Graph, shapes: Optional[ShapeResult], roles: dict[int, str],
              layer_of: dict[int, Layer]) -> dict[str, Any]:
    """The facts of one box over all its members (see the module docstring)."""
    members = draw.members
    ops: dict[str, int] = {}
    for g in members:
        op = graph.nodes[g].op
        ops[op] = ops.get(op, 0) + 1

    def size(src: int) -> Optional[int]:
        shape = shapes.entry(src, 0) if shapes is not None else None
        return math.prod(shape) if shape is not None else None

    out: dict[str, Any] = {"members": len(members), "ops": ops}
    for role, key in ((PARAM, "params"), (AUX, "aux")):
        each: list[int] = []
        seen: set[int] = set()
        total = 0
        unknown = False
        uses = 0  # weights used, counting a shared one once per member
        for g in members:
            mine = {src for src, _, _ in graph.nodes[g].inputs if roles.get(src) == role}
            n = 0
            for src in mine:
                s = size(src)
                if s is None:
                    unknown = True
                    continue
                n += s
                if src not in seen:
                    seen.add(src)
                    total += s
            uses += n
            each.append(n)
        out[key] = {"each": _range(each), "total": total, "shared": uses > total, "unknown": unknown}
    texts: dict[str, int] = {}
    order: list[str] = []
    for g in sorted(members):  # in graph order: the first and the last the data meets
        text = format_shape(shapes.entry(g, 0)) if shapes is not None and shapes.outputs[g] else "?"
        if text not in texts:
            order.append(text)
        texts[text] = texts.get(text, 0) + 1
    out["out"] = {"first": order[0], "last": order[-1], "kinds": len(order)} if order else {"kinds": 0}
    attrs: dict[str, dict[str, int]] = {}
    for g in members:
        for k, v in graph.nodes[g].attrs.items():
            attrs.setdefault(k, {})
            attrs[k][v] = attrs[k].get(v, 0) + 1
    # an attribute all members share is shown as it is; else its values with their counts
    # (the commonest first) and how many members do not have it
    out["attrs"] = {k: (next(iter(v)) if len(v) == 1 and sum(v.values()) == len(members) else
                        {"values": len(v), "without": len(members) - sum(v.values()),
                         "top": sorted(v.items(), key=lambda kv: -kv[1])[:MAX_VALUES]})
                    for k, v in attrs.items()}
    macs: list[int] = []
    total_bytes = 0
    macs_unknown = bytes_unknown = False
    for g in members:
        layer = layer_of.get(g)
        m = layer.macs if layer is not None else 0
        b = layer.out_bytes if layer is not None else None
        if m is None:
            macs_unknown = True
        else:
            macs.append(m)
        if b is None:
            bytes_unknown = True
        else:
            total_bytes += b
    out["macs"] = {"each": _range(macs), "total": sum(macs), "unknown": macs_unknown}
    out["bytes"] = {"total": total_bytes, "unknown": bytes_unknown}
    return out
