"""``assert_almost_equal`` / ``almost_equal`` calls asked the same way of real MXNet 1.9.1 and
of ``kvcli.mx``: whether each passes, what a failure prints and its message, and the numpy
print options it leaves. ``tests/data/make_mxnet_almost_equal_reference.py`` records MXNet's
answers; ``tests/mx/test_almost_equal_mxnet.py`` compares kvcli's. kvcli's code, nothing of
MXNet's copied.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np

#: name -> expression (``mx``, ``nd``, ``np``, ``tu`` = mx.test_utils bound)
CASES: dict[str, str] = {
    "f32_default_passes_5e-4": "tu.assert_almost_equal(nd.array([1.0]), nd.array([1.0005]))",
    "f32_default_fails_5e-3": "tu.assert_almost_equal(nd.array([1.0, 2.0]), nd.array([1.005, 2.0]))",
    "f32_atol_passes_1e-4": "tu.assert_almost_equal(nd.array([0.0]), nd.array([1e-4]))",
    "f16_default_passes_5e-3": "tu.assert_almost_equal(nd.array([1.0], dtype='float16'), nd.array([1.005], dtype='float16'))",
    "f16_default_fails": "tu.assert_almost_equal(nd.array([10.0], dtype='float16'), nd.array([10.5], dtype='float16'))",
    "f64_default_fails_5e-5": "tu.assert_almost_equal(nd.array([1.0], dtype='float64'), nd.array([1.00005], dtype='float64'))",
    "f64_default_passes_5e-6": "tu.assert_almost_equal(nd.array([1.0], dtype='float64'), nd.array([1.000005], dtype='float64'))",
    "numpy_f32_vs_f64_larger_tol": "tu.assert_almost_equal(np.array([1.0], dtype=np.float32), np.array([1.00005]))",
    "numpy_f64_fails": "tu.assert_almost_equal(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.1, 3.5]), names=('x', 'y'))",
    "ints_exact_fail": "tu.assert_almost_equal(np.array([1, 5], dtype=np.int32), np.array([1, 2], dtype=np.int32))",
    "ints_equal": "tu.assert_almost_equal(nd.array([1, 5], dtype='int32'), nd.array([1, 5], dtype='int32'))",
    "nd_vs_numpy": "tu.assert_almost_equal(nd.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-6]))",
    "given_tolerances": "tu.assert_almost_equal(nd.array([[1.0, 2.0], [3, 4]]), nd.array([[1.0, 2.5], [3, 4.2]]), "
                        "rtol=1e-3, atol=1e-5)",
    "dict_tolerances": "tu.assert_almost_equal(nd.array([1.0]), nd.array([1.01]), rtol={np.dtype(np.float32): 0.1})",
    "many_mismatches": "tu.assert_almost_equal(np.arange(30.0), np.arange(30.0) * 1.01 + 1)",
    "mismatches_small": "tu.assert_almost_equal(np.arange(30.0), np.arange(30.0) * 1.01 + 1, mismatches=(2, 3))",
    "nan_fails": "tu.assert_almost_equal(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))",
    "nan_equal": "tu.assert_almost_equal(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), equal_nan=True)",
    "nd_nan_equal": "tu.assert_almost_equal(nd.array([np.nan, 1.0]), nd.array([np.nan, 1.0]), equal_nan=True)",
    "broadcast_passes": "tu.assert_almost_equal(np.array([1.0]), np.array([[1.0, 1.0]]))",
    "no_broadcast_fails": "tu.assert_almost_equal(np.array([1.0]), np.array([[1.0]]), use_broadcast=False)",
    "bools": "tu.assert_almost_equal(np.array([True, False]), np.array([True, True]))",
    "scalar_numbers": "tu.assert_almost_equal(1.0, 1.00005)",
    "inf_equal": "tu.assert_almost_equal(np.array([np.inf, 1.0]), np.array([np.inf, 1.0]))",
    "almost_equal_f64_default": "tu.almost_equal(np.array([1.0]), np.array([1.000005]))",
    "almost_equal_f32_default": "tu.almost_equal(np.array([1.0], dtype=np.float32), np.array([1.00005], dtype=np.float32))",
    "almost_equal_given": "tu.almost_equal(np.array([1.0]), np.array([1.05]), rtol=0.1, atol=0)",
    "almost_equal_shape_strict": "tu.almost_equal(np.array([1.0]), np.array([[1.0]]), use_broadcast=False)",
}


def run(mx: Any, expression: str) -> dict[str, Any]:
    """What ``expression`` does: its value or its error's message, what it printed, and the
    numpy print options afterwards (from numpy's defaults)."""
    np.set_printoptions(threshold=1000, suppress=False)
    printed = io.StringIO()
    names = {"mx": mx, "nd": mx.nd, "np": np, "tu": mx.test_utils}
    with contextlib.redirect_stdout(printed):
        try:
            value = eval(expression, names)  # noqa: S307 - the fixed cases above
            outcome: dict[str, Any] = {"value": value if value is None else bool(value)}
        except AssertionError as error:
            outcome = {"error": str(error)}
    options = np.get_printoptions()
    outcome.update(printed=printed.getvalue(), threshold=int(options["threshold"]), suppress=bool(options["suppress"]))
    np.set_printoptions(threshold=1000, suppress=False)
    return outcome
