"""The command-line layer's structure: no import cycles among the modules of ``kvcli.cli``
(imports inside functions count), and the typer app's start-up does not build the optimizer
list of ``set-updater``'s help."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import kvcli.cli

from .conftest import Runner, kvcli_env

CLI = Path(kvcli.cli.__file__).parent


def import_graph(folder: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports, anywhere in its source."""
    modules = {f"{package}.{path.stem}": path for path in folder.glob("*.py") if path.stem != "__init__"}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (empty: none), by depth-first search."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_the_cli_package() -> None:
    graph = import_graph(CLI, "kvcli.cli")
    assert {"kvcli.cli.app", "kvcli.cli.build", "kvcli.cli.core", "kvcli.cli.fast"} <= set(graph)
    assert cycle(graph) == []


def test_the_dispatch_core_is_a_leaf() -> None:
    graph = import_graph(CLI, "kvcli.cli")
    assert graph["kvcli.cli.core"] <= {"kvcli.cli.output", "kvcli.cli.table"}
    assert graph["kvcli.cli.output"] == set() and graph["kvcli.cli.table"] == set()


def test_building_the_app_does_not_import_the_optimizers(tmp_path: Path) -> None:
    probe = ("import sys; from kvcli.cli.build import root_command; root_command(); "
             "print('kvcli.optim.spec' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], env=kvcli_env(tmp_path), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_set_updater_help_still_lists_the_optimizers(kv: Runner) -> None:
    for args in (("set-updater", "--help"), ("help", "set-updater")):
        shown = kv(*args)
        assert shown.code == 0, shown.err
        text = " ".join(shown.out.split())
        assert "nag lr=0.01 momentum=0" in text and "adam lr=0.001 beta1=0.9" in text, args
