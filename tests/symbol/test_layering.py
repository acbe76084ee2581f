"""kvcli/symbol has one-way dependencies: no import cycle between its modules, counting the
imports made inside functions (a cycle hidden in a function is still a cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

import kvcli.symbol

ROOT = Path(kvcli.symbol.__file__).parent


def _modules() -> dict[str, Path]:
    found = {p.stem: p for p in ROOT.glob("*.py") if p.stem != "__init__"}
    found.update({p.name: p / "__init__.py" for p in ROOT.iterdir() if (p / "__init__.py").is_file()})
    return found


def imports_of(path: Path, known: set[str], me: str) -> set[str]:
    """The kvcli.symbol modules ``path`` imports, anywhere in the file."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "kvcli.symbol":
                names = [alias.name for alias in node.names]
            elif node.module.startswith("kvcli.symbol."):
                names = [node.module.split(".")[2]]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".")[2] for a in node.names if a.name.startswith("kvcli.symbol.")]
        out.update(n for n in names if n in known and n != me)
    return out


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_inside_kvcli_symbol() -> None:
    modules = _modules()
    edges = {name: imports_of(path, set(modules), name) for name, path in modules.items()}
    assert "shape_rules" in edges["ops"] and "ops" not in edges["shape_rules"]
    # drawing sits below the summary: plan takes its names from names.py, not from summary.py
    assert "names" in edges["plan"] and "summary" not in edges["plan"]
    assert "pipeline" not in set().union(*(e for name, e in edges.items() if name != "pipeline"))
    assert cycles(edges) == []
