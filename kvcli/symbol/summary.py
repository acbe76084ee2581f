"""Per-layer summary and parameter totals that agree with MXNet's ``infer_shape``.

MXNet's own ``print_summary`` guesses parameter counts from the previous layer's channels,
which is wrong for FullyConnected after pooling/flatten, for unrolled RNNs (shared weights)
and crashes on some graphs. Here every count is the product of an inferred argument shape,
each variable is counted once (at its first consumer) and auxiliary states (BatchNorm moving
statistics) are totalled separately.

Which variables are learnable parameters, auxiliary states or inputs is decided in
:mod:`kvcli.symbol.roles` (re-exported here). Each layer also carries its cost
(:mod:`kvcli.symbol.cost`): multiply-accumulates and the bytes of its outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from kvcli.symbol.cost import binary, compute_cost, si
from kvcli.symbol.names import MAX_NAME as MAX_NAME, entry_name as entry_name, output_names as output_names
from kvcli.symbol.names import printable as printable, short_name as short_name
from kvcli.symbol.names import visible_outputs as visible_outputs
from kvcli.symbol.shapes import Shape, ShapeResult, format_shape
from kvcli.symbol.roles import AUX as AUX, INPUT as INPUT, LABEL as LABEL, PARAM as PARAM
from kvcli.symbol.roles import variable_roles as variable_roles


@dataclass
class Layer:
    """One row of the summary: an input or an operator node."""

    index: int
    name: str
    op: str
    output_shapes: list[Optional[Shape]]
    params: int  # learnable parameters first counted at this layer (known shapes only)
    aux: int
    unknown_params: list[str]  # parameter/aux variables of this layer whose shape is unknown
    previous: list[str]
    problem: Optional[str] = None
    macs: Optional[int] = 0  # multiply-accumulates (kvcli.symbol.cost); None: unknown
    out_bytes: Optional[int] = None  # bytes of its visible outputs; None: a shape unknown

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "op": self.op,
            "output_shapes": [list(s) if s is not None else None for s in self.output_shapes],
            "params": self.params, "aux": self.aux, "unknown_params": self.unknown_params,
            "macs": self.macs, "out_bytes": self.out_bytes,
            "previous": self.previous, **({"problem": self.problem} if self.problem else {}),
        }


@dataclass
class Summary:
    """The whole table plus totals; ``exact`` is False when the totals are lower bounds."""

    source: str
    layers: list[Layer]
    params: int
    aux: int
    exact: bool
    inputs: dict[str, Optional[Shape]]
    outputs: dict[str, Optional[Shape]]
    unknown_ops: dict[str, list[str]] = field(default_factory=dict)
    unknown_params: list[str] = field(default_factory=list)
    macs: int = 0  # total multiply-accumulates of the operators whose MACs are known
    macs_exact: bool = True  # every operator's MACs are known (else ``macs`` is a lower bound)
    out_bytes: int = 0  # total bytes of the operators' outputs whose size is known
    bytes_exact: bool = True

    def to_dict(self) -> dict[str, Any]:
        def shp(s: Optional[Shape]) -> Optional[list[int]]:
            return list(s) if s is not None else None

        return {
            "file": self.source,
            "inputs": {k: shp(v) for k, v in self.inputs.items()},
            "outputs": {k: shp(v) for k, v in self.outputs.items()},
            "totals": {"params": self.params, "aux": self.aux, "exact": self.exact,
                       "params_text": self.total_text(self.params),
                       "aux_text": self.total_text(self.aux),
                       "macs": self.macs, "macs_exact": self.macs_exact, "macs_text": self.macs_text(),
                       "out_bytes": self.out_bytes, "out_bytes_exact": self.bytes_exact,
                       "out_bytes_text": self.bytes_text()},
            "unknown_ops": self.unknown_ops,
            "unknown_params": self.unknown_params,
            "layers": [layer.to_dict() for layer in self.layers],
        }

    def total_text(self, value: int) -> str:
        return f"{value:,}" if self.exact else f"at least {value:,}"

    def macs_text(self) -> str:
        """``"4,089,184,256 (4.09 G)"``, or ``"at least ..."`` when some MACs are unknown."""
        short = f" ({si(self.macs)})" if self.macs >= 1000 else ""  # "288", not "288 (288)"
        return ("" if self.macs_exact else "at least ") + f"{self.macs:,}{short}"

    def bytes_text(self) -> str:
        """The total of the operators' output bytes, ``"97,153,024 (92.7 MiB)"``."""
        text = f"{self.out_bytes:,} ({binary(self.out_bytes)})" if self.out_bytes >= 1024 else f"{self.out_bytes} B"
        return ("" if self.bytes_exact else "at least ") + text


def summarize(result: ShapeResult, dtypes: Optional[Mapping[str, str]] = None) -> Summary:
    """Build the :class:`Summary` of an inferred graph (``dtypes``: input types for the output
    bytes, float32 otherwise)."""
    graph = result.graph
    nodes = graph.nodes
    roles = variable_roles(graph, set(result.given))
    shown = [1 if node.op == "null" else visible_outputs(graph, i) for i, node in enumerate(nodes)]
    cost = compute_cost(result, dtypes, roles=roles, visible=shown)
    counted: set[int] = set()
    layers: list[Layer] = []
    total_params = total_aux = 0
    unknown: list[str] = []
    for i, node in enumerate(nodes):
        if node.is_variable:
            if roles[i] in (INPUT, LABEL):
                layers.append(Layer(i, node.name, "input" if roles[i] == INPUT else "label",
                                    [result.entry(i)], 0, 0, [], [], out_bytes=cost.out_bytes[i]))
            continue
        params = aux = 0
        missing: list[str] = []
        previous: list[str] = []
        # a set, not `in previous`, when fan-in is big (a node may have 10^5 inputs); a short
        # list is faster for the usual one to three inputs
        listed: Optional[set[str]] = set() if len(node.inputs) > 8 else None
        for src, _, _ in node.inputs:
            role = roles.get(src)
            if role in (PARAM, AUX):
                if src in counted:
                    continue
                counted.add(src)
                more_params, more_aux = _variable_size(result, src, role, missing)
                params, aux = params + more_params, aux + more_aux
            elif listed is None:
                if nodes[src].name not in previous:
                    previous.append(nodes[src].name)
            elif nodes[src].name not in listed:
                listed.add(nodes[src].name)
                previous.append(nodes[src].name)
        layers.append(Layer(i, node.name, node.op, result.outputs[i][:shown[i]], params, aux,
                            missing, previous, result.problems.get(i), cost.macs[i], cost.out_bytes[i]))
        total_params += params
        total_aux += aux
        unknown.extend(missing)
    # Parameters nobody consumes through a known slot still count (MXNet lists them).
    for i, role in roles.items():
        if role in (PARAM, AUX) and i not in counted:
            more_params, more_aux = _variable_size(result, i, role, unknown)
            total_params, total_aux = total_params + more_params, total_aux + more_aux
    inputs = {nodes[i].name: result.entry(i) for i, r in roles.items() if r in (INPUT, LABEL)}
    outputs = dict(zip(output_names(graph), (result.entry(n, k) for n, k, _ in graph.heads)))
    exact = not unknown and not result.unknown_ops
    return Summary(source=graph.source, layers=layers, params=total_params, aux=total_aux,
                   exact=exact, inputs=inputs, outputs=outputs,
                   unknown_ops=dict(result.unknown_ops), unknown_params=unknown,
                   macs=cost.total_macs, macs_exact=cost.macs_exact, out_bytes=cost.total_out_bytes,
                   bytes_exact=cost.bytes_exact)


def _variable_size(result: ShapeResult, node: int, role: str, unknown: list[str]) -> tuple[int, int]:
    """(learnable params, aux states) that variable ``node`` of ``role`` holds; a variable of
    unknown shape adds its name to ``unknown`` and counts 0."""
    shape = result.entry(node)
    if shape is None:
        unknown.append(result.graph.nodes[node].name)
        return 0, 0
    return (_size(shape), 0) if role == PARAM else (0, _size(shape))


def _size(shape: Shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


#: Above this many rows rich's table layout gets slow (minutes for 10^5 rows): print plain columns.
RICH_ROW_LIMIT = 2000


#: Table cells stay short so no column is squeezed to nothing: at most this many output
#: shapes and previous layers are listed (then a count), names are cut in the middle.
MAX_SHAPES, MAX_PREVIOUS = 3, 4


def _count(value: Optional[int]) -> str:
    """A MACs or bytes cell: blank for 0, ``?`` when unknown."""
    return "?" if value is None else f"{value:,}" if value else ""


def _row_cells(summary: Summary, layer: Layer, whole: bool = False) -> tuple[str, ...]:
    """Layer, op, output shape(s), params, aux, MACs, output bytes, previous layers: each
    bounded in length (``whole``: names are never cut, for piped output that ``grep`` reads)."""
    cut = (lambda name: name) if whole else short_name
    outs = layer.output_shapes
    shapes = ", ".join(format_shape(s) for s in outs[:MAX_SHAPES])
    if len(outs) > MAX_SHAPES:
        shapes += f", … ({len(outs)} outputs)"
    params = f"{layer.params:,}" if layer.params else ""
    aux = f"{layer.aux:,}" if layer.aux else ""
    if layer.unknown_params:
        params = f"{params} + ?" if params else "?"
    op = f"{layer.op} (unknown op)" if layer.op in summary.unknown_ops else layer.op
    prev = layer.previous
    previous = ", ".join(printable(cut(p)) for p in prev[:MAX_PREVIOUS])
    if len(prev) > MAX_PREVIOUS:
        previous += f", … (+{len(prev) - MAX_PREVIOUS:,} more)"
    return (printable(cut(layer.name)), printable(cut(op)), shapes, params, aux, _count(layer.macs),
            _count(layer.out_bytes), previous)


def print_table(summary: Summary, console: Any, title: Optional[str] = None,
                more_shapes: str = "give more input shapes (shape=)") -> None:
    """Print ``summary`` as a table (layer, op, output shape, params, previous layers).

    ``more_shapes``: the advice after the parameters whose shape is unknown (the CLI's
    names its ``--shape`` option).

    On a terminal: a rich table (plain columns above :data:`RICH_ROW_LIMIT` rows). Piped or
    redirected: plain columns, one line per layer, names whole and never wrapped, so ``grep``
    and ``awk`` find them. Names are printed as text (no markup, control characters escaped).
    """
    if len(summary.layers) > RICH_ROW_LIMIT or not console.is_terminal:
        _print_plain(summary, console, title, whole=not console.is_terminal)
    else:
        _print_rich(summary, console, title)
    _print_totals(summary, console, more_shapes)


def _print_plain(summary: Summary, console: Any, title: Optional[str], whole: bool = False) -> None:
    """Fixed-width columns written straight to the console's file: linear time, no wrapping."""
    rows = [_row_cells(summary, layer, whole) for layer in summary.layers]
    header = ("Layer", "Op", "Output shape", "Params", "Aux", "MACs", "Output bytes", "Previous layers")
    widths = [min(max(len(r[k]) for r in rows + [header]), 48) for k in range(7)]
    out = console.file
    if title:
        out.write(printable(title) + "\n")
    fmt = "{:<%d}  {:<%d}  {:<%d}  {:>%d}  {:>%d}  {:>%d}  {:>%d}  {}\n" % tuple(widths)
    out.write(fmt.format(*header))
    out.write("-" * (sum(widths) + 14 + len(header[7])) + "\n")
    out.writelines(fmt.format(*row) for row in rows)
    out.flush()


def _print_rich(summary: Summary, console: Any, title: Optional[str]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(printable(title)) if title else None, title_justify="left",
                  show_lines=False, header_style="bold")
    table.add_column("Layer", overflow="fold")
    table.add_column("Op")
    table.add_column("Output shape", no_wrap=True)
    table.add_column("Params", justify="right", no_wrap=True)
    table.add_column("Aux", justify="right", no_wrap=True)
    table.add_column("MACs", justify="right", no_wrap=True)
    table.add_column("Output bytes", justify="right", no_wrap=True)
    table.add_column("Previous layers", overflow="fold")
    for layer in summary.layers:
        name, op, shapes, params, aux, macs, size, previous = _row_cells(summary, layer)
        style = "yellow" if layer.op in summary.unknown_ops else "dim" if layer.op in ("input", "label") else ""
        table.add_row(Text(name), Text(op, style=style), Text(shapes), params, aux, macs, size, Text(previous))
    console.print(table)


def _print_totals(summary: Summary, console: Any, more_shapes: str) -> None:
    from rich.markup import escape

    def text(name: str) -> str:  # a name from the file: cut short, no markup, no control characters
        return escape(printable(short_name(name)))

    console.print(f"Learnable parameters: [bold]{summary.total_text(summary.params)}[/]")
    console.print(f"Auxiliary states:     [bold]{summary.total_text(summary.aux)}[/]")
    console.print(f"MACs:                 [bold]{summary.macs_text()}[/]")
    console.print(f"Output bytes:         [bold]{summary.bytes_text()}[/]")
    if summary.unknown_ops:
        ops = sorted(summary.unknown_ops)
        ops_list = ", ".join(text(op) for op in ops[:10]) + (f" and {len(ops) - 10:,} more" if len(ops) > 10 else "")
        console.print(f"[yellow]Unknown operators (shapes not inferred): {ops_list}[/]")
    if summary.unknown_params:
        shown = ", ".join(text(n) for n in summary.unknown_params[:5]) + (
            " ..." if len(summary.unknown_params) > 5 else "")
        console.print(f"[yellow]Parameters with unknown shape: {shown}; {escape(more_shapes)}[/]")
    problems = [layer for layer in summary.layers if layer.problem]
    for layer in problems[:5]:
        console.print(f"[yellow]'{text(layer.name)}' ({text(layer.op)}): {text(layer.problem or '')}[/]")
