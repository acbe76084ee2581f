"""The Graph model of an MXNet symbol, and reading/writing symbol JSON of every era.

Formats accepted (real examples of each: tests/data/sample_models, listed in tests/data/SOURCES.md):

* MXNet >= 0.12 / 1.x: node ``attrs``, inputs ``[node, index, version]``;
* NNVM 0.9-0.11: node ``attr``, ``node_row_ptr``, top-level ``attrs.mxnet_version``;
* MXNet 0.8: node ``param`` (operator parameters) plus optional ``attr`` (user attributes
  such as ``lr_mult``), ``backward_source_id``, inputs ``[node, index]``, and BatchNorm
  without its two auxiliary inputs (MXNet adds them on load; so do we).

Attributes named ``__like_this__`` (``__shape__``, ``__lr_mult__``, ``__init__`` ...) are kept
apart in :attr:`Node.hidden`. Saving always writes the 1.x layout, which MXNet 1.9.1 loads.
"""

from __future__ import annotations

import gc
import json
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Union

from kvcli.errors import SymbolError, AttrError
from kvcli.symbol import mxjson, ops
from kvcli.symbol.attrs import Attrs

#: ``mxnet_version`` written into saved files (MXNet 1.9.1, the last release).
MXNET_VERSION = 10901
#: Most outputs one node may have (SliceChannel's num_outputs, unknown ops' output indices):
#: shape inference keeps a slot per output, so a file must not be able to ask for 10**9.
MAX_OUTPUTS = 1 << 16

Entry = tuple[int, int, int]  # (node index, output index, version)


class Node:
    """One node: a variable (``op == "null"``) or an operator application.

    A plain slotted class rather than a dataclass: loading creates one per JSON node, and
    half a million of them should not cost seconds.
    """

    __slots__ = ("op", "name", "attrs", "hidden", "inputs")

    def __init__(self, op: str, name: str, attrs: Optional[dict[str, str]] = None,
                 hidden: Optional[dict[str, str]] = None, inputs: Optional[list[Entry]] = None) -> None:
        self.op = op
        self.name = name
        self.attrs: dict[str, str] = attrs if attrs is not None else {}
        self.hidden: dict[str, str] = hidden if hidden is not None else {}
        self.inputs: list[Entry] = inputs if inputs is not None else []

    def __repr__(self) -> str:
        return f"Node(op={self.op!r}, name={self.name!r}, inputs={self.inputs!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    @property
    def is_variable(self) -> bool:
        return self.op == "null"

    @property
    def typed(self) -> Attrs:
        """The operator parameters with typed accessors."""
        return Attrs(self.attrs)


@dataclass
class Graph:
    """A symbol graph in topological order (every input precedes its consumer)."""

    nodes: list[Node]
    heads: list[Entry]
    source: str = "<graph>"
    mxnet_version: Optional[int] = None
    format: str = "attrs"  # "attrs" (1.x), "attr" (NNVM 0.9-0.11) or "param" (0.8)
    _num_outputs: Optional[list[int]] = field(default=None, repr=False)

    @property
    def arg_nodes(self) -> list[int]:
        """Indices of variable nodes (MXNet's ``arg_nodes`` includes aux states too)."""
        return [i for i, n in enumerate(self.nodes) if n.is_variable]

    def num_outputs(self, index: int) -> int:
        """How many outputs node ``index`` has (what ``node_row_ptr`` counts)."""
        if self._num_outputs is None:
            self._num_outputs = _count_outputs(self.nodes, self.heads, self.source)
        return self._num_outputs[index]

    def input_names(self, index: int) -> list[str]:
        """The names of node ``index``'s inputs (``data``, ``weight``, ...; ``arg{i}`` if unknown)."""
        node = self.nodes[index]
        return ops.input_names(node.op, node.typed, len(node.inputs))

    def consumers(self) -> list[list[tuple[int, int]]]:
        """For every node, the ``(consumer node, input slot)`` pairs that read it."""
        out: list[list[tuple[int, int]]] = [[] for _ in self.nodes]
        for i, node in enumerate(self.nodes):
            for slot, (src, _, _) in enumerate(node.inputs):
                out[src].append((i, slot))
        return out

    def to_dict(self) -> dict[str, Any]:
        """The graph as MXNet 1.x symbol JSON (a dict ready for ``json.dumps``)."""
        nodes_out = []
        row_ptr = [0]
        for i, node in enumerate(self.nodes):
            item: dict[str, Any] = {"op": node.op, "name": node.name}
            merged = {**node.attrs, **node.hidden}
            if merged:
                item["attrs"] = merged
            item["inputs"] = [[a, b, c] for a, b, c in node.inputs]
            nodes_out.append(item)
            row_ptr.append(row_ptr[-1] + self.num_outputs(i))
        return {
            "nodes": nodes_out,
            "arg_nodes": self.arg_nodes,
            "node_row_ptr": row_ptr,
            "heads": [[a, b, c] for a, b, c in self.heads],
            "attrs": {"mxnet_version": ["int", MXNET_VERSION]},
        }

    def to_json(self) -> str:
        """Symbol JSON text in MXNet 1.x layout, as MXNet 1.9.1 writes it (:mod:`kvcli.symbol.mxjson`)."""
        return mxjson.dumps(self.to_dict())

    def save(self, path: Union[str, os.PathLike[str]]) -> None:
        """Write :meth:`to_json` to ``path`` (UTF-8, without a final newline, as MXNet does)."""
        Path(path).write_text(self.to_json(), encoding="utf-8")


# ----------------------------------------------------------------------------- loading


def load_file(path: Union[str, os.PathLike[str]]) -> Graph:
    """Read a symbol JSON file; any problem becomes one :class:`SymbolError` naming the file."""
    from kvcli.symbol.source import read_source  # bounded: devices, FIFOs and stalls end in one line

    return load_json(read_source(path), source=str(Path(path)))


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block, and restore its state after.

    Decoding and building many small objects (nodes, shapes, table rows) triggers the
    cyclic GC over and over (quadratic-looking slowdowns on big graphs); none of these
    objects form cycles. The previous state comes back even on error, so a long-lived
    process (``kvcli shell``) keeps its collector.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_json(text: Union[str, bytes], source: str = "<json>") -> Graph:
    """Parse symbol JSON text (any era) into a :class:`Graph`, checking its structure."""
    with paused_gc():
        try:
            doc = json.loads(text)
        except UnicodeDecodeError as error:
            raise SymbolError(f"{source}: not UTF-8 text ({error.reason} at byte {error.start}); "
                              "expected MXNet symbol JSON") from None
        except json.JSONDecodeError as error:
            raise SymbolError(f"{source}: not JSON ({error.msg} at line {error.lineno} column "
                              f"{error.colno}); expected MXNet symbol JSON") from None
        except RecursionError:
            raise SymbolError(f"{source}: JSON nested too deeply to be a symbol file") from None
        except ValueError as error:  # e.g. a number of more than 4300 digits
            raise SymbolError(f"{source}: not usable JSON ({str(error)[:100]}); expected MXNet symbol JSON") from None
        if _lone_surrogate(text, doc):
            raise SymbolError(f"{source}: a string holds a lone surrogate (such as \\ud800), which is not "
                              "valid Unicode; expected MXNet symbol JSON")
        return from_dict(doc, source=source)


def _lone_surrogate(text: Union[str, bytes], doc: Any) -> bool:
    """Whether the decoded JSON holds a lone surrogate (only a \\uD8xx-\\uDFxx escape, or a
    str given directly, can make one: the full check runs only then)."""
    if isinstance(text, bytes) and b"\\u" not in text:
        return False
    try:
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# ---------------------------------------------------------------------- names as shown
#: Names longer than this are cut in the middle where they are shown (tables, labels, warnings).
MAX_NAME = 120


def short_name(name: str) -> str:
    """``name`` cut in the middle when longer than :data:`MAX_NAME` (the length is said)."""
    if len(name) <= MAX_NAME:
        return name
    return f"{name[:MAX_NAME // 2]}…{name[-MAX_NAME // 4:]} ({len(name):,} chars)"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with control characters written as escapes (``\\x1b``, ``\\n``), so a node
    or op name cannot move the cursor, recolour or clear the terminal."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def shown(name: str) -> str:
    """A node or op name as an error or warning shows it: cut (:func:`short_name`) and
    printable (a 1 MB name in a file is not a 1 MB line on the terminal)."""
    return printable(short_name(name))


def from_dict(doc: Any, source: str = "<json>") -> Graph:
    """Build a :class:`Graph` from decoded symbol JSON, validating as it goes."""
    if not isinstance(doc, dict):
        raise SymbolError(f"{source}: top level is a JSON {type(doc).__name__}, expected an object "
                          "with 'nodes' and 'heads' (MXNet symbol JSON)")
    missing = [key for key in ("nodes", "heads") if key not in doc]
    if missing:
        raise SymbolError(f"{source}: no {' or '.join(repr(k) for k in missing)} key; not an MXNet "
                          "symbol file (a '*-symbol.json' has 'nodes' and 'heads')")
    raw_nodes, raw_heads = doc["nodes"], doc["heads"]
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise SymbolError(f"{source}: 'nodes' must be a non-empty list")
    if not isinstance(raw_heads, list) or not raw_heads:
        raise SymbolError(f"{source}: 'heads' must be a non-empty list of [node, index, version]")

    fmt = "attrs"
    version = _mxnet_version(doc)
    nodes: list[Node] = []
    n_total = len(raw_nodes)
    ordered = True  # saved graphs list inputs before consumers; checked as we go
    for i, raw in enumerate(raw_nodes):
        if type(raw) is not dict or type(raw.get("op")) is not str or "name" not in raw:
            raise SymbolError(f"{source}: node {i} is not an object with 'op' and 'name'")
        if "param" in raw:
            fmt = "param"
        elif "attr" in raw and fmt != "param":
            fmt = "attr"
        node = Node(op=raw["op"], name=str(raw["name"]))
        if "attrs" in raw or "attr" in raw or "param" in raw:
            _read_attrs(node, raw, source, i)
        raw_inputs = raw.get("inputs") or []
        if type(raw_inputs) is not list:
            raise SymbolError(f"{source}: node {i} ('{shown(node.name)}') 'inputs' is not a list")
        inputs = []
        for e in raw_inputs:
            # Fast path for the common well-formed [node, index, version] entry.
            if type(e) is list and len(e) == 3 and type(e[0]) is int and type(e[1]) is int \
                    and type(e[2]) is int and 0 <= e[0] < n_total and e[1] >= 0:
                entry = (e[0], e[1], e[2])
            else:
                entry = _entry(e, n_total, source, f"node {i} ('{shown(node.name)}')")
            if entry[0] >= i:
                ordered = False
            inputs.append(entry)
        node.inputs = inputs
        if node.op == "null" and inputs:
            raise SymbolError(f"{source}: variable node {i} ('{shown(node.name)}') has inputs")
        nodes.append(node)
    heads = [_entry(e, n_total, source, "'heads'") for e in raw_heads]

    if not ordered:
        nodes, heads = _topological(nodes, heads, source)
    if fmt == "param":
        nodes, heads = _add_legacy_aux(nodes, heads)
    graph = Graph(nodes=nodes, heads=heads, source=source, mxnet_version=version, format=fmt)
    _check_output_indices(graph)
    return graph


def _mxnet_version(doc: dict[str, Any]) -> Optional[int]:
    attrs = doc.get("attrs")
    if isinstance(attrs, dict):
        value = attrs.get("mxnet_version")
        if isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
            return value[1]
    return None


def _read_attrs(node: Node, raw: dict[str, Any], source: str, index: int) -> None:
    """Split a node's attributes into operator parameters and hidden ``__x__`` attributes."""
    dicts: list[tuple[Any, bool]] = []
    if "param" in raw:  # MXNet 0.8: 'param' = op parameters, 'attr' = user attributes
        dicts = [(raw.get("param"), False), (raw.get("attr"), True)]
    else:
        dicts = [(raw.get("attrs"), False), (raw.get("attr"), False)]
    for values, user_attrs in dicts:
        if values is None:
            continue
        if not isinstance(values, dict):
            raise SymbolError(f"{source}: node {index} ('{shown(node.name)}') attributes are not an object")
        for key, value in values.items():
            key = str(key)
            text = value if isinstance(value, str) else json.dumps(value)
            if key.startswith("__") and key.endswith("__") and len(key) > 4:
                node.hidden[key] = text
            elif user_attrs:  # MXNet's upgrade turns 0.8 user attributes into __key__
                node.hidden[f"__{key}__"] = text
            else:
                node.attrs[key] = text


def _entry(raw: Any, n_nodes: int, source: str, where: str) -> Entry:
    if (not isinstance(raw, list) or len(raw) not in (2, 3)
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in raw)):
        raise SymbolError(f"{source}: {where} has an input entry {json.dumps(raw)[:60]} that is not "
                          "[node, index] or [node, index, version]")
    node, index = raw[0], raw[1]
    if not 0 <= node < n_nodes and where == "'heads'":
        raise SymbolError(f"{source}: a head points to node {node}, which does not exist (the file "
                          f"has nodes 0..{n_nodes - 1}); the head points nowhere")
    if not 0 <= node < n_nodes:
        raise SymbolError(f"{source}: {where} refers to node {node}, but the file has nodes "
                          f"0..{n_nodes - 1} (input index out of range)")
    if index < 0:
        raise SymbolError(f"{source}: {where} uses output {index} of node {node}; indices start at 0")
    return (node, index, raw[2] if len(raw) == 3 else 0)


def _topological(nodes: list[Node], heads: list[Entry], source: str) -> tuple[list[Node], list[Entry]]:
    """Check the graph is acyclic and return it in topological order.

    Saved MXNet graphs are already ordered, so the common case is one linear scan; a forward
    reference triggers an iterative depth-first sort (no recursion: graphs can be deep).
    """
    WHITE, GREY, BLACK = 0, 1, 2
    state = [WHITE] * len(nodes)
    order: list[int] = []
    for root in range(len(nodes)):
        if state[root] != WHITE:
            continue
        stack: list[tuple[int, int]] = [(root, 0)]
        state[root] = GREY
        while stack:
            i, k = stack[-1]
            inputs = nodes[i].inputs
            if k < len(inputs):
                stack[-1] = (i, k + 1)
                j = inputs[k][0]
                if state[j] == GREY:
                    raise SymbolError(f"{source}: the graph has a cycle through node {j} "
                                      f"('{shown(nodes[j].name)}'); a symbol graph must be acyclic")
                if state[j] == WHITE:
                    state[j] = GREY
                    stack.append((j, 0))
            else:
                state[i] = BLACK
                order.append(i)
                stack.pop()
    new_index = {old: new for new, old in enumerate(order)}
    reordered = []
    for old in order:
        n = nodes[old]
        n.inputs = [(new_index[a], b, c) for a, b, c in n.inputs]
        reordered.append(n)
    return reordered, [(new_index[a], b, c) for a, b, c in heads]


def _add_legacy_aux(nodes: list[Node], heads: list[Entry]) -> tuple[list[Node], list[Entry]]:
    """MXNet 0.8 files omit BatchNorm's moving mean/var inputs; add them as MXNet's upgrade does."""
    if not any(n.op in ("BatchNorm", "CuDNNBatchNorm") and len(n.inputs) == 3 for n in nodes):
        return nodes, heads
    out: list[Node] = []
    remap: list[int] = []
    for node in nodes:
        node.inputs = [(remap[a], b, c) for a, b, c in node.inputs]
        if node.op in ("BatchNorm", "CuDNNBatchNorm") and len(node.inputs) == 3:
            for suffix in ("moving_mean", "moving_var"):
                out.append(Node(op="null", name=f"{node.name}_{suffix}", attrs=dict(node.attrs)))
                node.inputs.append((len(out) - 1, 0, 0))
        remap.append(len(out))
        out.append(node)
    return out, [(remap[a], b, c) for a, b, c in heads]


def _count_outputs(nodes: list[Node], heads: Iterable[Entry], source: str = "<graph>") -> list[int]:
    """Outputs per node; a count outside 1..MAX_OUTPUTS (``num_outputs=10**9``, an input entry
    reading output 10**30 of an unknown op) is a :class:`SymbolError`, not a huge allocation."""
    counts = []
    specs: dict[str, Optional[ops.OpSpec]] = {}
    for node in nodes:
        if node.op == "null":
            counts.append(1)
            continue
        spec = specs.get(node.op, False)
        if spec is False:
            spec = specs[node.op] = ops.spec(node.op)
        n = 1
        if spec is not None:
            try:
                n = spec.outputs(node.typed)  # type: ignore[union-attr]  # False was replaced above
            except AttrError:
                n = 1
            if not 1 <= n <= MAX_OUTPUTS:
                raise SymbolError(f"{source}: node '{shown(node.name)}' ({shown(node.op)}) declares {_count_text(n)} outputs; "
                                  f"an operator has 1 to {MAX_OUTPUTS:,} outputs (fix num_outputs)")
        counts.append(n)
    # Unknown ops: trust the file about how many outputs they have.
    def widen(src: int, idx: int) -> None:
        if idx >= counts[src] and specs.get(nodes[src].op) is None and nodes[src].op != "null":
            if idx >= MAX_OUTPUTS:
                raise SymbolError(f"{source}: an entry reads output {_count_text(idx)} of '{shown(nodes[src].name)}' "
                                  f"({shown(nodes[src].op)}); an operator has at most {MAX_OUTPUTS:,} outputs "
                                  "(input index out of range)")
            counts[src] = idx + 1

    for node in nodes:
        for src, idx, _ in node.inputs:
            if idx:
                widen(src, idx)
    for src, idx, _ in heads:
        if idx:
            widen(src, idx)
    return counts


def _count_text(n: int) -> str:
    return f"{n:,}" if abs(n) < 10**18 else f"about 10**{len(str(abs(n))) - 1}"


def _check_output_indices(graph: Graph) -> None:
    nodes = graph.nodes
    for node in nodes:
        for src, idx, _ in node.inputs:
            if idx and idx >= graph.num_outputs(src):  # every node has an output 0
                raise SymbolError(
                    f"{graph.source}: node '{shown(node.name)}' reads output {idx} of '{shown(nodes[src].name)}' "
                    f"({shown(nodes[src].op)}), which has {graph.num_outputs(src)} output(s) "
                    "(input index out of range)")
    for src, idx, _ in graph.heads:
        if idx >= graph.num_outputs(src):
            raise SymbolError(f"{graph.source}: a head points to output {idx} of '{shown(nodes[src].name)}', "
                              f"which has {graph.num_outputs(src)} output(s) (head points nowhere)")
