"""Regressions for the bugs the stress tests found in kvcli (one section per fix).

Each case once escaped as an exception other than a :class:`~kvcli.errors.KVCliError` (a
traceback in the CLI) or allocated what a file or expression asked for.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import KVCliError, ValueLanguageError

from .conftest import assert_one_line_error, run_kvcli

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ values: arange
ARANGE_REFUSED = [
    "arange(0, 1, 5e-324)",  # (stop - start) / step is inf: OverflowError in math.ceil
    "arange(0, 1e308, 1e-308)",
    "arange(10, dtype=bool)",  # numpy: TypeError
    "arange(0, 10**18, 10**17, dtype=int8)",  # numpy: OverflowError
    "arange(300, 301, dtype=uint8)",
]


@pytest.mark.parametrize("value", ARANGE_REFUSED)
def test_arange_errors_are_value_language_errors(value: str) -> None:
    from kvcli.values import evaluate

    with pytest.raises(ValueLanguageError, match="arange"):
        evaluate(value)


@pytest.mark.parametrize("value,expected", [
    ("arange(0, -9.223372036854778e+18)", []),  # numpy: ValueError "Maximum allowed size exceeded"
    ("arange(-3)", []),
    ("arange(2, dtype=bool)", [False, True]),
    ("arange(1, 2, 0.25)", [1.0, 1.25, 1.5, 1.75]),
    ("arange(5, dtype=uint8)", [0, 1, 2, 3, 4]),
])
def test_arange_still_works(value: str, expected: list) -> None:
    from kvcli.values import evaluate

    assert evaluate(value).tolist() == expected


def test_arange_error_through_the_cli(tmp_path: Path) -> None:
    assert_one_line_error(run_kvcli(tmp_path, "init", "k", "arange(0, 1, 5e-324)"), "arange")
