"""``kvcli viz`` and ``kvcli summary`` as library calls: :func:`visualize` and :func:`summarize_file`.

One pipeline, used by the command line and by Python alike::

    load -> refuse unknown ops -> infer shapes -> notes -> check .params -> plan -> fold -> draw

Notes (unknown shapes, a ``.params`` mismatch, what was folded) are returned as
:class:`Note` values, and also passed one by one, as they arise, to an optional ``on_note``
callback (the CLI prints them there, so a warning shows before a long layout). Errors are the
exceptions of :mod:`kvcli.errors` (a :class:`~kvcli.errors.SymbolError` or subclass), raised
before anything is written. This is the top of :mod:`kvcli.symbol`: nothing there imports it.

``mx.viz.plot_network`` is a different thing on purpose: MXNet's exact drawing, no folding.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from kvcli.errors import LayoutTimeoutError, ShapeInferenceError, SymbolError, bad_param
from kvcli.symbol.graph import Graph, load_file, load_json, paused_gc
from kvcli.symbol.params import DEFAULT_VALUES

if TYPE_CHECKING:  # pragma: no cover
    from graphviz import Digraph

    from kvcli.symbol.build import Symbol
    from kvcli.symbol.layout import Progress
    from kvcli.symbol.params import ParamsCheck, Weights
    from kvcli.symbol.plan import Plan
    from kvcli.symbol.shapes import ShapeResult
    from kvcli.symbol.summary import Summary

#: Where a graph comes from: a symbol JSON path, ``"-"`` (standard input), a loaded Graph or
#: an ``mx.sym`` Symbol.
Source = Union[str, "os.PathLike[str]", Graph, "Symbol"]
#: The weights checked against a graph: an MXNet ``.params`` file, a session's
#: (:class:`~kvcli.symbol.params.Weights`), or none.
Params = Union[str, "os.PathLike[str]", "Weights", None]

#: Note kinds (``Note.kind``).
UNKNOWN_OPS, SHAPE_PROBLEM, SHAPES_UNKNOWN, PARAMS, FOLDED, SHRUNK = (
    "unknown-ops", "shape-problem", "shapes-unknown", "params", "folded", "shrunk")


#: What a note advises, in Python's words (a front end words it its own way:
#: :data:`kvcli.cli.symbol_cmds.NOTE_ADVICE`).
NOTE_ADVICE = {"input-shapes": "give input shapes with shape=", "full": "full=True draws every node exactly",
               "no-params": "find_params=False leaves it out"}


@dataclass(frozen=True)
class Note:
    """One line for the user. ``warning``: something is missing or unchecked; otherwise it
    says what was done (folded, shrunk, all parameters matched). ``remedy``: what to do about
    it, a key of :data:`NOTE_ADVICE` (``text`` is then the line without the advice).
    ``str(note)`` is the whole line in Python's words (``warning: `` first for a warning)."""

    kind: str
    text: str
    warning: bool = True
    remedy: Optional[str] = None

    def __str__(self) -> str:
        advice = f"; {NOTE_ADVICE[self.remedy]}" if self.remedy else ""
        return ("warning: " if self.warning else "") + self.text + advice


@dataclass
class VizResult:
    """What :func:`visualize` did.

    ``output`` is the written file (``None`` for standard output); ``file_nodes`` the nodes
    in the file, ``hidden`` those not drawn (weights, biases), ``nodes`` the graph nodes drawn
    and ``boxes`` the boxes they were drawn as (fewer when folded); ``shapes`` whether any
    shape is known; ``params`` the ``.params`` check when one was given.
    """

    source: str
    output: Optional[Path]
    format: str
    file_nodes: int
    hidden: int
    nodes: int
    boxes: int
    shapes: bool
    params: Optional["ParamsCheck"] = None
    notes: list[Note] = field(default_factory=list)

    @property
    def folded(self) -> bool:
        """Whether some nodes share a box (folded, collapsed or grouped)."""
        return self.boxes < self.nodes

    def counts_text(self) -> str:
        """What the CLI says after ``wrote FILE``: ``"6,001 nodes in the file (1,500 weights hidden):
        4,501 drawn as 4 boxes"``."""
        from kvcli.symbol.plan import counts_text

        return counts_text(self.file_nodes, self.hidden, self.nodes, self.boxes)

    def to_dict(self) -> dict[str, Any]:
        """The ``kvcli viz --json`` report."""
        done: dict[str, Any] = {"file": self.source, "output": str(self.output), "format": self.format,
                                "file_nodes": self.file_nodes, "nodes": self.nodes, "drawn": self.boxes,
                                "shapes": self.shapes}
        if self.params is not None:
            done["params"] = self.params.to_dict()
        return done


@dataclass
class SummaryResult:
    """What :func:`summarize_file` found: the graph, its shapes, the per-layer summary, the
    ``.params`` check (when one was given) and the notes."""

    graph: Graph
    shapes: "ShapeResult"
    summary: "Summary"
    params: Optional["ParamsCheck"] = None
    notes: list[Note] = field(default_factory=list)


class _Notes:
    """Collects notes, hands each to ``on_note`` at once, and applies ``strict``."""

    def __init__(self, on_note: Optional[Callable[[Note], None]], strict: bool) -> None:
        self.all: list[Note] = []
        self.on_note = on_note
        self.strict = strict

    def add(self, note: Note, error: type[SymbolError] = SymbolError, strict: bool = True) -> None:
        if strict and self.strict and note.warning:
            raise error(note.text + " (strict=True)", problem=note.text, remedy="strict")
        self.all.append(note)
        if self.on_note is not None:
            self.on_note(note)


def _name(source: Source) -> str:
    from kvcli.symbol.build import Symbol

    if isinstance(source, Symbol):
        return "<symbol>"
    return source.source if isinstance(source, Graph) else str(source)


def output_stem(name: str) -> str:
    """The default output file's stem: the input file's, ``stdin``, or ``graph`` for an
    in-memory graph (named like ``<json>``)."""
    return "stdin" if name == "-" else "graph" if name.startswith("<") else Path(name).stem


def load(source: Source, shape: Iterable[str] = (), allow_unknown_ops: bool = False) -> Graph:
    """The graph of ``source`` (see :data:`Source`); an op that is not MXNet's is an error
    unless ``allow_unknown_ops``.

    ``shape`` (``"data=1,3,224,224"`` specs) is checked first, so a bad one fails before reading.
    """
    from kvcli.symbol.shapespec import parse_shape_specs
    from kvcli.symbol.source import read_source

    from kvcli.symbol.build import Symbol

    name = _name(source)
    parse_shape_specs(list(shape), source=name)
    if isinstance(source, Graph):
        graph = source
    elif isinstance(source, Symbol):
        graph = load_json(source.tojson(), source=name)
    elif name == "-":
        graph = load_json(read_source("-"), source="<stdin>")
    else:
        graph = load_file(source)
    if not allow_unknown_ops:
        _refuse_unknown_ops(name, graph)
    return graph


def _refuse_unknown_ops(name: str, graph: Graph) -> None:
    from kvcli.symbol.catalog import unknown_operators
    from kvcli.symbol.plan import cut

    unknown = unknown_operators(graph)
    if unknown:
        op, names = next(iter(unknown.items()))
        more = f" (and {len(unknown) - 1} more unknown ops)" if len(unknown) > 1 else ""
        problem = f"{name}: unknown operator {cut(op)!r} at node {cut(names[0])!r}{more} is not an MXNet operator"
        raise SymbolError(f"{problem}; fix the file, or pass allow_unknown_ops=True to draw it with unknown shapes",
                          problem=problem, remedy="allow-unknown-ops")


def infer(graph: Graph, shape: Iterable[str] = ()) -> "ShapeResult":
    """Shapes of every node from ``shape`` specs (``"data=1,3,224,224"``, patterns allowed)."""
    from kvcli.symbol.shapes import infer_shapes
    from kvcli.symbol.shapespec import parse_shape_specs, resolve_shapes

    given = resolve_shapes(graph, parse_shape_specs(list(shape), source=graph.source))
    return infer_shapes(graph, given)


def shape_notes(name: str, result: "ShapeResult", shape_given: bool) -> list[Note]:
    """One warning per kind of incompleteness of ``result`` (unknown ops, failed rules,
    missing input shapes); names and ops are cut and made printable."""
    from kvcli.symbol.plan import cut
    from kvcli.symbol.shapespec import inputs_text
    from kvcli.symbol.names import printable

    notes = []  # names, ops and problems are cut (a 50 MB name is not echoed whole)
    if result.unknown_ops:
        ops_text = ", ".join(f"{cut(op)} ('{cut(names[0])}'{' ...' if len(names) > 1 else ''})"
                             for op, names in sorted(result.unknown_ops.items())[:5])
        if len(result.unknown_ops) > 5:
            ops_text += f" and {len(result.unknown_ops) - 5:,} more"
        notes.append(Note(UNKNOWN_OPS, f"{name}: unknown operator {ops_text}: its shapes are shown as "
                          "unknown and parameter totals are lower bounds"))
    for index, problem in list(result.problems.items())[:3]:
        node = result.graph.nodes[index]
        notes.append(Note(SHAPE_PROBLEM, f"{name}: cannot infer shapes at '{cut(node.name)}' "
                          f"({cut(node.op)}): {cut(problem)}"))
    if not shape_given and not result.complete and not result.unknown_ops and not result.problems:
        notes.append(Note(SHAPES_UNKNOWN, f"{name}: some shapes are unknown (inputs: "
                          f"{cut(inputs_text(result.graph))})", remedy="input-shapes"))
    # names from the file must not drive a terminal
    return [Note(n.kind, printable(n.text), n.warning, n.remedy) for n in notes]


def _check_params(result: "ShapeResult", params: "Params", notes: _Notes) -> Optional["ParamsCheck"]:
    if params is None:
        return None
    from kvcli.symbol.params import Weights, check_params, load_params

    check = params.check(result) if isinstance(params, Weights) else check_params(result, load_params(params),
                                                                                      str(params))
    # strict: a missing, extra or wrong array, or NaN/inf values, is an error; arrays left
    # unchecked (shapes unknown) are a warning
    lines = check.lines()
    if notes.strict and (not check.ok or check.nonfinite):
        raise SymbolError(lines[0] + " (strict=True)", problem=lines[0], remedy="strict")
    for index, line in enumerate(lines):  # the last line: arrays unchecked (what to give) or all matched
        last = index == len(lines) - 1
        all_matched = last and check.ok and not check.unchecked
        notes.add(Note(PARAMS, line, warning=not all_matched,
                       remedy="input-shapes" if last and check.unchecked else None), strict=False)
    return check


def _refuse_misfit(name: str, result: "ShapeResult") -> None:
    """A given shape that does not fit the graph (a rule fails on it) is an error."""
    from kvcli.symbol.plan import cut

    index, why = next(iter(result.problems.items()))
    node = result.graph.nodes[index]
    problem = (f"{name}: the shapes given do not fit the graph at '{cut(node.name)}' ({cut(node.op)}): "
               f"{cut(why)}")
    raise ShapeInferenceError(f"{problem}; give shapes that fit, or pass partial=True to show what is known",
                              problem=problem, remedy="partial")


def _found_params(source: Source, notes: _Notes) -> Optional[Path]:
    """``PREFIX-NNNN.params`` beside a ``PREFIX-symbol.json`` source (the newest epoch), said in a note."""
    from kvcli.symbol.params import find_checkpoint

    if isinstance(source, (str, os.PathLike)) and str(source) != "-":
        found = find_checkpoint(source)
        if found is not None:
            notes.add(Note(PARAMS, f"using {found.name}, the newest checkpoint beside {Path(source).name}",
                           warning=False, remedy="no-params"))
        return found
    return None


def _prepare(source: Source, shape: Sequence[str], params: Params,
             allow_unknown_ops: bool, notes: _Notes,
             before_infer: Optional[Callable[[Graph], None]] = None, partial: bool = False,
             find_params: bool = False) -> tuple[Graph, "ShapeResult", Optional["ParamsCheck"]]:
    if params is None and find_params:
        params = _found_params(source, notes)
    graph = load(source, shape, allow_unknown_ops)
    if before_infer is not None:
        before_infer(graph)
    result = infer(graph, shape)
    if shape and result.problems and not partial:
        _refuse_misfit(_name(source), result)
    for note in shape_notes(_name(source), result, bool(shape)):
        notes.add(note, ShapeInferenceError)
    return graph, result, _check_params(result, params, notes)


def summarize_file(
    source: Source, *, shape: Sequence[str] = (), params: Params = None,
    strict: bool = False, allow_unknown_ops: bool = False, partial: bool = False, find_params: bool = False,
    on_note: Optional[Callable[[Note], None]] = None,
) -> SummaryResult:
    """Load ``source``, infer its shapes from ``shape`` specs, check ``params`` (an MXNet
    ``.params`` file, or a session's :class:`~kvcli.symbol.params.Weights`) against them and
    summarise it (``kvcli summary``).

    ``strict``: the first shape warning or ``.params`` mismatch is an error. An unknown operator is an error unless
    ``allow_unknown_ops`` (then its shapes are unknown and the totals are lower bounds). A
    given shape that does not fit the graph (the wrong rank, a kernel larger than the input)
    is an error unless ``partial``: then what can be inferred is shown, with a warning.
    ``find_params`` (without ``params``): use the newest ``PREFIX-NNNN.params`` beside a
    ``PREFIX-symbol.json`` file, as MXNet's ``load_checkpoint`` names them, and say so in a note.
    """
    from kvcli.symbol.summary import summarize

    notes = _Notes(on_note, strict)
    with paused_gc():  # a graph is many small acyclic objects
        graph, result, check = _prepare(source, shape, params, allow_unknown_ops, notes, partial=partial,
                                        find_params=find_params)
        return SummaryResult(graph, result, summarize(result), check, notes.all)


def parse_dtypes(specs: Iterable[str]) -> dict[str, str]:
    """``["data=float16"]`` -> ``{"data": "float16"}`` (the ``--dtype`` option)."""
    given: dict[str, str] = {}
    for spec in specs:
        name, sep, dtype = spec.partition("=")
        if not sep or not name or not dtype:
            raise bad_param(SymbolError, "dtype", f"{spec!r}: use NAME=TYPE, e.g. data=float32")
        given[name] = dtype
    return given


def output_path(name: str, output: Union[str, "os.PathLike[str]", None]) -> Path:
    """Where :func:`visualize` of the source ``name`` writes: ``output``, or by default the
    input's stem with ``.svg`` in the current folder (``Path("-")``: standard output)."""
    return Path(output) if output is not None else Path.cwd() / (output_stem(name) + ".svg")


def replaced_outputs(name: str, output: Union[str, "os.PathLike[str]", None], fmt: Optional[str] = None) -> list[Path]:
    """The files that exist and that :func:`visualize` of ``name`` would replace: the output,
    and the ``.dot`` it writes instead when graphviz's ``dot`` is missing. Standard output
    replaces nothing."""
    from kvcli.symbol.render import dot_program

    target = output_path(name, output)
    if str(target) == "-":
        return []
    paths = [target]
    if output_format(target, fmt) not in (".dot", ".gv", ".html") and dot_program() is None:
        paths.append(target.with_suffix(".dot"))
    return [path for path in paths if os.path.lexists(path)]


def output_format(output: Union[str, "os.PathLike[str]"], fmt: Optional[str] = None) -> str:
    """The format ``visualize`` writes to ``output`` (``".svg"``, ``".html"``, ...), or an error."""
    from kvcli.symbol.render import FORMATS

    to_stdout = str(output) == "-"
    if fmt is not None and not to_stdout:
        raise bad_param(SymbolError, "format", "is only for standard output (output '-'); otherwise the "
                        "extension picks the format")
    if fmt is not None and fmt.lower() not in ("svg", "dot"):
        raise bad_param(SymbolError, "format", f"{fmt!r}: use svg or dot")
    suffix = ("." + fmt.lower()) if fmt else (".svg" if to_stdout else Path(output).suffix.lower())
    if suffix not in (*FORMATS, ".html"):  # the viewer's .html is a format too
        raise SymbolError(f"{output}: unknown output format '{suffix or '(none)'}'; "
                          f"use one of {', '.join((*FORMATS[:4], '.html'))}")
    return suffix


def visualize(
    source: Source, output: Union[str, "os.PathLike[str]", None] = None, *,
    shape: Sequence[str] = (), full: bool = False, collapse: Sequence[str] = (), depth: Optional[int] = None,
    focus: Optional[str] = None, radius: int = 2, show_weights: bool = False, title: Optional[str] = None,
    rankdir: str = "TB", format: Optional[str] = None, dtype: Optional[Mapping[str, str]] = None,
    max_nodes: int = 20000, params: Params = None, strict: bool = False,
    allow_unknown_ops: bool = False, layout_timeout: float = 60.0, partial: bool = False,
    find_params: bool = False, values: Optional[int] = DEFAULT_VALUES, on_note: Optional[Callable[[Note], None]] = None,
    progress: Optional["Progress"] = None, confirm_replace: Optional[Callable[[list[Path]], None]] = None,
) -> VizResult:
    """Draw an MXNet symbol graph as ``kvcli viz`` does, and say what was done.

    ``source``: a symbol JSON path, ``"-"`` (standard input), a loaded
    :class:`~kvcli.symbol.graph.Graph` or an ``mx.sym`` Symbol. ``output``: ``.svg``,
    ``.pdf``, ``.png`` (drawn by graphviz's ``dot``), ``.dot``/``.gv`` (source only),
    ``.html`` (the interactive viewer) or ``"-"`` (standard output, ``format`` ``"svg"`` or
    ``"dot"``); by default ``STEM.svg`` in the current directory. ``shape``: input shape
    specs (``"data=1,3,224,224"``); ``dtype``: input dtypes (``{"data": "float16"}``), shown
    on the edges; ``rankdir``: the side the inputs are drawn on (``"TB"`` top, ``"BT"``,
    ``"LR"`` left, ``"RL"``), the data flowing to the other. Static drawings carry a colour
    legend; a ``.pdf`` is cut into A4 pages (a note says how many).

    Big graphs are tried exactly for a few seconds and folded (repeated blocks drawn once
    with a count) if graphviz is slower; ``full`` draws every node however long it takes (up
    to ``layout_timeout`` seconds). ``collapse`` (name patterns), ``depth`` (group by the
    first N name parts) and ``focus`` (a node and its ``radius`` neighbourhood) draw part of
    it. ``params``: an MXNet ``.params`` file, or a session's
    :class:`~kvcli.symbol.params.Weights`, checked against the inferred shapes
    (``find_params``: the newest ``PREFIX-NNNN.params`` beside ``PREFIX-symbol.json``); the
    HTML viewer carries the first ``values`` values of each of its tensors (``None``: all)
    and, for a session's, each key's version.

    Warnings and notes are returned in :attr:`VizResult.notes` and given to ``on_note`` as
    they arise; ``strict`` makes the first shape warning or ``.params`` mismatch an error
    (message ending ``(strict=True)``; ``fields['problem']`` is the warning), raised before anything is written. A
    given shape that does not fit the graph is an error unless ``partial``. Errors are
    :class:`~kvcli.errors.SymbolError` (or a subclass): an unknown operator unless
    ``allow_unknown_ops``, more than ``max_nodes`` boxes to lay out, a layout slower than
    ``layout_timeout``, graphviz missing (the ``.dot`` file is then written).

    ``progress`` shows that graphviz is working (:data:`kvcli.symbol.layout.Progress`; the
    CLI passes its spinner); without it nothing is drawn on the terminal. ``confirm_replace``
    is called with the existing files the drawing would replace (:func:`replaced_outputs`),
    once the source and the options are checked and before anything is laid out or written:
    raising there stops with nothing written (the CLI asks its question there).
    """
    from kvcli.symbol.fold import apply_options, fold_for_layout, may_be_slow
    from kvcli.symbol.layout import TRIAL_MAX_BOXES, TRIAL_MAX_WIDTH_COST, TRIAL_SECONDS
    from kvcli.symbol.plan import build_plan, rank_width
    from kvcli.symbol.render import dot_program, drawn_nodes, plan_to_digraph, render_bytes, write

    name = _name(source)
    from kvcli.symbol.render import DOT_RANKDIR

    if rankdir.upper() not in DOT_RANKDIR:
        raise bad_param(SymbolError, "rankdir", f"{rankdir!r}: use tb, bt, lr or rl (the side the inputs are drawn on)")
    rank = DOT_RANKDIR[rankdir.upper()]  # dot's direction: the data flows from the side named
    if layout_timeout <= 0:
        raise bad_param(SymbolError, "layout_timeout", f"{layout_timeout:g}: use a positive number of seconds")
    if values is not None and values < 0:
        raise bad_param(SymbolError, "values", f"{values}: use 0 or more values per tensor (None: all)")
    stem = output_stem(name)
    target = output_path(name, output)
    to_stdout = str(target) == "-"
    suffix = output_format(target, format)
    notes = _Notes(on_note, strict)
    reduced = bool(collapse or depth is not None or focus is not None)
    if not to_stdout:  # a place that cannot be written fails before any work
        from kvcli.symbol.layout import output_problem

        problem = output_problem(target)
        if problem is not None:
            raise SymbolError(f"cannot write {target}: {problem}")

    laid_out = suffix not in (".dot", ".gv")  # .dot is never laid out, so never limited

    def check_size(graph: Graph) -> None:
        # With full=True nothing folds: a huge file fails before any work. Otherwise the limit
        # is on what is laid out, after folding (a 26,000-node LSTM folds to 114 boxes).
        if laid_out and full and not reduced:
            count = drawn_nodes(graph, hide_weights=not show_weights)
            if count > max_nodes:
                raise _too_many(name, count, max_nodes)

    with paused_gc():
        graph, result, check = _prepare(source, shape, params, allow_unknown_ops, notes, check_size, partial,
                                        find_params)
        any_shape = any(s is not None for outs in result.outputs for s in outs)
        types = None
        if dtype:
            from kvcli.symbol.dtypes import infer_dtypes

            types = infer_dtypes(graph, dict(dtype))
        plan = build_plan(graph, result if any_shape else None, hide_weights=not show_weights,
                          readable=True, dtypes=(lambda node, _k: types[node]) if types else None)
        base = plan  # before folding: the HTML viewer expands folds into it
        html = suffix == ".html"
        plan = apply_options(plan, collapse, depth, focus, radius)
        if confirm_replace is not None:
            replaced = replaced_outputs(name, output, format)
            if replaced:
                confirm_replace(replaced)
        count = plan.drawn_members  # graph nodes drawn (the output-shape labels are not nodes)

        def digraph(plan: "Plan", bounded: bool) -> "Digraph":
            return plan_to_digraph(plan, title=title or stem, rankdir=rank, caption=title, readable=True,
                                   bounded=bounded, svg_ids=html, legend=not html)

        def draw(plan: "Plan", bounded: bool, timeout: float) -> Path:
            dot = digraph(plan, bounded)
            if html:
                return _write_html(plan, base, result, types, dot, target, title or stem, timeout, rank, check,
                                   progress, values)
            shrunk: list[str] = []
            path = write(dot, target, timeout=timeout, fmt=format.lower() if format else None, notes=shrunk,
                         progress=progress)
            for line in shrunk:
                notes.add(Note(SHRUNK, line, warning=False))
            return path

        written: Optional[Path] = None
        folding: set[str] = set()
        folded = False
        if not laid_out or full or not may_be_slow(plan):
            bounded = False  # .dot is never laid out; small graphs take dot about a second
        else:
            # Decide by what the layout really costs: try the exact one for a few seconds, fold
            # only if it takes longer (or is certain to: thousands of boxes). The trial is the
            # same for every format (an SVG layout), so a .png and an .svg of one model are
            # the same drawing; an .svg or .html keeps the trial's result.
            tried: Optional[float] = None
            worth_trying = (plan.drawn_boxes <= min(TRIAL_MAX_BOXES, max_nodes)
                            and len(plan.nodes) * rank_width(plan) <= TRIAL_MAX_WIDTH_COST)
            if worth_trying and dot_program() is not None:
                tried = min(TRIAL_SECONDS, layout_timeout)
                exact = True
                try:
                    if suffix in (".svg", ".html"):
                        written = draw(plan, False, tried)
                    else:
                        render_bytes(digraph(plan, False), "svg", timeout=tried, progress=progress)
                except LayoutTimeoutError:
                    exact = False
                if exact and written is None:  # a .png or .pdf of the layout that finished
                    written = draw(plan, False, layout_timeout)
            if written is None:
                before = len(plan.notes)
                unfolded = plan.drawn_boxes
                plan, bounded = fold_for_layout(plan, tried, max_nodes)
                folded = plan.drawn_boxes < unfolded
                folding = set(plan.notes[before:])  # what folding did: `full` would draw it exactly
        if written is None:
            if laid_out and plan.drawn_boxes > max_nodes:
                raise _too_many(name, plan.drawn_boxes, max_nodes, folded=folded)
            for line in plan.notes:
                notes.add(Note(FOLDED, line, warning=False, remedy="full" if line in folding else None))
            written = draw(plan, bounded, layout_timeout)
        else:
            for line in plan.notes:
                notes.add(Note(FOLDED, line, warning=False))
        return VizResult(name, None if to_stdout else written, suffix[1:] if to_stdout else written.suffix[1:],
                         len(graph.nodes),
                         len(graph.nodes) - base.drawn_members, count, plan.drawn_boxes, any_shape,
                         check, notes.all)


def _too_many(name: str, count: int, max_nodes: int, folded: bool = False) -> SymbolError:
    """More boxes to lay out than ``max_nodes`` (``folded``: even with repeated blocks folded)."""
    after = " with repeated blocks folded" if folded else ""
    problem = f"{name}: {count:,} boxes to lay out{after} is more than {max_nodes:,}"
    advice = "write a .dot file" if folded else "draw part of it (focus=, collapse=, depth=), write a .dot file"
    return SymbolError(f"{problem}: {advice} or raise max_nodes", problem=problem, remedy="draw-less",
                       limit="max_nodes", dot=True, folded=folded)


def _write_html(plan: "Plan", base: "Plan", result: "ShapeResult", types: Optional[list[Optional[str]]],
                dot: "Digraph", target: Path, title: str, timeout: float, rankdir: str,
                check: Optional["ParamsCheck"] = None, progress: Optional["Progress"] = None,
                values: Optional[int] = DEFAULT_VALUES) -> Path:
    """Lay out ``dot`` to SVG and write the self-contained viewer page (atomically, a plain
    file's mode: :func:`kvcli.osutil.atomic_write`)."""
    from kvcli.symbol.layout import write_output
    from kvcli.symbol.render import render_bytes
    from kvcli.symbol.summary import summarize
    from kvcli.symbol.viewer import build_html

    svg = render_bytes(dot, "svg", timeout=timeout, progress=progress).decode("utf-8")
    page = build_html(plan, summarize(result), svg, title, types, base=base, rankdir=rankdir, params=check,
                      values=values)
    write_output(target, page.encode("utf-8"))
    return target
