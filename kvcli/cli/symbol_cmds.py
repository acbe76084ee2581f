"""``kvcli viz`` and ``kvcli summary``: draw and summarise MXNet symbol JSON files.

Thin commands: parse options, call :mod:`kvcli.symbol`, print. The symbol pipeline,
graphviz and rich are imported inside the commands so ``kvcli --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

if TYPE_CHECKING:  # pragma: no cover
    from kvcli.symbol.graph import Graph
    from kvcli.symbol.shapes import ShapeResult

SHAPE_HELP = ("Input shape NAME=D1,D2,... (repeatable; NAME may be a glob such as 'l*_init_*'). "
              "Without it, __shape__ hints stored in the file are used.")

VIZ_EPILOG = """Examples:

  kvcli viz resnet-50-symbol.json --shape data=1,3,224,224          (writes ./resnet-50-symbol.svg)

  kvcli viz model.json -o out/model.pdf --rankdir LR --title "My net"

  kvcli viz model.json -o model.dot                                  (DOT source, no graphviz needed)

  kvcli viz lstm.json --shape 'data/*=32' --show-weights -o lstm.png
"""

SUMMARY_EPILOG = """Examples:

  kvcli summary resnet-50-symbol.json --shape data=1,3,224,224

  kvcli summary model.json --shape data=32,784 --json | jq .totals

  kvcli summary char-lstm.json --shape 'data/*=32' --shape 'l*_init_*=32,512'
"""

RANKDIRS = ("TB", "LR", "BT", "RL")
ALLOW_UNKNOWN_HELP = ("Accept ops that are not MXNet operators (custom plugin builds): they are drawn "
                      "with unknown shapes and totals become lower bounds. Without it such a file is refused.")


def _json_wanted(ctx: typer.Context, flag: bool) -> bool:
    from kvcli.cli.app import global_options

    return flag or global_options(ctx).json


def _load_graph(file: Path, shape: Optional[List[str]], allow_unknown_ops: bool) -> "Graph":
    import gc

    # A one-shot command builds many small acyclic objects (a node, its shapes, its table
    # row); the cyclic GC would rescan them again and again on big graphs. The process ends
    # right after, so switch it off.
    gc.disable()
    from kvcli.symbol.graph import load_file
    from kvcli.symbol.shapespec import parse_shape_specs

    parse_shape_specs(shape or [], source=str(file))  # a bad --shape fails before reading
    graph = load_file(file)
    if not allow_unknown_ops:
        _refuse_unknown_ops(file, graph)
    return graph


def _refuse_unknown_ops(file: Path, graph: "Graph") -> None:
    from kvcli.errors import SymbolError
    from kvcli.symbol.catalog import unknown_operators

    unknown = unknown_operators(graph)
    if unknown:
        op, names = next(iter(unknown.items()))
        more = f" (and {len(unknown) - 1} more unknown ops)" if len(unknown) > 1 else ""
        raise SymbolError(
            f"{file}: unknown operator {op!r} at node {names[0]!r}{more} is not an MXNet operator; "
            "fix the file, or pass --allow-unknown-ops to draw it with unknown shapes"
        )


def _infer(graph: "Graph", shape: Optional[List[str]]) -> "ShapeResult":
    from kvcli.symbol.shapes import infer_shapes
    from kvcli.symbol.shapespec import parse_shape_specs, resolve_shapes

    given = resolve_shapes(graph, parse_shape_specs(shape or [], source=graph.source))
    return infer_shapes(graph, given)


def _load(file: Path, shape: Optional[List[str]], allow_unknown_ops: bool) -> tuple["Graph", "ShapeResult"]:
    graph = _load_graph(file, shape, allow_unknown_ops)
    return graph, _infer(graph, shape)


def _warn_incomplete(file: Path, result: "ShapeResult", shape: Optional[List[str]], strict: bool) -> None:
    """One line per kind of incompleteness; with ``--strict`` the first one is an error."""
    from kvcli.cli import output
    from kvcli.errors import ShapeInferenceError
    from kvcli.symbol.shapespec import _inputs_text

    notes = []
    if result.unknown_ops:
        ops_text = ", ".join(f"{op} ('{names[0]}'{' ...' if len(names) > 1 else ''})"
                             for op, names in sorted(result.unknown_ops.items()))
        notes.append(f"{file}: unknown operator {ops_text}: its shapes are shown as unknown and "
                     "parameter totals are lower bounds")
    for index, problem in list(result.problems.items())[:3]:
        node = result.graph.nodes[index]
        notes.append(f"{file}: cannot infer shapes at '{node.name}' ({node.op}): {problem}")
    if not shape and not result.complete and not result.unknown_ops and not result.problems:
        notes.append(f"{file}: some shapes are unknown; give input shapes with --shape "
                     f"(inputs: {_inputs_text(result.graph)})")
    if strict and notes:
        raise ShapeInferenceError(notes[0] + " (--strict)")
    for note in notes:
        output.print_note("warning: " + note)


def viz_command(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="MXNet symbol JSON file (any version, 0.8 to 1.9)."),
    out: Optional[Path] = typer.Option(
        None, "--output", "-o",
        help="Output file; the extension picks the format: .svg .pdf .png .dot. "
             "Default: FILE's name with .svg, in the current folder."),
    shape: Optional[List[str]] = typer.Option(None, "--shape", "-s", help=SHAPE_HELP),
    title: Optional[str] = typer.Option(None, "--title", "-t", help="Title drawn above the graph."),
    rankdir: str = typer.Option("TB", "--rankdir", help="Layout direction: TB, LR, BT or RL.",
                                case_sensitive=False),
    show_weights: bool = typer.Option(False, "--show-weights",
                                      help="Also draw weight/bias/moving-stat variables."),
    max_nodes: int = typer.Option(20000, "--max-nodes", help="Refuse to lay out bigger graphs "
                                  "(graphviz would take very long); .dot output is never limited."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 if an op is unknown or shapes are incomplete."),
    allow_unknown_ops: bool = typer.Option(False, "--allow-unknown-ops", help=ALLOW_UNKNOWN_HELP),
    json_flag: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Draw FILE like mx.viz.plot_network, with shapes on the edges when known.

    Inputs are ovals; ops are boxes coloured by kind (the MXNet palette); weights and
    biases are hidden unless --show-weights. Needs graphviz's `dot` for .svg/.pdf/.png;
    without it the .dot file is written and the command says how to install graphviz.
    """
    from kvcli.cli import output
    from kvcli.errors import SymbolError
    from kvcli.symbol.render import drawn_nodes, to_digraph, write

    rank = rankdir.upper()
    if rank not in RANKDIRS:
        raise SymbolError(f"--rankdir {rankdir!r}: use one of {', '.join(RANKDIRS)}")
    target = out if out is not None else Path.cwd() / (file.stem + ".svg")
    graph = _load_graph(file, shape, allow_unknown_ops)
    count = drawn_nodes(graph, hide_weights=not show_weights)
    if count > max_nodes and target.suffix.lower() not in (".dot", ".gv"):
        raise SymbolError(f"{file}: {count:,} nodes to draw is more than --max-nodes {max_nodes:,}; "
                          "graphviz would take very long. Write a .dot file (-o x.dot) or raise --max-nodes")
    result = _infer(graph, shape)
    _warn_incomplete(file, result, shape, strict)
    any_shape = any(s is not None for outs in result.outputs for s in outs)
    dot = to_digraph(graph, result if any_shape else None, title=title or file.stem, rankdir=rank,
                     hide_weights=not show_weights, caption=title)
    written = write(dot, target)
    if _json_wanted(ctx, json_flag):
        output.print_json({"file": str(file), "output": str(written), "format": written.suffix[1:],
                           "nodes": count, "shapes": any_shape})
    else:
        output.stdout_console().print(f"wrote {written} ({count:,} nodes)")


def summary_command(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="MXNet symbol JSON file (any version, 0.8 to 1.9)."),
    shape: Optional[List[str]] = typer.Option(None, "--shape", "-s", help=SHAPE_HELP),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 if an op is unknown or shapes are incomplete."),
    allow_unknown_ops: bool = typer.Option(False, "--allow-unknown-ops", help=ALLOW_UNKNOWN_HELP),
    json_flag: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Per-layer table (layer, op, output shape, params, previous layers) and correct totals.

    Learnable parameters and auxiliary states (BatchNorm moving statistics) are totalled
    separately; each shared weight is counted once. The totals equal the sum of MXNet's
    infer_shape argument shapes (inputs and labels excluded). When an op is unknown or a
    parameter's shape cannot be inferred, the totals say "at least".
    """
    from kvcli.cli import output
    from kvcli.symbol.summary import print_table, summarize

    graph, result = _load(file, shape, allow_unknown_ops)
    _warn_incomplete(file, result, shape, strict)
    summary = summarize(result)
    if _json_wanted(ctx, json_flag):
        output.print_json(summary.to_dict())
        return
    print_table(summary, output.stdout_console(), title=f"{file.name}: {len(graph.nodes):,} nodes")


def register(app: typer.Typer) -> None:
    """Add the symbol commands (``viz``, ``summary``) to ``app``."""
    app.command("viz", epilog=VIZ_EPILOG)(viz_command)
    app.command("summary", epilog=SUMMARY_EPILOG)(summary_command)


