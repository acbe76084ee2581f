"""Every recorded ``mx.nd`` case gives MXNet 1.9.1's result through ``kvcli.mx``: values
(bit for bit, any NaN equal to any NaN), dtype, shape, or the same kind of error.

Two records: the hand-written cases of ``tests/data/mxnet_nd_reference.json`` and the
generated differential cases of ``tests/data/mxnet_nd_random_reference.json`` (every dense
``nd`` function and operator on seeded arrays of several dtypes and shapes with edge values;
both from ``tests/data/make_mxnet_nd_reference.py``). Where kvcli is not bit-equal, the one
table :data:`TOLERANCES` says by how much and why.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx import nd
from kvcli.errors import NDArrayError
from kvcli.mx.base import MXNetError
from kvcli.mx.ndarray import reductions

from .conftest import DATA, REFERENCE

_DATA = json.loads(REFERENCE.read_text()) if REFERENCE.exists() else {"cases": [], "setup": ""}
_RANDOM_FILE = DATA / "mxnet_nd_random_reference.json"
_RANDOM = json.loads(_RANDOM_FILE.read_text()) if _RANDOM_FILE.exists() else {"cases": [], "setup": ""}
_BUILTIN_ERRORS = {"ValueError": ValueError, "TypeError": TypeError, "IndexError": IndexError,
                   "AttributeError": AttributeError}

#: The cases kvcli does not reproduce bit for bit: case-name pattern -> (relative tolerance,
#: absolute tolerance, why). Every other recorded value must be bit-equal.
TOLERANCES: dict[str, tuple[float, float, str]] = {
    r"^(sum|mean)_float(32|64)_(5000|20000)_": (
        2.5e-7, 0.0, f"MXNet sums in a Kahan loop; above {reductions.EXACT_LOOP_MAX} values per output kvcli rounds "
                     "the float64 (fsum for float64) sum once instead, which differs from the loop's result by at most "
                     "an ulp, and only where the sum lies near a rounding boundary"),
    r"^dot_float32_": (
        2e-6, 1e-4, "MXNet calls the OpenBLAS it ships (sgemm/sgemv/sdot), whose order of fused multiply-adds "
                    "depends on the shapes and the CPU's kernel; kvcli calls numpy's BLAS: the K-term sums agree "
                    "to a few ulp"),
    r"^dot_float64_": (1e-14, 1e-12, "as for float32 (dgemm/dgemv/ddot)"),
}
#: The cases where MXNet computes something meaningless and kvcli refuses with a clear error
#: instead (NDArrayError): case-name pattern -> why.
REFUSED: dict[str, str] = {
    r"^norm_int(32|64)$": "MXNet's norm of an integer array is its scaled float loop run in integers "
                          "(int32 gives -2147483648); kvcli asks for a float array",
    r"^bool_index_": "MXNet 1.9.1's nd has no boolean indexing (its docs say so; an NDArray mask raises) but reads "
                     "a numpy or list mask, or True, as the indices 1 and 0; kvcli refuses a boolean index",
}


def _values(recorded: list[Any]) -> list[float]:
    return [float(v) if isinstance(v, str) else v for v in recorded]  # "nan", "inf" -> float


def _tolerance(name: str) -> tuple[float, float]:
    for pattern, (rtol, atol, _why) in TOLERANCES.items():
        if re.search(pattern, name):
            return rtol, atol
    return 0.0, 0.0


def _bits(values: np.ndarray) -> np.ndarray:
    out = np.array(values, copy=True)
    out[np.isnan(out)] = np.nan
    return out.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[out.dtype.itemsize])


def check_case(setup: str, case: dict[str, Any]) -> None:
    """Run one recorded case through kvcli.mx and compare with MXNet's recorded result."""
    ns: dict[str, Any] = {"mx": mx, "nd": nd, "np": np}
    exec(setup, ns)  # noqa: S102 - the recorded fixed setup
    expected = case["mxnet"]
    if any(re.search(pattern, case["name"]) for pattern in REFUSED):
        with pytest.raises(NDArrayError):
            exec(case["code"], ns)  # noqa: S102
            eval(case["expr"], ns)  # noqa: S307
        return
    if expected["kind"] == "error":
        error_class = _BUILTIN_ERRORS.get(expected["type"], MXNetError)
        if case["name"].startswith("unknown_kwarg"):
            # kvcli: a misspelt keyword is always Python's TypeError (MXNet: a TypeError or an
            # MXNetError "Cannot find argument", and some functions ignore it: see docs/mxnet-layer.md)
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
        mine = got.asnumpy()
        rtol, atol = _tolerance(case["name"])
        if rtol and want.dtype.kind == "f":
            np.testing.assert_allclose(mine, want, rtol=rtol, atol=atol, equal_nan=True)
        elif want.dtype.kind == "f":
            differ = np.flatnonzero(_bits(mine) != _bits(want))
            assert differ.size == 0, f"not bit-equal at {differ[:5].tolist()}: kvcli {mine.ravel()[differ[:5]]}, " \
                                     f"MXNet {want.ravel()[differ[:5]]}"
        else:
            np.testing.assert_array_equal(mine, want)
    elif expected["kind"] == "scalar":
        assert isinstance(got, np.generic) and str(got.dtype) == expected["dtype"]
        assert got.item() == expected["value"]
    elif expected["kind"] == "type":
        assert np.dtype(got).name == expected["name"] and isinstance(got, type)
    elif expected["kind"] == "tuple":
        assert isinstance(got, tuple) and list(got) == expected["value"]
    else:
        assert type(got).__name__ == expected["type"] and got == expected["value"]


def test_reference_file_is_present_and_from_mxnet_191() -> None:
    assert REFERENCE.exists(), f"{REFERENCE} missing: run tests/data/make_mxnet_nd_reference.py with MXNet"
    assert _DATA["mxnet_version"] == "1.9.1" and len(_DATA["cases"]) > 100
    assert _RANDOM_FILE.exists() and _RANDOM["mxnet_version"] == "1.9.1" and len(_RANDOM["cases"]) > 2000


def test_every_tolerance_is_used() -> None:
    """A tolerance that no recorded case needs any more is removed, not kept."""
    names = [c["name"] for c in _DATA["cases"] + _RANDOM["cases"]]
    for pattern in (*TOLERANCES, *REFUSED):
        assert any(re.search(pattern, n) for n in names), pattern


@pytest.mark.parametrize("case", _DATA["cases"], ids=[c["name"] for c in _DATA["cases"]])
def test_case_matches_mxnet(case: dict[str, Any]) -> None:
    check_case(_DATA["setup"], case)


@pytest.mark.parametrize("case", _RANDOM["cases"], ids=[c["name"] for c in _RANDOM["cases"]])
def test_generated_case_matches_mxnet(case: dict[str, Any]) -> None:
    check_case(_RANDOM["setup"], case)
