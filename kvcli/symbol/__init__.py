"""MXNet symbol graphs without MXNet: load, infer shapes, summarise, draw, build.

The one-call API (what ``kvcli viz`` and ``kvcli summary`` run), importable from here:

* :func:`visualize` - draw a symbol file: folding, HTML viewer, ``.params`` check, notes
* :func:`summarize_file` - per-layer summary, totals, ``.params`` check, notes

Modules (each has one job; dependencies go one way, graph -> shapes -> plan -> fold ->
render/viewer -> pipeline):

* :mod:`kvcli.symbol.graph`    - the Graph model; read/write symbol JSON of every MXNet era
* :mod:`kvcli.symbol.ops`      - the operator table (inputs, outputs, parameter slots)
* :mod:`kvcli.symbol.shapes`   - shape inference (MXNet 1.9.1's rules)
* :mod:`kvcli.symbol.names`    - MXNet's output names; names cut and made printable
* :mod:`kvcli.symbol.summary`  - per-layer table and parameter totals
* :mod:`kvcli.symbol.render`   - graphviz drawing in ``mx.viz.plot_network``'s style
* :mod:`kvcli.symbol.pipeline` - :func:`visualize` and :func:`summarize_file`
* :mod:`kvcli.symbol.build`    - ``mx.sym``: Variable, operators, arithmetic, tojson
* :mod:`kvcli.symbol.viz`      - ``mx.viz``: plot_network, print_summary (MXNet's exact output)

Nothing heavy is imported here: the functions above load :mod:`kvcli.symbol.pipeline` on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from kvcli.symbol.pipeline import Note, SummaryResult, VizResult, summarize_file, visualize

__all__ = ["Note", "SummaryResult", "VizResult", "summarize_file", "visualize"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kvcli.symbol import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'kvcli.symbol' has no attribute {name!r}")
