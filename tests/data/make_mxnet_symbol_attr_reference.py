"""Write ``mxnet_symbol_attr_reference.json``: what MXNet 1.9.1 makes of the symbols of
``tests/mx/symbol_attr_programs.py`` (their JSON, attributes, and the learning-rate and
weight-decay multipliers ``Optimizer(sym=...)`` takes from them), the errors it raises for
the refused calls, and whether it loads the JSON kvcli writes for each symbol (kvcli is
imported from this repository to write it; kvcli itself never imports MXNet).

Run with MXNet's own interpreter, from anywhere::

    $MXNET_PYTHON tests/data/make_mxnet_symbol_attr_reference.py
"""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from pathlib import Path

import mxnet as mx

HERE = Path(__file__).resolve().parent
OUT = HERE / "mxnet_symbol_attr_reference.json"
PROGRAMS = HERE.parent / "mx" / "symbol_attr_programs.py"


def _load_programs():
    spec = importlib.util.spec_from_file_location("symbol_attr_programs", PROGRAMS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    warnings.simplefilter("ignore")
    programs = _load_programs()
    sys.path.insert(0, str(HERE.parent.parent))  # this repository's kvcli, to write its JSON
    import kvcli.mx as kmx

    results = {}
    for name, program in programs.PROGRAMS.items():
        record = programs.describe(mx, program(mx))
        kvcli_json = program(kmx).tojson()
        try:
            loaded = mx.sym.load_json(kvcli_json)
            record["kvcli_json_in_mxnet"] = {"kvcli_json": kvcli_json, "loaded": True,
                                             "attr_dict": loaded.attr_dict(),
                                             "list_arguments": loaded.list_arguments()}
        except mx.base.MXNetError as error:
            record["kvcli_json_in_mxnet"] = {"kvcli_json": kvcli_json, "loaded": False,
                                             "error": str(error).splitlines()[0]}
        results[name] = record
    refused = {}
    for name, call in programs.REFUSED.items():
        try:
            call(mx)
            refused[name] = None
        except (mx.base.MXNetError, ValueError) as error:
            refused[name] = {"type": type(error).__name__, "message": str(error).splitlines()[0]}
    doc = {"mxnet_version": mx.__version__, "programs": results, "refused": refused}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}: {sum(r['kvcli_json_in_mxnet']['loaded'] for r in results.values())} of "
          f"{len(results)} kvcli JSON files loaded in MXNet")


if __name__ == "__main__":
    main()
