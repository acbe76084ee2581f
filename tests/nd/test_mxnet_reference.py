"""Every recorded ``mx.nd`` case gives MXNet 1.9.1's result through ``kvcli.mx``: values,
dtype, shape, or the same kind of error."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx import nd
from kvcli.mx.base import MXNetError

from .conftest import REFERENCE

_DATA = json.loads(REFERENCE.read_text()) if REFERENCE.exists() else {"cases": [], "setup": ""}
_BUILTIN_ERRORS = {"ValueError": ValueError, "TypeError": TypeError, "IndexError": IndexError}


def _values(recorded: list[Any]) -> list[float]:
    return [float(v) if isinstance(v, str) else v for v in recorded]  # "nan", "inf" -> float


def test_reference_file_is_present_and_from_mxnet_191() -> None:
    assert REFERENCE.exists(), f"{REFERENCE} missing: run tests/data/make_mxnet_nd_reference.py with MXNet"
    assert _DATA["mxnet_version"] == "1.9.1" and len(_DATA["cases"]) > 100


@pytest.mark.parametrize("case", _DATA["cases"], ids=[c["name"] for c in _DATA["cases"]])
def test_case_matches_mxnet(case: dict[str, Any]) -> None:
    ns: dict[str, Any] = {"mx": mx, "nd": nd, "np": np}
    exec(_DATA["setup"], ns)  # noqa: S102 - the recorded fixed setup
    expected = case["mxnet"]
    if expected["kind"] == "error":
        error_class = _BUILTIN_ERRORS.get(expected["type"], MXNetError)
        if case["name"].startswith("unknown_kwarg"):
            # kvcli: a misspelt keyword is always Python's TypeError (MXNet: a TypeError or an
            # MXNetError "Cannot find argument", and some functions ignore it: see the README)
            error_class = TypeError
        with pytest.raises(error_class):
            exec(case["code"], ns)  # noqa: S102
            eval(case["expr"], ns)  # noqa: S307
        return
    exec(case["code"], ns)  # noqa: S102
    got = eval(case["expr"], ns)  # noqa: S307
    if expected["kind"] == "nd":
        assert isinstance(got, nd.NDArray), type(got)
        assert str(np.dtype(got.dtype)) == expected["dtype"] and list(got.shape) == expected["shape"]
        want = np.array(_values(expected["values"]), dtype=expected["dtype"]).reshape(expected["shape"])
        if np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=0, equal_nan=True)
        else:
            np.testing.assert_array_equal(got.asnumpy(), want)
    elif expected["kind"] == "scalar":
        assert isinstance(got, np.generic) and str(got.dtype) == expected["dtype"]
        assert got.item() == expected["value"]
    elif expected["kind"] == "type":
        assert np.dtype(got).name == expected["name"] and isinstance(got, type)
    elif expected["kind"] == "tuple":
        assert isinstance(got, tuple) and list(got) == expected["value"]
    else:
        assert type(got).__name__ == expected["type"] and got == expected["value"]
