"""Names of a graph's entries as MXNet spells them, and names made safe to show.

The lowest layer of drawing and summarising (used by :mod:`plan`, :mod:`summary`,
:mod:`build`, :mod:`viz`): it depends only on the graph and the operator table.
"""

from __future__ import annotations

from kvcli.symbol import ops
from kvcli.errors import AttrError
from kvcli.symbol.graph import MAX_NAME as MAX_NAME, Graph
from kvcli.symbol.graph import printable as printable, short_name as short_name  # shown names: see graph



def output_names(graph: Graph) -> list[str]:
    """MXNet's ``list_outputs`` names for the graph's heads."""
    names = []
    for node_i, k, _ in graph.heads:
        node = graph.nodes[node_i]
        names.append(entry_name(graph, node_i, k) if not node.is_variable else node.name)
    return names


def entry_name(graph: Graph, node_i: int, k: int) -> str:
    """MXNet's name of output ``k`` of node ``node_i`` (``fc1_output``, ``rnn_state_output``)."""
    node = graph.nodes[node_i]
    if node.is_variable:
        return node.name
    spec = ops.spec(node.op)
    visible = visible_outputs(graph, node_i)
    if visible <= 1:
        return f"{node.name}_output"
    if spec is not None and k < len(spec.output_names):
        return f"{node.name}_{spec.output_names[k]}"
    return f"{node.name}_output{k}"


def visible_outputs(graph: Graph, index: int) -> int:
    """How many outputs node ``index`` shows (BatchNorm computes 3, shows 1). A malformed
    attribute (``state_outputs="2"``) falls back to the count the loader made, as it does."""
    node = graph.nodes[index]
    spec = ops.spec(node.op)
    if spec is None:
        return graph.num_outputs(index)
    try:
        return min(spec.num_visible(node.typed), graph.num_outputs(index))
    except AttrError:
        return graph.num_outputs(index)


