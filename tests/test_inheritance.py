"""Compose rather than inherit: no class of kvcli derives from two kvcli classes (issue 36:
the store was assembled from mixins, six kvcli classes in one MRO). Read from the source
with ``ast``, so modules that need Ray or a browser are checked too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kvcli"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, str]:
    return {_module_name(path): path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py"))}


def kvcli_bases(sources: dict[str, str]) -> dict[str, list[str]]:
    """Every class defined in ``sources`` (module name -> text) -> the bases among them,
    as ``module.Class``: names defined in the module, imported with ``from kvcli... import``
    (re-exports followed) or reached as ``module.Class`` through ``import kvcli...``."""
    trees = {name: ast.parse(text) for name, text in sources.items()}
    defined = {name: {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)} for name, tree in trees.items()}
    imported: dict[str, dict[str, tuple[str, str]]] = {}
    modules: dict[str, dict[str, str]] = {}
    for name, tree in trees.items():
        names, aliases = imported.setdefault(name, {}), modules.setdefault(name, {})
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kvcli"):
                for alias in node.names:
                    names[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("kvcli"):
                        aliases[alias.asname or alias.name] = alias.name

    def resolve(module: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()) -> str | None:
        if (module, name) in seen or module not in trees:
            return None
        if name in defined[module]:
            return f"{module}.{name}"
        source = imported[module].get(name)
        if source is None:
            return f"{module}.{name}" if f"{module}.{name}" in trees else None
        return resolve(source[0], source[1], seen | {(module, name)})

    def base_of(module: str, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return resolve(module, node.id)
        if isinstance(node, ast.Attribute):
            path = []
            while isinstance(node, ast.Attribute):
                path.append(node.attr)
                node = node.value
            if isinstance(node, ast.Name):
                dotted = ".".join([modules[module].get(node.id, node.id), *reversed(path[1:])])
                return resolve(dotted, path[0])
        return None

    found = {}
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [base_of(name, b) for b in node.bases]
                found[f"{name}.{node.name}"] = [b for b in bases if b is not None]
    return found


def test_no_kvcli_class_derives_from_two_kvcli_classes() -> None:
    bases = kvcli_bases(_sources())
    assert {b for found in bases.values() for b in found} >= {"kvcli.errors.StoreError", "kvcli.mx.kvstore.KVStoreBase"}
    twice = {cls: found for cls, found in bases.items() if len(found) > 1}
    assert twice == {}


def test_the_check_sees_mixins_however_they_are_imported() -> None:
    sources = {
        "kvcli.a": "class Base:\n    pass\nclass Mixin:\n    pass\n",
        "kvcli.b": "from kvcli.a import Base as B\n",  # a re-export
        "kvcli.c": "import kvcli.a as a\nfrom kvcli.b import B\nclass Both(B, a.Mixin):\n    pass\n"
                   "class One(B, object):\n    pass\n",
    }
    assert kvcli_bases(sources) == {
        "kvcli.a.Base": [], "kvcli.a.Mixin": [],
        "kvcli.c.Both": ["kvcli.a.Base", "kvcli.a.Mixin"], "kvcli.c.One": ["kvcli.a.Base"],
    }
