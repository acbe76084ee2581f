"""Which operator names are real MXNet operators.

``mxnet_ops.txt`` lists every operator registered in MXNet 1.9.1 (read from its
``MXListAllOpNames``). A graph naming an op outside that list, and outside the few legacy
and plugin ops that old model files carry, is most likely damaged: the CLI refuses it
unless told otherwise. An MXNet op that kvcli has no shape rule for is different: it is
drawn with unknown shapes and the totals say "at least".
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from kvcli.symbol.graph import Graph

#: Ops seen in real model files that MXNet 1.9.1 no longer registers under these names:
#: the 0.9-era contrib detection ops, the WarpCTC plugin, and variables.
LEGACY_OPERATORS = frozenset(
    {"null", "MultiBoxPrior", "MultiBoxTarget", "MultiBoxDetection", "WarpCTC", "CuDNNBatchNorm", "_sum"}
)


@lru_cache(maxsize=1)
def mxnet_operators() -> frozenset[str]:
    """Every operator name MXNet 1.9.1 registers (1,167 names, aliases included)."""
    text = resources.files("kvcli.symbol").joinpath("mxnet_ops.txt").read_text(encoding="utf-8")
    return frozenset(text.split())


def unknown_operators(graph: Graph) -> dict[str, list[str]]:
    """Ops of ``graph`` that are neither MXNet operators nor known legacy ones: op -> node names."""
    known = mxnet_operators()
    found: dict[str, list[str]] = {}
    for node in graph.nodes:
        if node.op not in known and node.op not in LEGACY_OPERATORS:
            found.setdefault(node.op, []).append(node.name)
    return found
