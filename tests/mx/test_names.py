"""Names of MXNet's API that real code imports, against MXNet 1.9.1's recorded answers
(tests/data/make_mxnet_names_reference.py): ``nd.topk`` (bit-equal values on random inputs),
``nd.empty(stype=)``, ``mx.np_shape`` / ``is_np_shape`` (off, as MXNet 1.x), ``Context.default_ctx``,
``mx.base``'s ``mx_real_t``, type tuples and ``NotImplementedForSymbol``, ``mx.__version__``;
and MXNet's internal ``test`` optimizer, created by name but not offered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.errors import MXNetError, OutOfScopeError

REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "mxnet_names_reference.json").read_text())


def _decode(record: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(record["hex"]), dtype=record["dtype"]).reshape(record["shape"])


def test_reference_is_from_mxnet_191() -> None:
    assert REFERENCE["mxnet_version"] == "1.9.1" and len(REFERENCE["topk"]) > 200


@pytest.mark.parametrize("index", range(len(REFERENCE["topk"])))
def test_topk_is_bit_equal_to_mxnet(index: int) -> None:
    case = REFERENCE["topk"][index]
    data = _decode(case["data"])
    out = mx.nd.topk(mx.nd.array(data, dtype=data.dtype), **case["kwargs"])
    outs = out if isinstance(out, list) else [out]
    assert len(outs) == len(case["outputs"])
    for got, want in zip(outs, case["outputs"]):
        expected = _decode(want)
        got_np = got.asnumpy()
        assert got_np.dtype == expected.dtype and got_np.shape == expected.shape
        assert got_np.tobytes() == expected.tobytes(), (case["kwargs"], got_np, expected)


def test_topk_refuses_what_mxnet_refuses() -> None:
    x = mx.nd.array([[3, 1, 2]])
    with pytest.raises(MXNetError, match="k must be smaller than 3, get k = 4"):
        mx.nd.topk(x, k=4)
    with pytest.raises(MXNetError, match="ret_typ must be one of"):
        mx.nd.topk(x, ret_typ="values")
    assert x.topk(k=1).asnumpy().tolist() == [[0.0]]  # the NDArray method too


@pytest.mark.parametrize("stype", ["default", "row_sparse", "csr"])
def test_empty_with_a_storage_type(stype: str) -> None:
    want = REFERENCE["empty"][stype]
    got = mx.nd.empty((3, 4), stype=stype)
    assert (got.stype, list(got.shape), np.dtype(got.dtype).name, type(got).__name__) == \
           (want["stype"], want["shape"], want["dtype"], want["type"])
    if stype != "default":
        assert not got.asnumpy().any()  # an empty sparse array holds no values


def test_np_shape_is_off_as_in_mxnet_1x_and_turning_it_on_is_refused() -> None:
    want = REFERENCE["np_shape"]
    assert mx.is_np_shape() is want["is_np_shape"] is False
    assert mx.util.is_np_shape() is want["util_is_np_shape"]
    assert mx.util.set_np_shape(False) is want["set_np_shape_false_returns"]
    with mx.np_shape(False):
        assert mx.is_np_shape() is want["inside_np_shape_false"]
    for turn_on in (lambda: mx.np_shape(), lambda: mx.np_shape(True), lambda: mx.set_np_shape(True),
                    lambda: mx.use_np_shape(lambda: 1)()):
        with pytest.raises(OutOfScopeError, match="NumPy shape semantics .* is outside kvcli's scope"):
            turn_on()
    assert mx.is_np_shape() is False


def test_context_default_ctx() -> None:
    assert str(mx.Context.default_ctx) == REFERENCE["context"]["default_ctx"]
    mx.Context.default_ctx = mx.cpu(1)
    try:
        assert mx.current_context() == mx.cpu(1) and mx.nd.zeros(1).context == mx.cpu(1)
    finally:
        mx.Context.default_ctx = mx.cpu(0)
    assert mx.Context._default_ctx.value == mx.cpu(0)  # MXNet's thread-local, as code sets it


def test_base_names() -> None:
    want = REFERENCE["base"]
    assert np.dtype(mx.base.mx_real_t).name == want["mx_real_t"] and mx.base.mx_real_t is np.float32
    for name in ("numeric_types", "integer_types", "string_types"):
        assert {t.__name__ for t in getattr(mx.base, name)} == set(want[name]), name
    assert str(mx.base.NotImplementedForSymbol(np.sum, "sum", 1, "x")) == want["not_implemented_for_symbol"]
    assert str(mx.base.NotImplementedForSymbol(np.sum, None)) == want["not_implemented_plain"]
    assert str(mx.base.NotSupportedForSparseNDArray(np.sum, "sum", 1.0)) == want["not_supported_for_sparse"]
    error = mx.base.NotImplementedForSymbol(np.sum, None)
    assert isinstance(error, mx.base.MXNetError) and isinstance(error, RuntimeError)
    from kvcli.mx.base import NotImplementedForSymbol, mx_real_t  # MXNet's import paths

    assert NotImplementedForSymbol is mx.base.NotImplementedForSymbol and mx_real_t is np.float32


def test_version_is_mxnets() -> None:
    assert mx.__version__ == REFERENCE["version"]


def test_attr_scope_is_mxnets_name() -> None:
    from kvcli.mx.attribute import AttrScope

    assert mx.AttrScope is AttrScope
    with mx.AttrScope(ctx_group="dev"):
        assert mx.sym.Variable("x").attr("ctx_group") == "dev"
    assert mx.sym.Variable("y").attr("ctx_group") is None


def test_mxnets_test_optimizer_is_created_by_name_but_not_offered() -> None:
    from kvcli.cli.completion import updater_specs
    from kvcli.optim.spec import builtin_optimizers, parse_updater, spec_help

    assert type(mx.optimizer.create("test")).__name__ == "Test"  # MXNet's kvstore tests set it
    assert type(parse_updater("test")).__name__ == "Test"
    assert "test" not in builtin_optimizers()
    assert "  ·  test " not in spec_help() and "test:" not in updater_specs("t")
    with pytest.raises(MXNetError) as info:
        parse_updater("tset")
    assert "test" not in str(info.value).split("use one of", 1)[1]
