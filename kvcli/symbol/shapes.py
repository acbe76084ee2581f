"""Shape inference for MXNet symbol graphs, following MXNet 1.9.1's rules.

Each rule sees one node's input and output shapes (``None`` = unknown) and fills in what it
can: outputs from inputs, parameter shapes (weights, biases, gamma/beta, moving statistics)
from the data shape, and, where MXNet does too, unknown inputs from known ones (elementwise
ops). The driver sweeps the graph forwards and backwards until nothing changes, as MXNet's
``infer_shape`` does, so a weight shared by 129 time steps is known as soon as any step
determines it. A shape written twice with different values is a conflict and raises
:class:`ShapeInferenceError`; an operator without a rule leaves its outputs unknown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from kvcli.errors import ShapeInferenceError, AttrError
from kvcli.symbol.attrs import Attrs, parse_shape_hint
from kvcli.symbol.graph import Graph

from kvcli.symbol import ops
from kvcli.symbol.ops import ShapeRule as Rule
from kvcli.symbol.shape_rules import Shape as Shape


# ----------------------------------------------------------------------------- driver


@dataclass
class ShapeResult:
    """Shapes of every node output after inference (``None`` where unknown)."""

    graph: Graph
    outputs: list[list[Optional[Shape]]]
    given: dict[str, Shape]
    unknown_ops: dict[str, list[str]] = field(default_factory=dict)
    problems: dict[int, str] = field(default_factory=dict)  # node index -> why its rule failed

    def entry(self, node: int, index: int = 0) -> Optional[Shape]:
        return self.outputs[node][index]

    def inputs_of(self, node: int) -> list[Optional[Shape]]:
        return [self.outputs[s][i] for s, i, _ in self.graph.nodes[node].inputs]

    @property
    def complete(self) -> bool:
        return all(s is not None for outs in self.outputs for s in outs)


def variable_hints(graph: Graph) -> dict[int, Shape]:
    """``__shape__`` hints of variables (Gluon exports; ``Variable(shape=...)``); 0 = unknown dim."""
    hints = {}
    for i, node in enumerate(graph.nodes):
        text = node.hidden.get("__shape__") if node.is_variable else None
        if text:
            hint = parse_shape_hint(text)
            if hint:
                hints[i] = hint
    return hints


def infer_shapes(graph: Graph, given: Optional[Mapping[str, Shape]] = None,
                 max_sweeps: int = 16) -> ShapeResult:
    """Infer every output shape of ``graph`` from ``given`` input shapes and ``__shape__`` hints.

    A shape in ``given`` replaces that variable's hint (so a sample's batch of 1 can be
    overridden); hints on other variables are constraints, as in MXNet: a Gluon weight hinted
    ``(1024, 625)`` conflicts with ``data=(1, 784)``.
    """
    given = dict(given or {})
    nodes = graph.nodes
    outputs: list[list[Optional[Shape]]] = [[None] * graph.num_outputs(i) for i in range(len(nodes))]
    hints = variable_hints(graph)
    constraints: dict[int, Shape] = {}
    for i, node in enumerate(nodes):
        if not node.is_variable:
            continue
        if node.name in given:
            outputs[i][0] = tuple(given[node.name])
        elif i in hints:
            if 0 in hints[i]:
                constraints[i] = hints[i]
            else:
                outputs[i][0] = hints[i]
    result = ShapeResult(graph=graph, outputs=outputs, given=dict(given))

    op_nodes = [i for i, n in enumerate(nodes) if not n.is_variable]
    rules: dict[int, Rule] = {}
    for i in op_nodes:
        op_spec = ops.spec(nodes[i].op)
        fn = op_spec.shape_rule if op_spec is not None else None
        if fn is None:
            result.unknown_ops.setdefault(nodes[i].op, []).append(nodes[i].name)
        else:
            rules[i] = fn
    typed = {i: _typed(nodes[i]) for i in rules}
    done: set[int] = set()

    def visit(i: int) -> bool:
        node = nodes[i]
        ins = [outputs[s][k] for s, k, _ in node.inputs]
        outs = list(outputs[i])
        before_in, before_out = list(ins), list(outs)
        try:
            rules[i](typed[i], ins, outs)
        except (AttrError, IndexError, ValueError, ZeroDivisionError) as error:
            if i not in result.problems:
                result.problems[i] = str(error) or type(error).__name__
            done.add(i)
            return False
        changed = False
        for slot, (new, old) in enumerate(zip(ins, before_in)):
            if new is not None and new != old:
                src, k, _ = node.inputs[slot]
                _check_conflict(graph, i, slot, old, new, given, constraints.get(src))
                outputs[src][k] = new
                changed = True
        for k, (new, old) in enumerate(zip(outs, before_out)):
            if new is not None and new != old:
                if old is not None:
                    raise ShapeInferenceError(
                        f"{graph.source}: shape conflict at '{node.name}' ({node.op}) output {k}: "
                        f"{_fmt(old)} vs {_fmt(new)}; check the input shapes", remedy="input-shapes")
                outputs[i][k] = new
                changed = True
        if all(s is not None for s in outputs[i]) and all(outputs[s][k] is not None for s, k, _ in node.inputs):
            done.add(i)
        return changed

    forward = [i for i in op_nodes if i in rules]

    def sweeps() -> None:
        for sweep in range(max_sweeps):
            order = forward if sweep % 2 == 0 else list(reversed(forward))
            changed = False
            for i in order:
                if i not in done and visit(i):
                    changed = True
            if not changed and sweep > 0:
                break

    sweeps()
    if _fill_partial_creations(graph, outputs, typed):
        sweeps()
    if _fill_partial_hints(graph, outputs, constraints):
        sweeps()
    return result


def _fill_partial_hints(graph: Graph, outputs: list[list[Optional[Shape]]],
                        constraints: Mapping[int, Shape]) -> bool:
    """Complete a variable hinted with one unknown dimension, ``(64, 0)``, that a Reshape with a
    known output reads: the output's size fixes the 0 (MXNet infers it the same way).

    That is a gluon fused RNN's first-layer weight when the layer was built without
    ``input_size``: the export flattens it (``Reshape(shape=-1)``) into ``_rnn_param_concat``,
    whose output the RNN's ``parameters`` slot determines.
    """
    changed = False
    for j, node in enumerate(graph.nodes):
        if node.op not in ("Reshape", "reshape") or not node.inputs or outputs[j][0] is None:
            continue
        src, k, _ = node.inputs[0]
        hint = constraints.get(src)
        if hint is None or outputs[src][k] is not None or hint.count(0) != 1:
            continue
        size = math.prod(outputs[j][0] or ())
        known = math.prod(d for d in hint if d)
        if known and size % known == 0 and size:
            outputs[src][k] = tuple(size // known if d == 0 else d for d in hint)
            changed = True
    return changed


def _fill_partial_creations(graph: Graph, outputs: list[list[Optional[Shape]]],
                            typed: Mapping[int, Attrs]) -> bool:
    """Complete ``_zeros(shape=(0, H))`` read by a FullyConnected whose output is known.

    MXNet keeps such a shape as *partial* (0 = unknown) and FullyConnected fills the batch
    dimension of a partial data shape from its output: that is how an RNN's begin state
    ``h`` (consumed only by the h2h layer) gets its batch. Only partial creation shapes are
    completed this way; an input of unknown shape stays unknown, as in MXNet.
    """
    changed = False
    for j, node in enumerate(graph.nodes):
        if node.op != "FullyConnected" or not node.inputs or outputs[j][0] is None:
            continue
        src, k, _ = node.inputs[0]
        src_spec = ops.spec(graph.nodes[src].op)
        if src_spec is None or not src_spec.creation or outputs[src][k] is not None or src not in typed:
            continue
        try:
            shape = typed[src].ints("shape", ())
        except AttrError:
            continue
        if len(shape) == 2 and shape[0] == 0 and shape[1] > 0:
            first = outputs[j][0]
            assert first is not None  # the loop above skips nodes without an output shape
            outputs[src][k] = (first[0], shape[1])
            changed = True
    return changed


def _check_conflict(graph: Graph, node: int, slot: int, old: Optional[Shape], new: Shape,
                    given: Mapping[str, Shape], hint: Optional[Shape]) -> None:
    n = graph.nodes[node]
    src = graph.nodes[n.inputs[slot][0]]
    slot_name = graph.input_names(node)[slot]
    if old is not None and old != new:
        origin = ("the shape given for it" if src.name in given else
                  "its __shape__ in the file" if "__shape__" in src.hidden else "another layer")
        raise ShapeInferenceError(
            f"{graph.source}: shape conflict at '{n.name}' ({n.op}) input '{slot_name}' "
            f"('{src.name}'): {origin} says {_fmt(old)} but the layer needs {_fmt(new)}; "
            "fix the input shapes", remedy="input-shapes")
    if hint is not None and (len(hint) != len(new) or any(h and h != d for h, d in zip(hint, new))):
        raise ShapeInferenceError(
            f"{graph.source}: shape conflict at '{n.name}' ({n.op}) input '{slot_name}' "
            f"('{src.name}'): its __shape__ in the file says {_fmt(hint)} but the layer needs "
            f"{_fmt(new)}; fix the input shapes", remedy="input-shapes")


def _typed(node: Any) -> Attrs:
    attrs = dict(node.attrs)
    attrs["__op__"] = node.op  # lets shared rules (BatchNorm/LayerNorm) tell ops apart
    return Attrs(attrs)


def _fmt(shape: Shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def format_shape(shape: Optional[Shape], sep: str = "x") -> str:
    """``(1, 64, 112, 112)`` → ``"1x64x112x112"``; unknown → ``"?"``."""
    if shape is None:
        return "?"
    return sep.join(str(d) for d in shape) if shape else "scalar"
