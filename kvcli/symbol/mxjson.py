"""Symbol JSON text laid out as MXNet 1.9.1 writes it (``tojson()``, ``save()``), so a graph
kvcli writes is the same text, byte for byte, as MXNet's for the same graph.

MXNet writes with dmlc-core's JSON writer: an object or array on several lines is indented two
spaces per level and its items are separated by ``", "`` followed by the line break; a node,
the node list and the top-level object are on several lines; an array of numbers or of input
entries only when it holds more than 10; a map of attributes only when it holds more than one
(its keys sorted); an input entry ``[node, index, version]`` never. Strings escape only ``"``,
``\\``, tab, CR and LF; other characters (UTF-8 names included) are written as they are.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

Render = Callable[[int], str]
#: An array is written on several lines when it holds more than this many numbers or entries.
INLINE_ITEMS_MAX = 10
_ESCAPES = {"\r": "\\r", "\n": "\\n", "\\": "\\\\", "\t": "\\t", '"': '\\"'}


def _string(text: str) -> Render:
    escaped = "".join(_ESCAPES.get(ch, ch) for ch in text)
    return lambda _depth: f'"{escaped}"'


def _number(value: int) -> Render:
    return lambda _depth: str(int(value))


def _container(opening: str, closing: str, items: Sequence[tuple[str, Render]], multi_line: bool) -> Render:
    """An object (items with keys) or array (keys "") opened inside ``depth`` open scopes."""

    def render(depth: int) -> str:
        inner = "\n" + "  " * (depth + 1) if multi_line else ""
        parts = [f'{inner}"{key}": {item(depth + 1)}' if opening == "{" else inner + item(depth + 1)
                 for key, item in items]
        end = "\n" + "  " * depth if multi_line and items else ""
        return opening + ", ".join(parts) + end + closing

    return render


def _array(items: Sequence[Render], multi_line: bool) -> Render:
    return _container("[", "]", [("", item) for item in items], multi_line)


def _object(items: Sequence[tuple[str, Render]], multi_line: bool = True) -> Render:
    return _container("{", "}", items, multi_line)


def _entries(entries: Sequence[Sequence[int]]) -> Render:
    return _array([_array([_number(v) for v in entry], False) for entry in entries], len(entries) > INLINE_ITEMS_MAX)


def _numbers(values: Sequence[int]) -> Render:
    return _array([_number(v) for v in values], len(values) > INLINE_ITEMS_MAX)


def _string_map(values: dict[str, str]) -> Render:
    return _object([(key, _string(values[key])) for key in sorted(values)], len(values) > 1)


def dumps(doc: dict[str, Any]) -> str:
    """``doc`` (:meth:`kvcli.symbol.graph.Graph.to_dict`'s layout) as MXNet's JSON text."""
    nodes = []
    for node in doc["nodes"]:
        items: list[tuple[str, Render]] = [("op", _string(node["op"])), ("name", _string(node["name"]))]
        if node.get("attrs"):
            items.append(("attrs", _string_map(node["attrs"])))
        items.append(("inputs", _entries(node["inputs"])))
        nodes.append(_object(items))
    graph_attrs = doc["attrs"]  # {"mxnet_version": ["int", 10901]}: a typed value, one line
    attrs = _object([(key, _array([_string(kind), _number(value)], False))
                     for key, (kind, value) in sorted(graph_attrs.items())], len(graph_attrs) > 1)
    return _object([("nodes", _array(nodes, True)), ("arg_nodes", _numbers(doc["arg_nodes"])),
                    ("node_row_ptr", _numbers(doc["node_row_ptr"])), ("heads", _entries(doc["heads"])),
                    ("attrs", attrs)])(0)
