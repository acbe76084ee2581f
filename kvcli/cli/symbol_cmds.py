"""``kvcli viz`` and ``kvcli summary``: draw and summarise MXNet symbol JSON files.

Thin commands: parse options, call :mod:`kvcli.symbol`, print. The symbol pipeline,
graphviz and rich are imported inside the commands so ``kvcli --help`` stays fast.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, List, Optional, TypeVar


if TYPE_CHECKING:  # pragma: no cover
    from graphviz import Digraph

    from kvcli.symbol.graph import Graph
    from kvcli.symbol.params import ParamsCheck
    from kvcli.symbol.plan import Plan
    from kvcli.symbol.shapes import ShapeResult

F = TypeVar("F", bound=Callable[..., None])


def _gc_paused(command: F) -> F:
    """Run ``command`` with the cyclic GC paused (a graph is many small acyclic objects: a
    node, its shapes, its table row), and restored after — so a ``kvcli shell`` keeps it;
    SIGTERM and SIGHUP interrupt it as Ctrl-C does."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        from kvcli.symbol.graph import paused_gc
        from kvcli.symbol.layout import signals_as_interrupt

        # SIGTERM/SIGHUP end the command like Ctrl-C: dot stopped, no .part file left
        with paused_gc(), signals_as_interrupt():
            command(*args, **kwargs)

    return run  # type: ignore[return-value]


def _load_graph(file: Path, shape: Optional[List[str]], allow_unknown_ops: bool) -> "Graph":
    from kvcli.symbol.graph import load_file, load_json
    from kvcli.symbol.shapespec import parse_shape_specs
    from kvcli.symbol.source import read_source

    parse_shape_specs(shape or [], source=str(file))  # a bad --shape fails before reading
    graph = load_json(read_source("-"), source="<stdin>") if str(file) == "-" else load_file(file)
    if not allow_unknown_ops:
        _refuse_unknown_ops(file, graph)
    return graph


def _refuse_unknown_ops(file: Path, graph: "Graph") -> None:
    from kvcli.errors import SymbolError
    from kvcli.symbol.catalog import unknown_operators

    from kvcli.symbol.plan import cut

    unknown = unknown_operators(graph)
    if unknown:
        op, names = next(iter(unknown.items()))
        more = f" (and {len(unknown) - 1} more unknown ops)" if len(unknown) > 1 else ""
        raise SymbolError(
            f"{file}: unknown operator {cut(op)!r} at node {cut(names[0])!r}{more} is not an MXNet operator; "
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
    from kvcli.symbol.plan import cut
    from kvcli.symbol.shapespec import _inputs_text

    notes = []  # names, ops and problems are cut (a 50 MB name is not echoed whole)
    if result.unknown_ops:
        ops_text = ", ".join(f"{cut(op)} ('{cut(names[0])}'{' ...' if len(names) > 1 else ''})"
                             for op, names in sorted(result.unknown_ops.items())[:5])
        if len(result.unknown_ops) > 5:
            ops_text += f" and {len(result.unknown_ops) - 5:,} more"
        notes.append(f"{file}: unknown operator {ops_text}: its shapes are shown as unknown and "
                     "parameter totals are lower bounds")
    for index, problem in list(result.problems.items())[:3]:
        node = result.graph.nodes[index]
        notes.append(f"{file}: cannot infer shapes at '{cut(node.name)}' ({cut(node.op)}): {cut(problem)}")
    if not shape and not result.complete and not result.unknown_ops and not result.problems:
        notes.append(f"{file}: some shapes are unknown; give input shapes with --shape "
                     f"(inputs: {cut(_inputs_text(result.graph))})")
    from kvcli.symbol.summary import printable

    notes = [printable(note) for note in notes]  # names from the file must not drive the terminal
    if strict and notes:
        raise ShapeInferenceError(notes[0] + " (--strict)")
    for note in notes:
        output.print_note("warning: " + note)


@_gc_paused
def run_viz(
    options: Any, file: Path, out: Optional[Path] = None, shape: Optional[List[str]] = None,
    title: Optional[str] = None, rankdir: str = "tb", show_weights: bool = False, full: bool = False,
    collapse: Optional[List[str]] = None, depth: Optional[int] = None, focus_on: Optional[str] = None,
    radius: int = 2, layout_timeout: float = 60.0, open_browser: bool = False, fmt: Optional[str] = None,
    dtype: Optional[List[str]] = None, max_nodes: int = 20000, params: Optional[Path] = None, strict: bool = False,
    allow_unknown_ops: bool = False,
) -> None:
    """Draw FILE like mx.viz.plot_network, with shapes on the edges when known.

    Inputs are ovals; ops are boxes coloured by kind (the MXNet palette), labelled with
    their name and op; weights and biases are hidden unless --show-weights. Graphs too big
    for graphviz to lay out in seconds are drawn with repeated blocks folded (said in one
    line; --full draws everything). Needs graphviz's `dot` for .svg/.pdf/.png; without it
    the .dot file is written and the command says how to install graphviz.
    """
    from kvcli.cli import output
    from kvcli.errors import SymbolError
    from kvcli.errors import LayoutTimeoutError
    from kvcli.symbol.fold import apply_options, fold_for_layout, may_be_slow
    from kvcli.symbol.layout import TRIAL_MAX_BOXES, TRIAL_MAX_WIDTH_COST, TRIAL_SECONDS
    from kvcli.symbol.plan import build_plan, counts_text, rank_width
    from kvcli.symbol.render import FORMATS, dot_program, drawn_nodes, plan_to_digraph, write

    rank = rankdir.upper()
    if layout_timeout <= 0:
        raise SymbolError(f"--layout-timeout {layout_timeout:g}: use a positive number of seconds")
    to_stdout = out is not None and str(out) == "-"
    if fmt is not None and not to_stdout:
        raise SymbolError("--format is only for -o - (standard output); otherwise the extension picks the format")
    if fmt is not None and fmt.lower() not in ("svg", "dot"):
        raise SymbolError(f"--format {fmt!r}: use svg or dot")
    stem = "stdin" if str(file) == "-" else file.stem
    if open_browser and out is not None:
        raise SymbolError("--open writes a temporary HTML file; leave out -o (or use -o FILE.html without --open)")
    target = out if out is not None else Path.cwd() / (stem + ".svg")
    if open_browser:
        import tempfile

        target = Path(tempfile.mkdtemp(prefix="kvcli-viz-")) / (stem + ".html")
    suffix = ("." + fmt.lower()) if fmt else (".svg" if to_stdout else target.suffix.lower())
    if suffix not in (*FORMATS, ".html"):  # before any work; the viewer's .html is a format too
        raise SymbolError(f"{target}: unknown output format '{suffix or '(none)'}'; "
                          f"use one of {', '.join((*FORMATS[:4], '.html'))}")
    graph = _load_graph(file, shape, allow_unknown_ops)
    reduced = bool(collapse or depth is not None or focus_on is not None)
    if suffix not in (".dot", ".gv") and not reduced:
        count = drawn_nodes(graph, hide_weights=not show_weights)
        if count > max_nodes:  # checked before any work: a huge file fails in a second
            raise SymbolError(f"{file}: {count:,} nodes to draw is more than --max-nodes {max_nodes:,}; "
                              "graphviz would take very long. Draw part of it (--focus NODE, --collapse "
                              "PATTERN, --depth N), write a .dot file (-o x.dot) or raise --max-nodes")
    result = _infer(graph, shape)
    _warn_incomplete(file, result, shape, strict)
    check = _check_params(result, params, strict)
    any_shape = any(s is not None for outs in result.outputs for s in outs)
    types = _dtypes(graph, dtype) if dtype else None
    plan = build_plan(graph, result if any_shape else None, hide_weights=not show_weights,
                      readable=True, dtypes=(lambda node, _k: types[node]) if types else None)
    base = plan  # before folding: the HTML viewer expands folds into it
    html = suffix == ".html" or open_browser
    plan = apply_options(plan, collapse or (), depth, focus_on, radius)
    count = plan.drawn_members  # graph nodes drawn (the output-shape labels are not nodes)

    def draw(plan: "Plan", bounded: bool, timeout: float) -> Path:
        dot = plan_to_digraph(plan, title=title or stem, rankdir=rank, caption=title, readable=True,
                              bounded=bounded, svg_ids=html)
        if html:
            return _write_html(plan, base, result, types, dot, target, title or stem, timeout,
                               open_browser, rank, check)
        shrunk: list[str] = []
        path = write(dot, target, timeout=timeout, fmt=fmt.lower() if fmt else None, notes=shrunk)
        for note in shrunk:
            output.print_note(note)
        return path

    written: Optional[Path] = None
    if suffix in (".dot", ".gv") or full or not may_be_slow(plan):
        bounded = False  # .dot is never laid out; small graphs take dot about a second
    else:
        # Decide by what the layout really costs: try the exact one for a few seconds, fold
        # only if it takes longer (or is certain to: thousands of boxes).
        tried: Optional[float] = None
        worth_trying = (plan.drawn_boxes <= min(TRIAL_MAX_BOXES, max_nodes)
                        and len(plan.nodes) * rank_width(plan) <= TRIAL_MAX_WIDTH_COST)
        if worth_trying and dot_program() is not None:
            tried = min(TRIAL_SECONDS, layout_timeout)
            try:
                written = draw(plan, False, tried)
            except LayoutTimeoutError:
                pass
        if written is None:
            plan, bounded = fold_for_layout(plan, tried)
    if written is None:
        if suffix not in (".dot", ".gv") and len(plan.nodes) > max_nodes:
            raise SymbolError(f"{file}: {len(plan.nodes):,} nodes to draw is more than --max-nodes {max_nodes:,}; "
                              "graphviz would take very long. Write a .dot file (-o x.dot) or raise --max-nodes")
        for note in plan.notes:
            output.print_note(note)
        written = draw(plan, bounded, layout_timeout)
    else:
        for note in plan.notes:
            output.print_note(note)
    if to_stdout:
        return
    if options.json:
        done = {"file": str(file), "output": str(written), "format": written.suffix[1:],
                "file_nodes": len(graph.nodes), "nodes": count, "drawn": plan.drawn_boxes, "shapes": any_shape}
        if check is not None:
            done["params"] = check.to_dict()
        output.print_json(done)
    else:
        counts = counts_text(len(graph.nodes), len(graph.nodes) - base.drawn_members, count, plan.drawn_boxes)
        output.stdout_console().print(f"wrote {written} ({counts})")


def _write_html(plan: "Plan", base: "Plan", result: "ShapeResult", types: Optional[List[Optional[str]]],
                dot: "Digraph", target: Path, title: str, timeout: float, open_browser: bool,
                rankdir: str, check: Optional["ParamsCheck"] = None) -> Path:
    """Lay out ``dot`` to SVG and write the self-contained viewer page (atomically)."""
    import os
    import tempfile

    from kvcli.symbol.render import render_bytes
    from kvcli.symbol.summary import summarize
    from kvcli.symbol.viewer import build_html

    svg = render_bytes(dot, "svg", timeout=timeout).decode("utf-8")
    page = build_html(plan, summarize(result), svg, title, types, base=base, rankdir=rankdir, params=check)
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(page)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise
    if open_browser:
        import webbrowser

        if not webbrowser.open(target.resolve().as_uri()):
            from kvcli.errors import SymbolError

            raise SymbolError(f"no web browser was found to open {target}: open that file yourself, "
                              "or name a browser in BROWSER")
    return target


def _check_params(result: "ShapeResult", params: Optional[Path], strict: bool) -> Optional["ParamsCheck"]:
    """``--params FILE``: load it and check it against the graph; each problem is a warning
    (with ``--strict``, the first one is an error), or one note says all matched."""
    if params is None:
        return None
    from kvcli.cli import output
    from kvcli.errors import SymbolError
    from kvcli.symbol.params import check_params, load_params

    check = check_params(result, load_params(params), str(params))
    if strict and not check.ok:
        raise SymbolError(check.lines()[0] + " (--strict)")
    for line in check.lines():
        output.print_note(("warning: " if not check.ok or check.unchecked else "") + line)
    return check


def _dtypes(graph: "Graph", specs: List[str]) -> List[Optional[str]]:
    """``--dtype NAME=TYPE`` values, inferred to every node's output dtype."""
    from kvcli.errors import SymbolError
    from kvcli.symbol.dtypes import infer_dtypes

    given: dict[str, str] = {}
    for spec in specs:
        name, sep, dtype = spec.partition("=")
        if not sep or not name or not dtype:
            raise SymbolError(f"--dtype {spec!r}: use NAME=TYPE, e.g. --dtype data=float32")
        given[name] = dtype
    return infer_dtypes(graph, given)


@_gc_paused
def run_summary(options: Any, file: Path, shape: Optional[List[str]] = None, params: Optional[Path] = None,
                strict: bool = False, allow_unknown_ops: bool = False) -> None:
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
    check = _check_params(result, params, strict)  # --params: one line per problem, on stderr
    summary = summarize(result)
    if options.json:
        report = summary.to_dict()
        if check is not None:
            report["params_check"] = check.to_dict()
        output.print_json(report)
        return
    print_table(summary, output.stdout_console(), title=f"{file.name}: {len(graph.nodes):,} nodes")
