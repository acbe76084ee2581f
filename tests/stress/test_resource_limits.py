"""The element cap of the value language holds *before* memory is allocated.

The CLI runs with a 3 GiB address-space limit (``RLIMIT_AS``: Python and numpy start, a
10**10-element array cannot exist), so a value that were allocated before being sized would
end in a MemoryError traceback or a kill instead of the one-line error checked here.
"""

from __future__ import annotations

import math

import json
import resource
from pathlib import Path

import numpy as np
import pytest

from .conftest import assert_one_line_error, run_kvcli

pytestmark = pytest.mark.slow

ADDRESS_SPACE = 3 << 30
DEFAULT_CAP = 1 << 27


def limited_memory() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def init_limited(home: Path, value: str, env: dict[str, str] | None = None, command: str = "init"):
    return run_kvcli(home, command, "k", value, env=env, preexec_fn=limited_memory, timeout=120)


def test_the_address_space_limit_leaves_room_for_real_work(home: Path) -> None:
    """Control: under the same limit kvcli starts and stores a 40 MB value."""
    proc = init_limited(home, "ones(10**7)")
    assert proc.returncode == 0, proc.stderr
    proc = run_kvcli(home, "--json", "show")
    assert json.loads(proc.stdout)["keys"][0]["shape"] == [10**7]


HUGE_VALUES = [
    "ones(10**10)",
    "zeros(50000,50000)",
    "ones(10**5)*ones(10**5,1)",  # each operand is small; the broadcast result is 10**10
    "arange(10**11)",
    "full((10**6,10**6),1)",
    "eye(10**6)",
    "linspace(0, 1, 10**10)",
    "ones(10**10, dtype=bool)",
    "array(ones(10**5)*ones(10**5,1))",
    "ones(2**27 + 1)",  # one over the default cap
    "ones(10**3, 10**4, dtype=float64) + ones(10**3, 1, 10**4)",
    # each array is under the cap, together they are not (these were MemoryError tracebacks)
    "[ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8)]",
    "(ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8))",
    "full(ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8), ones(10**8))",
    "array([" + ", ".join(["[ones(10**8)]"] * 8) + "])",
]


@pytest.mark.parametrize("value", HUGE_VALUES)
def test_huge_values_are_refused_before_allocation(home: Path, value: str) -> None:
    proc = init_limited(home, value)
    line = assert_one_line_error(proc, "value")
    assert "MemoryError" not in proc.stderr and "Unable to allocate" not in proc.stderr
    assert "elements" in line and "134,217,728" in line, line  # names the (default) cap


def test_huge_push_is_refused_before_allocation(home: Path) -> None:
    assert run_kvcli(home, "init", "k", "zeros(4)").returncode == 0
    proc = init_limited(home, "ones(10**5)*ones(10**5,1)", command="push")
    assert_one_line_error(proc, "elements")


def test_nested_operands_within_the_cap_do_not_exhaust_memory(home: Path) -> None:
    """a+(b+(c+...)) keeps every left operand alive: the arrays held at once are budgeted."""
    value = "ones(10**8)"
    for _ in range(7):
        value = f"ones(10**8)+({value})"
    proc = init_limited(home, value)
    assert_one_line_error(proc, "value")


def write_npy_header(path: Path, shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    from numpy.lib import format as npy

    with open(path, "wb") as handle:
        npy.write_array_header_1_0(handle, {"descr": descr, "fortran_order": False, "shape": shape})
    return path.read_bytes()


@pytest.mark.parametrize("shape", [(10**10,), (2**62, 4), (50000, 50000)])
def test_npy_header_claiming_huge_data_is_refused(home: Path, tmp_path: Path, shape: tuple[int, ...]) -> None:
    """A 128-byte .npy whose header claims gigabytes: refused as truncated, from a file or a
    pipe, without allocating what the header says (were MemoryError/OverflowError tracebacks)."""
    fake = tmp_path / "fake.npy"
    header = write_npy_header(fake, shape)
    impossible = math.prod(shape) * 4 > 2**62  # over 2**62 bytes: refused from the header alone
    proc = init_limited(home, f"@{fake}")
    assert_one_line_error(proc, "impossible shape" if impossible else "truncated")
    proc = run_kvcli(home, "init", "k", "-", input=header, preexec_fn=limited_memory, timeout=120)
    # a pipe's size is unknown: the header is refused by the element cap, before any data is read
    assert_one_line_error(proc, "impossible shape" if impossible else "more than the limit")
    # a real, complete file still loads
    good = tmp_path / "good.npy"
    np.save(good, np.arange(6, dtype=np.int32).reshape(2, 3))
    assert init_limited(home, f"@{good}").returncode == 0
    proc = run_kvcli(home, "pull", "k", "--json")
    assert json.loads(proc.stdout)["value"] == [[0, 1, 2], [3, 4, 5]]


# ---------------------------------------------------------------------- a configured cap
LOW = {"KVCLI_MAX_ELEMENTS": "1000"}
ACCEPTED_UNDER_1000 = ["ones(1000)", "ones(10,100)", "arange(1000)", "ones(1000)+ones(1000)", "eye(31)",
                       "linspace(0, 1, 1000)", "[ones(500), ones(500)]", "full((10, 10, 10), 2)"]
REFUSED_UNDER_1000 = ["ones(1001)", "ones(10,101)", "arange(1001)", "ones(1000)*ones(2,1)", "eye(32)",
                      "linspace(0, 1, 1001)", "[ones(500), ones(501)]", "full((10, 10, 11), 2)",
                      "array([ones(1000), ones(1000)])", "zeros(1001, dtype=bool)"]


def test_configured_cap_refuses_one_more_element(home: Path) -> None:
    proc = init_limited(home, "ones(1001)", env=LOW)
    line = assert_one_line_error(proc, "1,001", "1,000")
    assert "KVCLI_MAX_ELEMENTS" in line
    proc = init_limited(home, "ones(1000)", env=LOW)
    assert proc.returncode == 0, proc.stderr
    pulled = json.loads(run_kvcli(home, "pull", "k", "--json").stdout)
    assert pulled["shape"] == [1000] and pulled["value"] == [1.0] * 1000
    # a push is capped the same way
    assert_one_line_error(init_limited(home, "ones(1001)", env=LOW, command="push"), "1,000")
    assert init_limited(home, "ones(1000)*2", env=LOW, command="push").returncode == 0


@pytest.mark.parametrize("value", ACCEPTED_UNDER_1000)
def test_configured_cap_accepts_up_to_the_cap(value: str) -> None:
    from kvcli.values import evaluate

    assert evaluate(value, limit=1000).size <= 1000


@pytest.mark.parametrize("value", REFUSED_UNDER_1000)
def test_configured_cap_refuses_above_the_cap(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from kvcli.errors import ValueLanguageError
    from kvcli.values import evaluate

    monkeypatch.setenv("KVCLI_MAX_ELEMENTS", "1000")
    with pytest.raises(ValueLanguageError, match="1,000"):
        evaluate(value)


def test_bad_cap_setting_is_a_one_line_error(home: Path) -> None:
    proc = init_limited(home, "ones(3)", env={"KVCLI_MAX_ELEMENTS": "lots"})
    assert_one_line_error(proc, "KVCLI_MAX_ELEMENTS")


def test_default_cap_is_exactly_2_to_the_27(monkeypatch: pytest.MonkeyPatch) -> None:
    from kvcli.errors import ValueLanguageError
    from kvcli.values import DEFAULT_MAX_ELEMENTS, evaluate, max_elements

    monkeypatch.delenv("KVCLI_MAX_ELEMENTS", raising=False)
    assert max_elements() == DEFAULT_MAX_ELEMENTS == DEFAULT_CAP
    assert evaluate("zeros(2**27, dtype=bool)").size == DEFAULT_CAP  # 128 MiB, at the cap
    with pytest.raises(ValueLanguageError, match="134,217,729"):
        evaluate("zeros(2**27 + 1, dtype=bool)")
