"""Issue 32 item 6: an error about a malformed node shows its name cut and printable (a
1 MB name in a symbol file printed a 1 MB error line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvcli.errors import SymbolError
from kvcli.symbol.graph import from_dict

LONG = "n" * 1_000_000


def graph(nodes: list[dict[str, Any]], heads: list[list[int]] | None = None) -> dict[str, Any]:
    return {"nodes": nodes, "arg_nodes": [0], "heads": heads or [[len(nodes) - 1, 0, 0]]}


DATA = {"op": "null", "name": "data", "inputs": []}
MALFORMED = {
    "input out of range": graph([DATA, {"op": "FullyConnected", "name": LONG, "inputs": [[5, 0, 0]]}]),
    "inputs not a list": graph([{"op": "null", "name": LONG, "inputs": "bad"}]),
    "variable with inputs": graph([DATA, {"op": "null", "name": LONG, "inputs": [[0, 0, 0]]}]),
    "attributes not an object": graph([DATA, {"op": "Flatten", "name": LONG, "attrs": [1], "inputs": [[0, 0, 0]]}]),
    "a cycle": graph([DATA, {"op": "Flatten", "name": LONG, "inputs": [[2, 0, 0]]},
                      {"op": "Flatten", "name": "b", "inputs": [[1, 0, 0]]}]),
    "output out of range": graph([{"op": "null", "name": LONG, "inputs": []},
                                  {"op": "Flatten", "name": "f", "inputs": [[0, 3, 0]]}]),
    "a head nowhere": graph([{"op": "null", "name": LONG, "inputs": []}], heads=[[0, 2, 0]]),
    "unknown op outputs": graph([DATA, {"op": LONG, "name": "x", "inputs": [[0, 0, 0]]},
                                 {"op": "Flatten", "name": "f", "inputs": [[1, 1 << 40, 0]]}]),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_an_error_about_a_node_with_a_huge_name_is_one_short_line(case: str) -> None:
    with pytest.raises(SymbolError) as raised:
        from_dict(MALFORMED[case], "m.json")
    message = str(raised.value)
    assert len(message) < 600 and "\n" not in message, message[:300]
    assert "(1,000,000 chars)" in message  # cut, and says so


def test_control_characters_of_a_name_are_escaped_in_errors() -> None:
    with pytest.raises(SymbolError) as raised:
        from_dict(graph([{"op": "null", "name": "data\x1b[2J", "inputs": [[7, 0, 0]]}]), "m.json")
    assert "\x1b" not in str(raised.value) and "data\\x1b[2J" in str(raised.value)


def test_the_cli_prints_a_short_line(tmp_path: Path) -> None:
    from tests.runner import run_kvcli

    model = tmp_path / "m.json"
    model.write_text(json.dumps(MALFORMED["input out of range"]))
    done = run_kvcli("summary", str(model), cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and len(done.stderr) < 600
