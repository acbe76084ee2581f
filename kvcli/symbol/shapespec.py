"""Parse ``--shape`` values (``data=1,3,224,224``) and match them to a graph's variables.

Accepted forms: ``NAME=1,3,224,224``, ``NAME=(1, 3, 224, 224)``, ``NAME=1x3x224x224``, and
several in one value separated by ``;`` or spaces. ``NAME`` may be a glob (``'l*_init_*'``)
to give many inputs one shape, handy for unrolled RNN states.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Iterable

from kvcli.errors import bad_param, ShapeSpecError
from kvcli.symbol.graph import Graph
from kvcli.symbol.shapes import Shape

EXAMPLE = "write NAME=D1,D2,..., e.g. data=1,3,224,224"
_SPLIT = re.compile(r"[;\s]+")
_DIM_SEP = re.compile(r"[,x×]")


def parse_shape_specs(values: Iterable[str], source: str = "") -> list[tuple[str, Shape]]:
    """``["data=1,3,224,224"]`` → ``[("data", (1, 3, 224, 224))]`` (order kept)."""
    prefix = f"{source}: " if source else ""
    out: list[tuple[str, Shape]] = []
    for value in values:
        for item in _items(value):
            name, sep, dims = item.rpartition("=")
            if not sep or not name:
                raise bad_param(ShapeSpecError, "shape", f"{item!r} has no NAME=; {EXAMPLE}", prefix)
            body = dims.strip().strip("()[]").strip()
            parts = [p.strip() for p in _DIM_SEP.split(body)] if body else []
            if parts and parts[-1] == "":  # "(3,)"
                parts = parts[:-1]
            if not parts:
                raise bad_param(ShapeSpecError, "shape", f"{item!r} gives no dimensions; {EXAMPLE}", prefix)
            shape = []
            for part in parts:
                if not part.isdigit() or int(part) <= 0:
                    raise bad_param(ShapeSpecError, "shape", f"{item!r}: {part!r} is not a positive whole "
                                    f"number; {EXAMPLE}", prefix)
                shape.append(int(part))
            out.append((name.strip(), tuple(shape)))
    return out


def _items(value: str) -> list[str]:
    # Split on ';' and whitespace, but not inside parentheses: "data=(1, 3)" is one item.
    items, depth, current = [], 0, ""
    for ch in value:
        depth += ch in "(["
        depth -= ch in ")]"
        if depth == 0 and (ch == ";" or ch.isspace()):
            if current.strip():
                items.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        items.append(current.strip())
    return items


def resolve_shapes(graph: Graph, specs: list[tuple[str, Shape]]) -> dict[str, Shape]:
    """Map parsed specs onto the graph's variable names (globs expand; unknown names fail)."""
    variables = [n.name for n in graph.nodes if n.is_variable]
    known = set(variables)
    given: dict[str, Shape] = {}
    for name, shape in specs:
        if any(ch in name for ch in "*?["):
            matches = [v for v in variables if fnmatch.fnmatchcase(v, name)]
            if not matches:
                raise bad_param(ShapeSpecError, "shape", f"pattern {name!r} matches no variable; "
                                f"inputs are {inputs_text(graph)}", f"{graph.source}: ")
            for match in matches:
                given[match] = shape
        elif name in known:
            given[name] = shape
        else:
            raise bad_param(ShapeSpecError, "shape", f"names {name!r}, which is not a variable of "
                            f"the graph; inputs are {inputs_text(graph)}", f"{graph.source}: ")
    return given


def inputs_text(graph: Graph, limit: int = 8) -> str:
    """The graph's data and label inputs for a message: ``data, softmax_label``, the first
    ``limit`` of them and the count when there are more, ``(none)`` when it has none."""
    from kvcli.symbol.summary import INPUT, LABEL, variable_roles

    roles = variable_roles(graph)
    names = [graph.nodes[i].name for i, r in roles.items() if r in (INPUT, LABEL)]
    if not names:
        return "(none)"
    shown = ", ".join(names[:limit])
    return shown + (f" ... ({len(names)} in all)" if len(names) > limit else "")
