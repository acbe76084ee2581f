"""Issue 15 regressions outside the session folder: updaters that break the store's contract,
hostile symbol JSON, and over-long shell lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import kvcli
from kvcli.errors import SymbolError, UpdaterError


# ---------------------------------------------------------------------- an updater reshaping stored
def reshape(key, merged, stored):
    stored.shape = (1, 3)


def retype(key, merged, stored):
    stored.dtype = np.int32


@pytest.mark.parametrize("kind", ["local", "device"])
@pytest.mark.parametrize("updater, found", [(reshape, "float32 (1, 3)"), (retype, "int32 (3,)")])
def test_store_refuses_an_updater_that_reshapes_or_retypes_stored(kind: str, updater, found: str) -> None:
    store = kvcli.create(kind, **({"num_devices": 2} if kind == "device" else {}))
    try:
        store.init(3, np.arange(3, dtype=np.float32))
        store.set_updater(updater)
        with pytest.raises(UpdaterError, match=re.escape(f"to {found}, not in place as float32 (3,)")):
            store.push(3, np.ones(3, np.float32))
        assert store.info(3).shape == (3,)
        out = np.empty(3, np.float32)
        store.pull(3, out=out)
        assert out.tolist() == [0, 1, 2]
        store.set_updater(None)
        store.push(3, np.ones(3, np.float32))  # the store works on
        store.pull(3, out=out)
        assert out.tolist() == [1, 1, 1]
    finally:
        store.close()


def test_store_refuses_an_updater_that_replaces_stored() -> None:
    store = kvcli.create("local")
    original = np.arange(3, dtype=np.float32)
    store.init("w", original)

    def replace(key, merged, stored):
        store.backend._values[key] = np.zeros(5, np.float64)  # reaching into the store

    store.set_updater(replace)
    with pytest.raises(UpdaterError, match="and replaced it"):
        store.push("w", np.ones(3, np.float32))
    assert store.view("w").tolist() == [0, 1, 2] and store.view("w").dtype == np.float32


def test_session_with_a_reshaping_python_updater_stays_loadable(tmp_path: Path) -> None:
    """Was: the push committed a session that could no longer be loaded."""
    from kvcli.session import Session

    source = tmp_path / "bad.py"
    source.write_text("def f(key, merged, stored):\n    stored.shape = (1, 3)\n")
    with Session("s", tmp_path / "home") as session:
        session.init(["k"], [np.arange(3, dtype=np.float32)])
        session.set_updater(f"python:{source}:f")
        with pytest.raises(UpdaterError, match="never its shape or dtype"):
            session.push(["k"], [np.ones(3, np.float32)])
    with Session("s", tmp_path / "home") as session:
        assert session.pull(["k"])[0][0].tolist() == [0, 1, 2]
        assert session.describe()["keys"][0]["shape"] == [3]


# ---------------------------------------------------------------------- symbol JSON
def graph_text(name: str = "x", head: str = "0") -> bytes:
    return ('{"nodes": [{"op": "null", "name": "%s", "inputs": []}], "heads": [[%s, 0, 0]]}' % (name, head)).encode()


@pytest.mark.parametrize("text, words", [
    (graph_text(head="9" * 5000), "not usable JSON"),
    (graph_text(name="\\ud800"), "lone surrogate"),
    (graph_text(name="a\\udfffb"), "lone surrogate"),
])
def test_hostile_symbol_json_is_a_one_line_error(tmp_path: Path, text: bytes, words: str) -> None:
    from kvcli.symbol.graph import load_file, load_json

    with pytest.raises(SymbolError, match=words) as caught:
        load_json(text)
    assert "\n" not in str(caught.value)
    path = tmp_path / "m-symbol.json"
    path.write_bytes(text)
    with pytest.raises(SymbolError, match=words):
        load_file(path)


def test_valid_surrogate_pairs_in_symbol_json_still_load() -> None:
    from kvcli.symbol.graph import load_json

    graph = load_json(graph_text(name="w\\ud83d\\ude00"))
    assert json.dumps([n.name for n in graph.nodes], ensure_ascii=False) == '["w\U0001f600"]'


# ---------------------------------------------------------------------- shell lines
def test_shell_refuses_a_megabyte_line_before_splitting_it(tmp_path: Path, capsys, monkeypatch) -> None:
    """shlex takes minutes on megabytes: the line's length is checked before it is split."""
    from kvcli.cli import shell as shell_module
    from kvcli.cli.shell import Shell
    from kvcli.session import Session

    split: list[str] = []
    real_split = shell_module.shlex.split
    monkeypatch.setattr(shell_module.shlex, "split", lambda text, *a, **k: split.append(text) or real_split(text, *a, **k))
    with Session("s", tmp_path / "home") as session:
        shell = Shell(session)
        line = "push 3 '" + "1+" * 1_000_000 + "1"  # 2 MB, and an unclosed quote
        assert shell.execute(line) is True
    assert split == []
    err = capsys.readouterr().err
    assert "2,000,009 characters long" in err and "@file.npy" in err
