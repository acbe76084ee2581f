"""Which variables of a graph are learnable parameters, auxiliary states, inputs or labels.

Decided by how the graph uses each variable: those the graph feeds into a parameter slot
(weight, bias, gamma, beta, RNN parameters) are parameters, plus free-standing variables whose
name or attributes mark them as parameters (``*_scale``, ``*_alpha``, an ``__init__``
initialiser); a variable read by an auxiliary slot (BatchNorm's moving statistics) is an
auxiliary state; variables given a shape, labels and other data-slot variables are inputs.
A leaf of the symbol pipeline: the summary, the cost, the ``.params`` check and the viewer read it.
"""

from __future__ import annotations

from typing import Optional

from kvcli.symbol import ops
from kvcli.symbol.graph import Graph

PARAM, AUX, INPUT, LABEL = "param", "aux", "input", "label"

_PARAM_SUFFIXES = ("_weight", "_bias", "_gamma", "_beta", "_scale", "_alpha", "_parameters",
                   "_params")
# Only initialisers mark a free variable as a parameter: __lr_mult__/__ctx_group__ are set by
# AttrScope on every node in scope, data included (see the 0.8 mlp_batchnorm fixture).
_PARAM_HIDDEN = ("__init__",)


def variable_roles(graph: Graph, given: Optional[set[str]] = None) -> dict[int, str]:
    """Role (param, aux, input, label) of every variable node, by how the graph uses it."""
    given = given or set()
    slots: dict[int, list[tuple[Optional[ops.OpSpec], str]]] = {}
    for i, node in enumerate(graph.nodes):
        if node.is_variable or not node.inputs:
            continue
        spec = ops.spec(node.op)
        names = graph.input_names(i)
        for (src, _, _), slot in zip(node.inputs, names):
            if graph.nodes[src].is_variable:
                slots.setdefault(src, []).append((spec, slot))
    roles: dict[int, str] = {}
    for i, node in enumerate(graph.nodes):
        if not node.is_variable:
            continue
        used = slots.get(i, [])
        if node.name in given:
            role = INPUT
        elif any(s is not None and slot in s.aux for s, slot in used):
            role = AUX
        elif "label" in node.name.lower() or any(s is not None and slot in s.labels for s, slot in used):
            role = LABEL
        elif any(s is not None and slot in s.params for s, slot in used):
            role = PARAM
        elif node.name.endswith(_PARAM_SUFFIXES) or any(k in node.hidden for k in _PARAM_HIDDEN):
            role = PARAM
        else:
            role = INPUT
        roles[i] = role
    return roles
