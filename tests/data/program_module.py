"""Load a module of ``tests/`` by its path, for the generators run with MXNet's Python (which
runs a generator as a script, so ``tests`` is not a package it can import from)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parent.parent


def load(relative: str) -> ModuleType:
    """The module at ``tests/<relative>`` (e.g. ``"mx/kv_key_list_programs.py"``)."""
    path = TESTS / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
