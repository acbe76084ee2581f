"""kvcli.mx's scope as a contract (kvcli/mx/scope_table.py): every public name of the MXNet
1.9.1 modules kvcli.mx provides (recorded from MXNet by tests/data/make_mxnet_public_names.py)
is declared supported or unsupported; supported names exist with MXNet's kind, unsupported
ones raise the one scope error; docs/mxnet.md is the table's page."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

import kvcli.mx as mx
from kvcli.errors import MXNetError, OutOfScopeError, OutOfScopeImportError
from kvcli.mx import docs
from kvcli.mx.scope_table import TABLE

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "tests" / "data" / "mxnet_public_names.json").read_text())
MXNET = RECORDED["modules"]
MODULES = {m.mxnet: m for m in TABLE}


def test_recorded_from_mxnet_191_and_every_module_is_in_the_table() -> None:
    assert RECORDED["mxnet_version"] == "1.9.1"
    assert set(MXNET) == set(MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_mxnet_name_is_declared_once(module: str) -> None:
    entry = MODULES[module]
    unsupported = [n for g in entry.unsupported for n in g.names]
    declared = [*entry.supported, *unsupported]
    assert len(declared) == len(set(declared)), sorted({n for n in declared if declared.count(n) > 1})
    assert set(declared) - set(MXNET[module]) == set(), "declared names MXNet 1.9.1 does not have"
    assert set(MXNET[module]) - set(declared) == set(), "MXNet names the table does not declare"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_supported_names_exist_with_mxnets_kind(module: str) -> None:
    entry = MODULES[module]
    provided = importlib.import_module(entry.kvcli)
    for name in entry.supported:
        value = getattr(provided, name)  # raises for a name declared supported but missing
        kind = "module" if isinstance(value, types.ModuleType) else "class" if inspect.isclass(value) else \
            "function" if callable(value) else "value"
        want = MXNET[module][name]
        # a value MXNet holds as a class (mx_real_t = numpy.float32) is a class here too
        assert kind == want or {kind, want} <= {"function", "class"}, (name, kind, want)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_unsupported_names_raise_the_scope_error(module: str) -> None:
    entry = MODULES[module]
    provided = importlib.import_module(entry.kvcli)
    for g in entry.unsupported:
        for name in g.names:
            assert name not in vars(provided), f"{name} is provided: move it to supported"
            with pytest.raises(OutOfScopeError) as info:
                getattr(provided, name)
            message = str(info.value)
            assert message == f"{module}.{name} is outside kvcli's scope: {g.advice}"
            assert "\n" not in message and isinstance(info.value, (AttributeError, MXNetError))
            assert not hasattr(provided, name)


@pytest.mark.parametrize("statement, name", [
    ("import kvcli.mx.gluon", "mxnet.gluon"), ("from kvcli.mx import io", "mxnet.io"),
    ("from kvcli.mx.ndarray import crop", "mxnet.ndarray.crop"), ("import kvcli.mx.ndarray.linalg", "mxnet.ndarray.linalg"),
    ("from kvcli.mx.optimizer import NDabs", "mxnet.optimizer.NDabs"), ("from kvcli.mx.base import check_call",
                                                                        "mxnet.base.check_call"),
    ("from kvcli.mx.ndarray.sparse import adam_update", "mxnet.ndarray.sparse.adam_update"),
])
def test_imports_of_unsupported_names_raise_the_scope_error(statement: str, name: str) -> None:
    with pytest.raises(OutOfScopeImportError, match=f"^{name} is outside kvcli's scope: "):
        exec(statement, {})  # noqa: S102 - the import statements under test


def test_a_name_nobody_declared_is_a_plain_attribute_error() -> None:
    with pytest.raises(AttributeError) as info:
        mx.nd.no_such_function  # noqa: B018
    assert not isinstance(info.value, OutOfScopeError)


def test_version_answers_as_mxnet_191_and_kvcli_keeps_its_own() -> None:
    import kvcli
    from kvcli.symbol.graph import MXNET_VERSION

    assert mx.__version__ == mx.base.__version__ == "1.9.1" != kvcli.__version__
    major, minor, patch = (int(x) for x in mx.__version__.split("."))
    assert major * 10000 + minor * 100 + patch == MXNET_VERSION  # the JSON's mxnet_version


def test_docs_page_is_generated_from_the_table() -> None:
    page = (ROOT / "docs" / "mxnet.md").read_text(encoding="utf-8")
    assert page == docs.markdown(), "regenerate: python -m kvcli.mx.docs docs/mxnet.md"
    done = subprocess.run([sys.executable, "-m", "kvcli.mx.docs"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0 and done.stdout == page
