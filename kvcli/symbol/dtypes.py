"""Element types of every node output, for ``dtype=`` edge labels (``plot_network(dtype=...)``).

A small forward pass like MXNet's ``infer_type`` for the ops we know: ``Cast``/``amp_cast``
and the creation ops (``_zeros``, ``_ones``, ``_full``, ...) take their ``dtype`` attribute,
every other op the type of its first typed input; variables that were not given take the
type of the op that reads them (weights follow their data), as MXNet's same-type rule does.
"""

from __future__ import annotations

from typing import Mapping, Optional

from kvcli.errors import SymbolError
from kvcli.symbol.graph import Graph

DTYPES = ("float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool", "bfloat16")
_FROM_ATTR = {"Cast", "cast", "amp_cast", "_zeros", "_ones", "_full", "_arange", "_eye",
              "_zeros_without_dtype", "_random_uniform", "_random_normal"}


def infer_dtypes(graph: Graph, given: Mapping[str, str]) -> list[Optional[str]]:
    """The dtype of each node's outputs (``None`` where unknown); ``given`` maps input names."""
    names = {n.name for n in graph.nodes if n.is_variable}
    for name, dtype in given.items():
        if name not in names:
            raise SymbolError(f"dtype for {name!r}: the graph has no input of that name")
        if dtype not in DTYPES:
            raise SymbolError(f"dtype {dtype!r} for {name!r}: use one of {', '.join(DTYPES)}")
    out: list[Optional[str]] = [None] * len(graph.nodes)
    for i, node in enumerate(graph.nodes):
        if node.is_variable:
            out[i] = given.get(node.name)
            continue
        if node.op in _FROM_ATTR:
            out[i] = node.attrs.get("dtype", "float32")
            continue
        known = [out[src] for src, _, _ in node.inputs if out[src] is not None]
        out[i] = known[0] if known else None
        # weights and other untyped inputs take the op's type (MXNet's same-type rule)
        if node.op != "Embedding":
            for src, _, _ in node.inputs:
                if out[src] is None and graph.nodes[src].is_variable:
                    out[src] = out[i]
        else:
            out[i] = node.attrs.get("dtype", "float32")
            for src, _, _ in node.inputs[1:]:
                if out[src] is None:
                    out[src] = out[i]
    return out
