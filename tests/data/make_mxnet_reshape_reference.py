"""Record what MXNet 1.9.1's ``reshape`` makes of its special values 0, -1, -2, -3, -4 and
``reverse``, for both the NDArray method and the symbol's shape inference, so kvcli's one
implementation (``kvcli/arrays/reshape.py``) is checked against both.

Run with a Python that has mxnet 1.9.1 (from the repository root):

    $MXNET_PYTHON tests/data/make_mxnet_reshape_reference.py

Writes tests/data/mxnet_reshape_reference.json: per case the input shape, the spec, reverse,
and MXNet's result shape for ``nd`` and for ``sym.infer_shape`` (or "error"; ``None`` where
``infer_shape`` leaves the shape unknown). Nothing here is imported by kvcli.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx

HERE = Path(__file__).resolve().parent

CASES = [
    ((2, 3, 4, 5), (0, -1), False), ((2, 3, 4), (-2,), False), ((2, 3, 4), (2, -2), False),
    ((2, 3, 4), (-3, 4), False), ((2, 3, 4, 5), (-3, -2), False), ((2, 3, 4), (-4, 1, 2, -2), False),
    ((2, 6, 4), (2, -4, -1, 3, -2), False), ((4, 6), (0, -4, -1, 3), False), ((4, 6), (0, -4, 2, -1), False),
    ((10, 5, 4), (-1, 0), True), ((2, 3, 4), (-3, 0), True), ((2, 3, 4), (2, -2, -1), False),
    ((2, 3, 4, 5), (0, 0, -1), False), ((6, 4), (3, 2, -4, 0), True), ((6, 4), (-4, 2, 3, 0), True),
    ((6, 4), (0, -4, 2, 2), True), ((4, 6), (0, -4, 2, -1), True), ((6, 4), (-4, -1, -1, 0), False),
    ((6, 4), (-1, -1), False), ((6, 4), (0, 0, 0), False), ((6, 4), (-4, 2, 2, 0), False),
    ((6, 4), (-5, 4), False), ((6, 4), (-4, 2), False), ((2, 3, 4), (-3, -3), False),
    ((0, 3), (0, -1), False), ((0, 4), (-1, 0), False),
]


def _nd(shape: tuple, spec: tuple, reverse: bool) -> object:
    try:
        return list(mx.nd.zeros(shape).reshape(spec, reverse=reverse).shape)
    except Exception:  # MXNet raises MXNetError or ValueError
        return "error"


def _sym(shape: tuple, spec: tuple, reverse: bool) -> object:
    try:
        found = mx.sym.reshape(mx.sym.var("d"), shape=spec, reverse=reverse).infer_shape(d=shape)[1]
    except Exception:
        return "error"
    return None if found is None else list(found[0])


def main() -> None:
    cases = [{"shape": list(shape), "spec": list(spec), "reverse": reverse,
              "nd": _nd(shape, spec, reverse), "sym": _sym(shape, spec, reverse)}
             for shape, spec, reverse in CASES]
    out = HERE / "mxnet_reshape_reference.json"
    out.write_text(json.dumps({"mxnet": mx.__version__, "cases": cases}, indent=1) + "\n")
    print(f"wrote {out} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
