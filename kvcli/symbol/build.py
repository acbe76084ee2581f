"""``mx.sym`` without MXNet: build symbol graphs in Python, save them as MXNet JSON.

>>> from kvcli.mx import sym
>>> data = sym.Variable("data")
>>> net = sym.FullyConnected(data=data, num_hidden=10, name="fc1")
>>> net.list_arguments()
['data', 'fc1_weight', 'fc1_bias']
>>> net.infer_shape(data=(2, 5))[1]
[(2, 10)]

Behaves like MXNet 1.9.1's symbol API where the visualisation tutorial needs it: operators
with MXNet's keyword names create their weight/bias/label variables when not given, unnamed
nodes are auto-named like MXNet (``fullyconnected0``, ``_mul0``, ``_plusscalar0``), and
:meth:`Symbol.tojson` writes JSON that MXNet 1.9.1 loads. There is no execution: symbols
describe graphs for drawing, summarising and shape inference.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

from kvcli.errors import ShapeInferenceError, SymbolError
from kvcli.symbol import ops
from kvcli.symbol.attrs import AttrScope, Attrs, format_value, stored_key, with_plain_keys
from kvcli.symbol.dtypes import infer_dtypes
from kvcli.symbol.graph import Graph, Node, load_file
from kvcli.symbol.graph import load_json as _load_graph_json
from kvcli.symbol.shapes import Shape, ShapeResult, infer_shapes, variable_hints
from kvcli.symbol.names import entry_name

__all__ = [
    "AttrScope", "Symbol", "Variable", "var", "Group", "load", "load_json", "NameManager",
]

_DTYPE_CODES = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
                "int64": 6, "bool": 7}


class _Node:
    """A mutable graph node shared by every Symbol that reaches it."""

    __slots__ = ("op", "name", "attrs", "hidden", "inputs")

    def __init__(self, op: str, name: str, attrs: Optional[dict[str, str]] = None,
                 hidden: Optional[dict[str, str]] = None,
                 inputs: Optional[list[tuple["_Node", int, int]]] = None) -> None:
        self.op = op
        self.name = name
        self.attrs = attrs or {}
        self.hidden = hidden or {}
        self.inputs = inputs or []

    def num_visible(self) -> int:
        if self.op == "null":
            return 1
        spec = ops.spec(self.op)
        return spec.num_visible(Attrs(self.attrs)) if spec is not None else 1


class NameManager:
    """MXNet's automatic names: ``hint`` + a per-hint counter (``fullyconnected0``, ``_mul1``).

    Counters are global to the process as in MXNet; :meth:`reset` starts them again (tests
    and the sample generator use it to get MXNet's exact names).
    """

    _counters: dict[str, int] = defaultdict(int)

    @classmethod
    def get(cls, name: Optional[str], hint: str) -> str:
        if name is not None:
            return name
        n = cls._counters[hint]
        cls._counters[hint] = n + 1
        return f"{hint}{n}"

    @classmethod
    def reset(cls) -> None:
        cls._counters.clear()


class Symbol:
    """One or more outputs of a symbol graph (MXNet's ``mx.sym.Symbol``)."""

    __slots__ = ("_outputs", "_graph_cache")

    def __init__(self, outputs: Sequence[tuple[_Node, int]]) -> None:
        self._outputs: list[tuple[_Node, int]] = list(outputs)
        self._graph_cache: Optional[tuple[Graph, dict[int, int]]] = None

    # ------------------------------------------------------------------ structure
    @property
    def name(self) -> Optional[str]:
        """The node's name when every output comes from one node (``split`` with 3 outputs
        too, as in MXNet), ``None`` for a group of several nodes' outputs."""
        first = self._outputs[0][0]
        return first.name if all(node is first for node, _ in self._outputs) else None

    def __repr__(self) -> str:
        """MXNet's: ``<Symbol fc1>``, or ``<Symbol group [data, fc1_weight, fc1]>``."""
        if self.name is not None:
            return f"<Symbol {self.name}>"
        return "<Symbol group [" + ", ".join(node.name for node, _ in self._outputs) + "]>"

    def __call__(self, *args: "Symbol", name: Optional[str] = None, **kwargs: "Symbol") -> "Symbol":
        """A copy of this symbol with some free variables replaced (MXNet's composition):
        ``net(fc3_data=x)`` puts ``x`` where the variable ``fc3_data`` was; positional symbols
        replace the arguments in :meth:`list_arguments` order. ``name`` renames the head node."""
        if args and kwargs:
            raise TypeError("compose with positional or keyword symbols, not both")
        arguments = self.list_arguments()
        if len(args) > len(arguments):
            raise TypeError(f"compose: {len(args)} symbols for {len(arguments)} arguments {arguments}")
        given: dict[str, Symbol] = dict(zip(arguments, args)) if args else dict(kwargs)
        for key, value in given.items():
            if key not in arguments:
                raise SymbolError(f"compose: {key!r} is not an argument; arguments are {arguments}")
            if not isinstance(value, Symbol):
                raise TypeError(f"compose: {key}= must be a Symbol, got {type(value).__name__}")
        replace = {key: (_single(value), _index(value)) for key, value in given.items()}
        copies: dict[int, _Node] = {}
        for node in self._topo():
            if node.op == "null" and node.name in replace:
                continue
            inputs = []
            for src, k, version in node.inputs:
                if src.op == "null" and src.name in replace:
                    new, k = replace[src.name]
                    inputs.append((new, k, version))
                else:
                    inputs.append((copies[id(src)], k, version))
            copies[id(node)] = _Node(node.op, node.name, dict(node.attrs), dict(node.hidden), inputs)
        outputs = [replace[node.name] if node.op == "null" and node.name in replace else (copies[id(node)], k)
                   for node, k in self._outputs]
        if name is not None:  # only the copies: a symbol put in by the caller keeps its name
            made = {id(c) for c in copies.values()}
            for node, _ in outputs:
                if id(node) in made:
                    node.name = name
        return Symbol(outputs)

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self) -> Iterator["Symbol"]:
        return (Symbol([out]) for out in self._outputs)

    def __getitem__(self, index: Union[int, str]) -> "Symbol":
        if isinstance(index, str):
            names = self.list_outputs()
            if index not in names:
                raise SymbolError(f"no output named {index!r}; outputs are {names}")
            index = names.index(index)
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"output {index} of a symbol with {len(self._outputs)} outputs")
        return Symbol([self._outputs[index]])

    def _topo(self) -> list[_Node]:
        """Nodes in MXNet's order: depth-first, inputs in order, each node after its inputs."""
        order: list[_Node] = []
        seen: set[int] = set()
        for head, _ in self._outputs:
            if id(head) in seen:
                continue
            stack: list[tuple[_Node, int]] = [(head, 0)]
            seen.add(id(head))
            while stack:
                node, k = stack[-1]
                if k < len(node.inputs):
                    stack[-1] = (node, k + 1)
                    child = node.inputs[k][0]
                    if id(child) not in seen:
                        seen.add(id(child))
                        stack.append((child, 0))
                else:
                    order.append(node)
                    stack.pop()
        return order

    def to_graph(self) -> Graph:
        """This symbol as a :class:`~kvcli.symbol.graph.Graph` (nodes in MXNet's order)."""
        if self._graph_cache is None:
            order = self._topo()
            index = {id(n): i for i, n in enumerate(order)}
            nodes = [Node(op=n.op, name=n.name, attrs=dict(n.attrs), hidden=dict(n.hidden),
                          inputs=[(index[id(src)], k, v) for src, k, v in n.inputs]) for n in order]
            heads = [(index[id(n)], k, 0) for n, k in self._outputs]
            self._graph_cache = (Graph(nodes=nodes, heads=heads, source="<symbol>"), index)
        return self._graph_cache[0]

    def _aux_ids(self, graph: Graph) -> set[int]:
        aux: set[int] = set()
        for i, node in enumerate(graph.nodes):
            spec = ops.spec(node.op)
            if spec is None or not spec.aux:
                continue
            for (src, _, _), slot in zip(node.inputs, graph.input_names(i)):
                if slot in spec.aux and graph.nodes[src].is_variable:
                    aux.add(src)
        return aux

    def list_arguments(self) -> list[str]:
        """Names of the variables that are not auxiliary states (inputs, weights, labels)."""
        g = self.to_graph()
        aux = self._aux_ids(g)
        return [n.name for i, n in enumerate(g.nodes) if n.is_variable and i not in aux]

    def list_auxiliary_states(self) -> list[str]:
        """Names of auxiliary states (BatchNorm moving mean/var)."""
        g = self.to_graph()
        aux = self._aux_ids(g)
        return [n.name for i, n in enumerate(g.nodes) if i in aux]

    def list_inputs(self) -> list[str]:
        """Every variable, arguments and auxiliary states, in graph order."""
        return [n.name for n in self.to_graph().nodes if n.is_variable]

    def list_outputs(self) -> list[str]:
        """Output names as MXNet gives them (``fc1_output``, ``split0_output1``, ``data``)."""
        g = self.to_graph()
        return [entry_name(g, n, k) for n, k, _ in g.heads]

    def get_internals(self) -> "Symbol":
        """A group of every node's outputs (variables included), in graph order."""
        outs: list[tuple[_Node, int]] = []
        for node in self._topo():
            outs.extend((node, k) for k in range(node.num_visible()))
        return Symbol(outs)

    def get_children(self) -> Optional["Symbol"]:
        """The inputs of this (single-output) symbol's node, or ``None`` for a variable."""
        node = self._outputs[0][0]
        if not node.inputs:
            return None
        return Symbol([(src, k) for src, k, _ in node.inputs])

    # ------------------------------------------------------------------ attributes
    def attr(self, key: str) -> Optional[str]:
        """An attribute of this symbol's node (``"__shape__"``, ``"num_hidden"``; a hidden key
        such as ``"lr_mult"`` by either name, as in MXNet)."""
        node = self._outputs[0][0]
        return with_plain_keys({**node.attrs, **node.hidden}).get(key)

    def list_attr(self) -> dict[str, str]:
        """The node's attributes, hidden keys under both names (``__lr_mult__`` and ``lr_mult``)."""
        node = self._outputs[0][0]
        return with_plain_keys({**node.attrs, **node.hidden})

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """:meth:`list_attr` of every node that has attributes, by name."""
        return {n.name: with_plain_keys({**n.attrs, **n.hidden}) for n in self._topo() if n.attrs or n.hidden}

    def _set_attr(self, **kwargs: str) -> None:
        """Set attributes of this symbol's node (MXNet's ``_set_attr``): hidden keys are stored
        as ``__key__``; on an operator, other keys are its parameters."""
        node = self._outputs[0][0]
        for key, value in kwargs.items():
            stored = stored_key(key, value, exact=True)
            if stored.startswith("__") or node.op == "null":
                node.hidden[stored] = str(value)
            else:
                node.attrs[stored] = format_value(value)
        self._graph_cache = None

    # ------------------------------------------------------------------ JSON
    def tojson(self) -> str:
        """MXNet 1.x symbol JSON (loadable by ``mx.sym.load_json`` of MXNet 1.9.1)."""
        return self.to_graph().to_json()

    def save(self, fname: Union[str, os.PathLike[str]]) -> None:
        """Write :meth:`tojson` to ``fname``."""
        self.to_graph().save(fname)

    # ------------------------------------------------------------------ shapes
    def _infer(self, args: Sequence[Any], kwargs: Mapping[str, Any], partial: bool) -> tuple[Any, Any, Any]:
        """Shapes as MXNet gives them: a 0 is an unknown dimension; ``infer_shape`` returns
        ``(None, None, None)`` unless every shape is complete, ``infer_shape_partial`` returns
        what is known, ``()`` for a shape not known at all."""
        arg_names = self.list_arguments()
        given: dict[str, Shape] = {}
        for name, shape in zip(arg_names, args):
            if shape is not None:
                given[name] = tuple(int(d) for d in shape)
        for name, shape in kwargs.items():
            if name not in arg_names:
                raise SymbolError(f"infer_shape: {name!r} is not an argument; arguments are {arg_names}")
            if shape is not None:
                given[name] = tuple(int(d) for d in shape)
        g = self.to_graph()
        result = infer_shapes(g, given)
        if partial:
            result = self._with_partial_hints(g, given, result)
        by_name = {n.name: result.entry(i) for i, n in enumerate(g.nodes) if n.is_variable}
        arg_shapes = [by_name[n] for n in arg_names]
        out_shapes = [result.entry(n, k) for n, k, _ in g.heads]
        aux_shapes = [by_name[n] for n in self.list_auxiliary_states()]
        if partial:
            return ([s or () for s in arg_shapes], [s or () for s in out_shapes],
                    [s or () for s in aux_shapes])
        if any(s is None or 0 in s for s in (*arg_shapes, *out_shapes, *aux_shapes)):
            return None, None, None
        return arg_shapes, out_shapes, aux_shapes

    @staticmethod
    def _with_partial_hints(g: Graph, given: dict[str, Shape], result: ShapeResult) -> ShapeResult:
        """MXNet's partial inference starts from a variable's partial ``shape=`` hint, (1, 0, 0, 0),
        and lets the rules carry its known dimensions on (a convolution's weight becomes
        (64, 0, 7, 7)). A hint with a 0 is only a constraint in :func:`infer_shapes`; here the
        variables it left unknown start from their hints in a second pass."""
        hints = variable_hints(g)
        start = {g.nodes[i].name: hint for i, hint in hints.items()
                 if 0 in hint and result.entry(i) is None and g.nodes[i].name not in given}
        if not start:
            return result
        try:
            return infer_shapes(g, {**given, **start})
        except ShapeInferenceError:  # a rule needs the full shape: the first pass is all we know
            return result

    def infer_shape(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """``(arg_shapes, out_shapes, aux_shapes)``, or ``(None, None, None)`` if incomplete."""
        return self._infer(args, kwargs, partial=False)

    def infer_shape_partial(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """Like :meth:`infer_shape`, with ``()`` for shapes that cannot be inferred."""
        return self._infer(args, kwargs, partial=True)

    def infer_type(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """``(arg_types, out_types, aux_types)`` as numpy types (``numpy.float32`` ...) from the
        given input types (positional in :meth:`list_arguments` order, or by name) and the
        variables' ``dtype=``; weights and labels take the type of the op that reads them.
        ``(None, None, None)`` with MXNet's warning when some type cannot be decided."""
        return self._infer_type(args, kwargs, partial=False)

    def infer_type_partial(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        """Like :meth:`infer_type`, with ``None`` for the types that cannot be decided."""
        return self._infer_type(args, kwargs, partial=True)

    def _infer_type(self, args: Sequence[Any], kwargs: Mapping[str, Any], partial: bool) -> tuple[Any, Any, Any]:
        import warnings

        import numpy as np

        arg_names = self.list_arguments()
        g = self.to_graph()
        names = {code: name for name, code in _DTYPE_CODES.items()}
        given: dict[str, str] = {n.name: names[int(n.hidden["__dtype__"])] for n in g.nodes
                                 if n.is_variable and n.hidden.get("__dtype__", "").isdigit()
                                 and int(n.hidden["__dtype__"]) in names}
        for key, value in [*zip(arg_names, args), *kwargs.items()]:
            if key not in arg_names:
                raise SymbolError(f"infer_type: {key!r} is not an argument; arguments are {arg_names}")
            if value is not None:
                given[key] = np.dtype(value).name
        types = infer_dtypes(g, given)
        by_name = {n.name: types[i] for i, n in enumerate(g.nodes) if n.is_variable}
        arg_types = [by_name[n] for n in arg_names]
        if not partial and any(t is None for t in arg_types):
            unknowns = [f"{n}: None" for n, t in zip(arg_names, arg_types) if t is None]
            warnings.warn("Cannot decide type for the following arguments. Consider providing them "
                          "as input:\n\t" + "\n\t".join(unknowns), stacklevel=3)
            return None, None, None
        out_types = [types[n] for n, _, _ in g.heads]
        aux_types = [by_name[n] for n in self.list_auxiliary_states()]

        def numpy_types(found: list[Optional[str]]) -> list[Any]:
            return [np.dtype(t).type if t is not None else None for t in found]

        return numpy_types(arg_types), numpy_types(out_types), numpy_types(aux_types)

    # ------------------------------------------------------------------ arithmetic
    def _binary(self, other: Any, op: str, hint: str, scalar_op: str, scalar_hint: str) -> "Symbol":
        if isinstance(other, Symbol):
            return _apply(op, [self, other], {}, name=None, hint=hint)
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return _apply(scalar_op, [self], {"scalar": other}, name=None, hint=scalar_hint)
        return NotImplemented

    def _rscalar(self, other: Any, op: str, hint: str) -> "Symbol":
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return _apply(op, [self], {"scalar": other}, name=None, hint=hint)
        return NotImplemented

    def __add__(self, other: Any) -> "Symbol":
        return self._binary(other, "elemwise_add", "_plus", "_plus_scalar", "_plusscalar")

    def __radd__(self, other: Any) -> "Symbol":
        return self._rscalar(other, "_plus_scalar", "_plusscalar")

    def __sub__(self, other: Any) -> "Symbol":
        return self._binary(other, "elemwise_sub", "_minus", "_minus_scalar", "_minusscalar")

    def __rsub__(self, other: Any) -> "Symbol":
        return self._rscalar(other, "_rminus_scalar", "_rminusscalar")

    def __mul__(self, other: Any) -> "Symbol":
        return self._binary(other, "elemwise_mul", "_mul", "_mul_scalar", "_mulscalar")

    def __rmul__(self, other: Any) -> "Symbol":
        return self._rscalar(other, "_mul_scalar", "_mulscalar")

    def __truediv__(self, other: Any) -> "Symbol":
        return self._binary(other, "elemwise_div", "_div", "_div_scalar", "_divscalar")

    def __rtruediv__(self, other: Any) -> "Symbol":
        return self._rscalar(other, "_rdiv_scalar", "_rdivscalar")

    def __pow__(self, other: Any) -> "Symbol":
        return self._binary(other, "_power", "_power", "_power_scalar", "_powerscalar")

    def __rpow__(self, other: Any) -> "Symbol":
        return self._rscalar(other, "_rpower_scalar", "_rpowerscalar")

    def __neg__(self) -> "Symbol":
        return self.__mul__(-1.0)

    def __bool__(self) -> bool:  # MXNet refuses too: a Symbol has no truth value
        raise TypeError("a Symbol has no truth value; compare shapes or names instead")


# ---------------------------------------------------------------------- construction


def Variable(name: str, attr: Optional[Mapping[str, str]] = None, shape: Optional[Sequence[int]] = None,
             lr_mult: Optional[float] = None, wd_mult: Optional[float] = None, dtype: Any = None,
             init: Any = None, stype: Optional[str] = None, **kwargs: Any) -> Symbol:
    """A named input or parameter. ``shape`` is stored as MXNet's ``__shape__`` hint."""
    if not isinstance(name, str) or not name:
        raise SymbolError(f"Variable name must be a non-empty string, got {name!r}")
    attrs: dict[str, str] = {}
    hidden: dict[str, str] = {}
    for key, value in AttrScope.active().get(attr).items():
        stored = stored_key(key, value, exact=True)
        (hidden if stored.startswith("__") else attrs)[stored] = str(value)
    if shape is not None:  # written as MXNet writes it: str() of the tuple or list given
        dims = [int(d) for d in shape]
        hidden["__shape__"] = str(dims if isinstance(shape, list) else tuple(dims))
    if lr_mult is not None:
        hidden["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        hidden["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        dname = getattr(dtype, "__name__", None) or str(getattr(dtype, "name", dtype))
        if dname not in _DTYPE_CODES:
            raise SymbolError(f"Variable {name!r}: unsupported dtype {dtype!r}; use one of {list(_DTYPE_CODES)}")
        hidden["__dtype__"] = str(_DTYPE_CODES[dname])
    if init is not None:
        hidden["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        hidden["__storage_type__"] = str({"default": 0, "row_sparse": 1, "csr": 2}.get(stype, stype))
    for key, value in kwargs.items():
        if not (key.startswith("__") and key.endswith("__")):
            raise SymbolError(f"Variable {name!r}: unknown argument {key!r}")
        hidden[key] = str(value)
    return Symbol([(_Node("null", name, attrs, hidden), 0)])


var = Variable


def Group(symbols: Sequence[Symbol]) -> Symbol:
    """One symbol with the outputs of all ``symbols`` (MXNet's ``mx.sym.Group``)."""
    outs: list[tuple[_Node, int]] = []
    for s in symbols:
        if not isinstance(s, Symbol):
            raise SymbolError(f"Group expects Symbols, got {type(s).__name__}")
        outs.extend(s._outputs)
    if not outs:
        raise SymbolError("Group of no symbols")
    return Symbol(outs)


def from_graph(graph: Graph) -> Symbol:
    """Wrap a loaded :class:`Graph` as a :class:`Symbol` (its heads become the outputs)."""
    made: list[_Node] = []
    for node in graph.nodes:
        made.append(_Node(node.op, node.name, dict(node.attrs), dict(node.hidden),
                          [(made[src], k, v) for src, k, v in node.inputs]))
    return Symbol([(made[n], k) for n, k, _ in graph.heads])


def load(fname: Union[str, os.PathLike[str]]) -> Symbol:
    """Load a symbol JSON file of any MXNet era (``mx.sym.load``)."""
    return from_graph(load_file(fname))


def load_json(json_str: str) -> Symbol:
    """Load symbol JSON text (``mx.sym.load_json``)."""
    return from_graph(_load_graph_json(json_str, source="<json string>"))


def _apply(op: str, positional: Sequence[Any], kwargs: Mapping[str, Any], name: Optional[str],
           hint: str, attr: Optional[Mapping[str, str]] = None) -> Symbol:
    """Create an operator node: sort Symbol arguments into inputs, the rest into attributes.

    ``attr`` and the :class:`AttrScope` in force join the keyword arguments, as in MXNet:
    hidden keys (``lr_mult``, ``ctx_group``, ...) are stored as ``__key__`` on the node and on
    the variables it creates (its weight, bias, ...), other keys are operator parameters."""
    spec = ops.spec(op)
    assert spec is not None, op
    kwargs = dict(kwargs)
    hidden: dict[str, str] = {}
    for key, value in AttrScope.active().get(attr).items():
        stored = stored_key(key, value)
        if stored.startswith("__"):
            hidden[stored] = str(value)
        else:
            kwargs[stored] = value
    sym_kwargs = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
    attrs = {k: format_value(v) for k, v in kwargs.items() if not isinstance(v, Symbol) and v is not None}
    symbols = [p for p in positional if isinstance(p, Symbol)]
    extra = [p for p in positional if not isinstance(p, Symbol)]
    if extra:
        names = _POSITIONAL.get(op, ())
        if len(extra) > len(names):
            raise TypeError(f"{hint}() got {len(extra)} positional values it cannot place; "
                            "pass them by keyword")
        for key, value in zip(names, extra):
            attrs[key] = format_value(value)
    if spec.variadic:
        if sym_kwargs:
            raise TypeError(f"{hint}() takes its inputs as positional Symbols")
        attrs.setdefault("num_args", str(len(symbols)))
        node_name = NameManager.get(name, hint)
        node = _Node(op, node_name, attrs, hidden, [(_single(s), _index(s), 0) for s in symbols])
        return Symbol([(node, 0)])
    input_names = spec.inputs(Attrs(attrs))
    given: dict[str, Symbol] = {}
    for slot, s in zip(input_names, symbols):
        given[slot] = s
    if len(symbols) > len(input_names):
        raise TypeError(f"{hint}() takes {len(input_names)} inputs ({', '.join(input_names)}), "
                        f"got {len(symbols)}")
    for key, s in sym_kwargs.items():
        if key not in input_names:
            raise TypeError(f"{hint}() has no input {key!r}; inputs are {', '.join(input_names)}")
        if key in given:
            raise TypeError(f"{hint}() got input {key!r} twice")
        given[key] = s
    node_name = NameManager.get(name, hint)
    inputs: list[tuple[_Node, int, int]] = []
    for slot in input_names:
        version = 1 if slot in spec.aux else 0  # MXNet marks aux inputs as mutated (version 1)
        init = spec.input_init.get(slot)
        if slot in given:
            s = given[slot]
            source = _single(s)
            if init is not None and source.op == "null":
                source.hidden.setdefault("__init__", init)  # MXNet changes the caller's variable too
            inputs.append((source, _index(s), version))
            continue
        # MXNet creates missing inputs as variables that carry the op's attributes.
        var_hidden = {**hidden, "__init__": init} if init is not None else dict(hidden)
        inputs.append((_Node("null", f"{node_name}_{slot}", dict(attrs), var_hidden), 0, version))
    node = _Node(op, node_name, attrs, hidden, inputs)
    return Symbol([(node, k) for k in range(node.num_visible())])


def _single(self: Symbol) -> _Node:
    if len(self._outputs) != 1:
        raise SymbolError(f"a group of {len(self._outputs)} outputs cannot be an operator input; "
                          "index it first (sym[0])")
    return self._outputs[0][0]


def _index(self: Symbol) -> int:
    return self._outputs[0][1]



# Values MXNet's generated functions accept positionally after the inputs.
_POSITIONAL: dict[str, tuple[str, ...]] = {
    "clip": ("a_min", "a_max"),
    "Reshape": ("shape",), "transpose": ("axes",), "expand_dims": ("axis",), "squeeze": ("axis",),
    "sum": ("axis", "keepdims"), "mean": ("axis", "keepdims"), "max": ("axis", "keepdims"),
    "min": ("axis", "keepdims"), "prod": ("axis", "keepdims"), "Cast": ("dtype",),
    "softmax": ("axis",), "log_softmax": ("axis",), "Flatten": (),
}


def _make(func_name: str, op: str) -> Any:
    def operator(*args: Any, name: Optional[str] = None, attr: Optional[Mapping[str, str]] = None,
                 **kwargs: Any) -> Symbol:
        return _apply(op, args, kwargs, name=name, hint=func_name.lower(), attr=attr)

    operator.__name__ = operator.__qualname__ = func_name
    operator.__doc__ = (f"MXNet's ``{func_name}`` (graph op ``{op}``): Symbol inputs by position or "
                        f"keyword ({_input_doc(op)}), parameters by keyword; ``name=`` names the node.")
    return operator


def _input_doc(op: str) -> str:
    spec = ops.spec(op)
    if spec is None or spec.variadic:
        return "*args"
    try:
        return ", ".join(spec.inputs(Attrs({})))
    except ValueError:
        return "data"


#: Python function name -> graph op name (MXNet's aliases resolve as MXNet resolves them).
OPERATORS: dict[str, str] = {
    name: name for name in (
        "Convolution", "Deconvolution", "FullyConnected", "BatchNorm", "Pooling", "Activation",
        "LeakyReLU", "relu", "sigmoid", "tanh", "softsign", "clip", "Dropout", "Flatten",
        "Reshape", "transpose", "Concat", "elemwise_add", "elemwise_sub", "elemwise_mul",
        "elemwise_div", "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
        "broadcast_power", "broadcast_maximum", "broadcast_minimum", "sum", "mean", "max", "min",
        "prod", "norm", "Embedding", "SoftmaxOutput", "softmax", "log_softmax", "SoftmaxActivation",
        "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput", "SVMOutput",
        "SliceChannel", "expand_dims", "squeeze", "RNN", "Cast", "BlockGrad", "MakeLoss",
        "make_loss", "L2Normalization", "smooth_l1", "exp", "log", "sqrt", "square", "abs",
        "negative", "add_n", "SwapAxis", "LayerNorm", "InstanceNorm", "LRN", "zeros_like",
        "ones_like", "erf", "WarpCTC", "stack", "SpatialTransformer",
    )
}
OPERATORS.update({
    "flatten": "Flatten", "reshape": "Reshape", "concat": "Concat", "cast": "Cast",
    "split": "SliceChannel", "sum_axis": "sum", "max_axis": "max", "min_axis": "min",
    "ElementWiseSum": "add_n", "swapaxes": "SwapAxis", "broadcast_plus": "broadcast_add",
    "broadcast_minus": "broadcast_sub", "Softmax": "SoftmaxOutput", "stop_gradient": "BlockGrad",
    "identity": "_copy",
})

for _func, _op in OPERATORS.items():
    globals()[_func] = _make(_func, _op)
    __all__.append(_func)


def _creation(func_name: str, op: str) -> Any:
    """MXNet's ``sym.zeros``/``ones``/``full``: a ``_zeros``-style node with ``shape`` and ``dtype``
    (``float32`` by default, as MXNet writes it); a 0 in ``shape`` is filled by inference."""

    def create(shape: Sequence[int], *args: Any, dtype: Any = None, name: Optional[str] = None,
               **kwargs: Any) -> Symbol:
        if func_name == "full":
            kwargs["value"] = float(args[0] if args else kwargs.pop("val"))
        kwargs["dtype"] = "float32" if dtype is None else str(getattr(dtype, "__name__", dtype))
        return _apply(op, (), {"shape": tuple(shape), **kwargs}, name=name, hint=op, attr=None)

    create.__name__ = create.__qualname__ = func_name
    create.__doc__ = f"MXNet's ``sym.{func_name}(shape, ...)`` (graph op ``{op}``)."
    return create


for _func, _op in (("zeros", "_zeros"), ("ones", "_ones"), ("full", "_full")):
    globals()[_func] = _creation(_func, _op)
    __all__.append(_func)
