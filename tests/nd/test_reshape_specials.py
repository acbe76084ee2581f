"""MXNet's reshape special values have one implementation (kvcli/arrays/reshape.py) that
``nd.reshape`` and the symbol's Reshape shape rule share, checked against MXNet 1.9.1
(tests/data/mxnet_reshape_reference.json, recorded by make_mxnet_reshape_reference.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.errors import NDArrayError, AttrError
from kvcli.symbol.shape_rules import reshape_target

RECORDED = json.loads((Path(__file__).resolve().parents[1] / "data" / "mxnet_reshape_reference.json").read_text())

#: docs/mxnet-layer.md, Differences: -1 after -2 is inferred where it stands (MXNet's nd refuses the spec,
#: its symbol inference gives (2, 3, 1, 1)).
#: A zero-size input: MXNet 1.x reads a 0 dimension as unknown and refuses to infer the -1;
#: kvcli infers it from the other dimensions, as both of its former implementations did.
DIFFERENCES = {((2, 3, 4), (2, -2, -1), False): [2, 3, 4, 1], ((0, 4), (-1, 0), False): [0, 4]}


def _array(shape: tuple[int, ...]) -> "mx.nd.NDArray":
    """Zeros of ``shape``; a zero-size one through nd.array (MXNet's nd.zeros refuses it)."""
    return mx.nd.array(np.zeros(shape)) if 0 in shape else mx.nd.zeros(shape)


def _id(case: dict) -> str:
    return f"{tuple(case['shape'])}-{tuple(case['spec'])}{'-reverse' if case['reverse'] else ''}"


@pytest.mark.parametrize("case", RECORDED["cases"], ids=_id)
def test_nd_and_symbol_reshape_agree_with_mxnet(case: dict) -> None:
    shape, spec, reverse = tuple(case["shape"]), tuple(case["spec"]), case["reverse"]
    # MXNet's nd is the reference; where its symbol inference differs it leaves the shape
    # unknown (zero-size inputs), which kvcli's refusal matches
    expected = DIFFERENCES.get((shape, spec, reverse), case["nd"])
    if expected == "error":
        with pytest.raises(NDArrayError, match="^reshape: "):
            _array(shape).reshape(spec, reverse=reverse)
        with pytest.raises(AttrError, match="^shape "):
            reshape_target(shape, spec, reverse)
        return
    assert list(_array(shape).reshape(spec, reverse=reverse).shape) == expected
    assert list(reshape_target(shape, spec, reverse)) == expected
    if case["sym"] not in (None, "error") and (shape, spec, reverse) not in DIFFERENCES:
        assert case["sym"] == expected


def test_one_implementation() -> None:
    """Both callers use the leaf's function and only translate its ValueError."""
    from kvcli.arrays import reshape
    from kvcli.mx.ndarray import ops
    from kvcli.symbol import shape_rules

    assert ops.reshape_target is reshape.reshape_target
    assert shape_rules.shared_reshape_target is reshape.reshape_target
