"""The package's import graph has no cycles (imports inside functions count too).

The graph is built from the source with ``ast``: every ``import a.b`` and ``from a import b``
(``b`` counted as a module when ``a/b.py`` or ``a/b/`` exists), at module level or inside a
function, is an edge between two ``kvcli`` modules. Imports under ``if TYPE_CHECKING:`` never
run and are not counted.  Importing ``a.b`` also runs ``a``'s
``__init__``, but that is not counted as an edge: a package's ``__init__`` that re-exports its
children is not a cycle with them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "kvcli"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _resolve(node: ast.ImportFrom, here: str, modules: dict[str, Path]) -> str:
    if not node.level:
        return node.module or ""
    base = here.split(".")
    if not _is_package(here, modules):
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:`` (type-only imports)."""
    found: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _runtime_nodes(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, name, modules)
                # `from a import b`: an edge to the module a.b when it is one, else to a
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module of kvcli -> the modules of kvcli it imports, anywhere in its source."""
    return _edges(_modules())


def test_graph_sees_function_level_imports() -> None:
    graph = _edges(_modules())
    # kvcli/__init__.py imports its store lazily, inside a function
    assert graph["kvcli"], "the kvcli package imports nothing? the parser is broken"
    assert sum(len(v) for v in graph.values()) > 100


def test_no_import_cycles() -> None:
    """No cycle at all: every dependency points one way, down the layers (and inside a
    package, from the modules that assemble it down to its leaves)."""
    knots = _cycles(_edges(_modules()))
    assert not knots, f"import cycles: {[sorted(k) for k in knots]}"


LEAF_MAY_USE = ("kvcli.errors", "kvcli.config", "kvcli.osutil")


@pytest.mark.parametrize("prefix", ["kvcli.arrays"])
def test_leaf_packages_import_nothing_above(prefix: str) -> None:
    modules = _modules()
    if prefix not in modules:
        pytest.skip(f"{prefix} does not exist yet")
    graph = _edges(modules)
    bad = {
        m: sorted(t for t in targets if not t.startswith(prefix) and t not in LEAF_MAY_USE)
        for m, targets in graph.items()
        if m == prefix or m.startswith(prefix + ".")
    }
    bad = {m: t for m, t in bad.items() if t}
    assert not bad, f"{prefix} must be a leaf: {bad}"


#: Layer -> the layers above it, which it must never import (not even inside a function):
#: cli -> session -> store -> optim -> arrays.
FORBIDDEN_UPWARDS = {
    "kvcli.arrays": ("kvcli.optim", "kvcli.store", "kvcli.session", "kvcli.cli", "kvcli.mx", "kvcli.symbol"),
    "kvcli.optim": ("kvcli.store", "kvcli.session", "kvcli.cli", "kvcli.mx"),
    "kvcli.store": ("kvcli.session", "kvcli.cli", "kvcli.mx", "kvcli.symbol"),
    "kvcli.session": ("kvcli.cli", "kvcli.mx", "kvcli.symbol"),
    # beside the engine: the symbol pipeline reads .params files through arrays, never mx
    "kvcli.symbol": ("kvcli.optim", "kvcli.store", "kvcli.session", "kvcli.cli", "kvcli.mx"),
}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize("layer", sorted(FORBIDDEN_UPWARDS))
def test_no_layer_imports_a_layer_above(layer: str) -> None:
    graph = _edges(_modules())
    bad = sorted(
        f"{m} -> {t}"
        for m, targets in graph.items() if _in(m, layer)
        for t in targets if any(_in(t, above) for above in FORBIDDEN_UPWARDS[layer])
    )
    assert not bad, f"{layer} imports a layer above it: {bad}"


#: ``from module import _name`` across packages still to be removed (other work's areas).
KNOWN_PRIVATE_IMPORTS: set[tuple[str, str, str]] = set()


def _private_imports(modules: dict[str, Path]) -> set[tuple[str, str, str]]:
    """Every ``from module import _name`` of a kvcli module: (importer, module, name)."""
    found = set()
    for name, path in modules.items():
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = _resolve(node, name, modules)
            if base not in modules or base == name:
                continue
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and f"{base}.{alias.name}" not in modules:
                    found.add((name, base, alias.name))
    return found


def test_no_private_names_imported_across_packages() -> None:
    """A ``_name`` is its package's own: another package imports only public names."""
    modules = _modules()

    def package(name: str) -> str:
        return name if _is_package(name, modules) else name.rpartition(".")[0]

    found = {(m, b, n) for m, b, n in _private_imports(modules) if package(b) != package(m)}
    assert not found - KNOWN_PRIVATE_IMPORTS, f"private names imported across packages: {sorted(found - KNOWN_PRIVATE_IMPORTS)}"


#: Packages whose modules import no ``_name`` of another module even inside the package (a
#: name two modules share is public). The session, cli and symbol packages are not listed yet.
NO_PRIVATE_IMPORTS_WITHIN = ["kvcli.arrays", "kvcli.mx", "kvcli.optim", "kvcli.store"]


@pytest.mark.parametrize("package", NO_PRIVATE_IMPORTS_WITHIN)
def test_no_private_names_imported_within_the_package(package: str) -> None:
    found = sorted((m, b, n) for m, b, n in _private_imports(_modules()) if _in(m, package))
    assert not found, f"{package}: private names imported from another module: {found}"


#: The spec-string parser of the optimizer layer (and the public modules over it).
SPEC_PARSERS = ("kvcli.optim.spec", "kvcli.optim.registry", "kvcli.updaters")


def test_the_store_receives_parsed_updaters() -> None:
    """No module of the engine imports the spec parser: ``kvcli.create`` (above it) hands a
    store the parser for ``set_updater("sum")``; the device workers and dist servers get the
    updater object itself (pickled), never a spec to parse."""
    graph = _edges(_modules())
    bad = sorted(f"{m} -> {t}" for m, targets in graph.items() if _in(m, "kvcli.store")
                 for t in targets if t in SPEC_PARSERS)
    assert not bad, f"the store parses updater specs: {bad}"


def _library_strings(package: Path) -> list[tuple[str, str]]:
    """Every string constant of ``package``'s modules that is not a docstring: (file, text)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                found.append((path.name, node.value))
    return found


@pytest.mark.parametrize("package", ["symbol", "session", "optim", "arrays", "mx"])
def test_library_messages_name_no_command_line_flag(package: str) -> None:
    """The library speaks Python (parameters, store options, variables); the CLI words its
    errors with its flags from the error's fields (kvcli.cli.output). kvcli.store is left
    out: its messages name other programs' flags (docker's --shm-size, ray start --head)."""
    import re

    flag = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
    named = [(name, text) for name, text in _library_strings(ROOT / package) if flag.search(text)]
    assert named == []


def test_every_exception_class_is_declared_in_errors() -> None:
    """One place lists what kvcli can raise: no module but kvcli/errors.py declares a class
    derived from an exception (modules import theirs from kvcli.errors); a private class is a
    module's own control-flow signal (the fast path's "let typer parse it")."""
    import kvcli.errors

    exceptions = {name for name, value in vars(kvcli.errors).items()
                  if isinstance(value, type) and issubclass(value, BaseException)}
    declared = []
    for name, path in _modules().items():
        if name == "kvcli.errors":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):  # a module's own signal
                bases = {base.id if isinstance(base, ast.Name) else getattr(base, "attr", "") for base in node.bases}
                if bases & (exceptions | {"Exception", "BaseException", "ValueError", "RuntimeError", "TypeError",
                                          "KeyError", "OSError", "MemoryError"}):
                    declared.append(f"{name}.{node.name}")
    assert declared == []
