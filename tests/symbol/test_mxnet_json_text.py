"""``tojson()`` and ``save()`` write MXNet 1.9.1's JSON text byte for byte: dmlc's layout
(items separated by ``", "`` and a line break, short lists on one line, attributes sorted),
and no final newline in a saved file. Recorded from MXNet by
``tests/data/make_mxnet_tojson_reference.py`` for the symbol files MXNet 1.x wrote that the
repository holds (built symbols: ``tests/mx/test_symbol_attrs.py``, ``json_text``)."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import pytest

import kvcli.mx as mx

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = json.loads((ROOT / "tests" / "data" / "mxnet_tojson_reference.json").read_text())


def _digest(data: bytes) -> dict[str, object]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def test_reference_is_from_mxnet_191() -> None:
    assert REFERENCE["mxnet"] == "1.9.1" and len(REFERENCE["files"]) >= 15


@pytest.mark.parametrize("name", sorted(REFERENCE["files"]))
def test_tojson_and_save_write_mxnets_bytes(name: str, tmp_path: Path) -> None:
    want = REFERENCE["files"][name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sym = mx.sym.load(str(ROOT / name))
    assert _digest(sym.tojson().encode("utf-8")) == want["tojson"]
    sym.save(str(tmp_path / "saved.json"))
    assert _digest((tmp_path / "saved.json").read_bytes()) == want["save"]
