"""Record the JSON text MXNet 1.9.1 writes for the symbol files MXNet 1.x wrote that this
repository holds (``mx.sym.load(f).tojson()`` and the bytes of ``.save()``) into
mxnet_tojson_reference.json, as SHA-256 digests and lengths (the texts are up to 0.3 MB).
``tests/symbol/test_mxnet_json_text.py`` checks that kvcli writes the same bytes.

Run with a Python that has mxnet 1.9.1 (never kvcli's venv), from anywhere::

    $MXNET_PYTHON tests/data/make_mxnet_tojson_reference.py
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import warnings
from pathlib import Path

import mxnet as mx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = HERE / "mxnet_tojson_reference.json"
#: Files written by MXNet 1.x (older files go through MXNet's legacy upgrades on load).
FILES = sorted([*ROOT.glob("sample_graphs/*.json"), *HERE.glob("mxnet_models/*-symbol.json"),
                *HERE.glob("*-symbol.json"), *HERE.glob("sample_models/mxnet_v1.*.json")])


def _digest(data: bytes) -> dict[str, object]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def main() -> None:
    warnings.simplefilter("ignore")
    records = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in FILES:
            sym = mx.sym.load(str(path))
            saved = Path(tmp) / "saved.json"
            sym.save(str(saved))
            records[path.relative_to(ROOT).as_posix()] = {"tojson": _digest(sym.tojson().encode("utf-8")),
                                                           "save": _digest(saved.read_bytes())}
    OUT.write_text(json.dumps({"mxnet": mx.__version__, "files": records}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(records)} files)")


if __name__ == "__main__":
    main()
