"""The CLI value language: what it builds, and what it refuses (clearly, before allocating)."""

from __future__ import annotations

import io
import pickle
import tracemalloc

import numpy as np
import pytest

from kvcli.errors import ValueLanguageError
from kvcli.values import evaluate, parse_value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ones(3,3)*8", np.full((3, 3), 8, np.float32)),
        ("zeros(2,2)", np.zeros((2, 2), np.float32)),
        ("zeros((2,2))", np.zeros((2, 2), np.float32)),
        ("full((2,2),0.5)", np.full((2, 2), 0.5, np.float32)),
        ("arange(9).reshape(3,3)", np.arange(9, dtype=np.float32).reshape(3, 3)),
        ("arange(6).reshape((2,3)).T", np.arange(6, dtype=np.float32).reshape(2, 3).T),
        ("[[1,2],[3,4]]", np.array([[1, 2], [3, 4]], np.float32)),
        ("2.5", np.array(2.5, np.float32)),
        ("-ones(2)**2/4 + 1", np.full(2, 0.75, np.float32)),
        ("(ones(2)+1)*(2-1)//1 % 5", np.full(2, 2, np.float32)),
        ("eye(2)", np.eye(2, dtype=np.float32)),
        ("linspace(0, 1, 3)", np.array([0, 0.5, 1], np.float32)),
        ("ones(2, dtype=int32)*3", np.array([3, 3], np.int32)),
        ("array([1, 2], dtype='int64')", np.array([1, 2], np.int64)),
        ("arange(3).astype(uint8)", np.array([0, 1, 2], np.uint8)),
        ("ones(2**3)", np.ones(8, np.float32)),
    ],
)
def test_builds(text: str, expected: np.ndarray) -> None:
    got = parse_value(text)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_float32_by_default_like_mxnet() -> None:
    assert parse_value("[0.1, 1]").dtype == np.float32
    assert parse_value("ones(2)*0.1").dtype == np.float32
    assert parse_value("arange(3)/3").dtype == np.float32


def test_default_dtype_follows_the_stored_key() -> None:
    assert parse_value("ones(3)", default_dtype="int32").dtype == np.int32
    assert parse_value("ones(3)", dtype="float64").dtype == np.float64


def test_npy_file_keeps_its_dtype(tmp_path) -> None:
    np.save(tmp_path / "w.npy", np.arange(4, dtype=np.int16))
    got = parse_value(f"@{tmp_path / 'w.npy'}")
    assert got.dtype == np.int16 and got.tolist() == [0, 1, 2, 3]


def test_npy_from_stdin() -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.eye(2))
    got = parse_value("-", stdin=io.BytesIO(buffer.getvalue()))
    np.testing.assert_array_equal(got, np.eye(2))


def test_fortran_order_npy(tmp_path) -> None:
    array = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    np.save(tmp_path / "f.npy", array)
    np.testing.assert_array_equal(parse_value(f"@{tmp_path / 'f.npy'}"), array)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ones(10**12)", "limit"),
        ("ones(10**6).reshape(10**6,1)+ones(10**6)", "limit"),
        ("zeros((10**5, 10**5))", "limit"),
        ("arange(0, 1, 1e-12)", "limit"),
        ("eye(10**7)", "limit"),
        ("10**10**10", "too large"),
        ("9**99", "too large"),
        ("2**64", "too large"),
        ("__import__('os').system('true')", "not allowed"),
        ("__import__('os')", "unknown function"),
        ("open('/etc/passwd')", "unknown function"),
        ("foo", "unknown name"),
        ("ones(3).__class__", "not allowed"),
        ("(1).real", "not allowed"),
        ("ones(3).tofile('x')", "not allowed"),
        ("lambda: 1", "not allowed"),
        ("[x for x in ones(3)]", "not allowed"),
        ("'abc'", "only allowed as a dtype"),
        ("ones(3, dtype=object)", "not allowed"),
        ("1/0", "division by zero"),
        ("1j", "not a number"),
        ("ones(-1)", "non-negative"),
        ("arange(1, 2, 0)", "must not be 0"),
        ("ones(2)+ones(3)", "do not broadcast"),
        ("[" * 500 + "]" * 500, "nested"),
        ("-" * 200 + "1", "nested"),
        ("", "empty value"),
        ("ones(3", "does not parse"),
        ("@", "needs a file name"),
        ("@/nonexistent/file.npy", "does not exist"),
    ],
)
def test_refuses(text: str, message: str) -> None:
    with pytest.raises(ValueLanguageError, match=message):
        parse_value(text)


def test_refusal_allocates_nothing() -> None:
    # numpy reports its array memory to tracemalloc: a refused value never allocates its
    # elements (the broadcast's two 4 MB operands are made; its 10**12-element result is not)
    tracemalloc.start()
    try:
        for text in ("ones(10**12)", "ones(10**6)**ones(10**6).reshape(10**6, 1)", "full((10**9,10**9), 1)"):
            with pytest.raises(ValueLanguageError):
                parse_value(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20, peak


def test_cap_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVCLI_MAX_ELEMENTS", "10")
    assert parse_value("ones(10)").size == 10
    with pytest.raises(ValueLanguageError, match="KVCLI_MAX_ELEMENTS"):
        parse_value("ones(11)")
    with pytest.raises(ValueLanguageError, match="limit"):
        parse_value(str([1] * 11))


def test_pickled_value_file_is_refused(tmp_path) -> None:
    (tmp_path / "evil.npy").write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(ValueLanguageError, match="pickle"):
        parse_value(f"@{tmp_path / 'evil.npy'}")
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueLanguageError, match="refuses"):
        parse_value(f"@{tmp_path / 'objects.npy'}")


def test_truncated_npy_is_refused(tmp_path) -> None:
    np.save(tmp_path / "w.npy", np.ones(100))
    data = (tmp_path / "w.npy").read_bytes()
    (tmp_path / "w.npy").write_bytes(data[:-8])
    with pytest.raises(ValueLanguageError, match="truncated"):
        parse_value(f"@{tmp_path / 'w.npy'}")


def test_evaluate_never_calls_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    def forbidden(*args, **kwargs):  # pragma: no cover - must not run
        raise AssertionError("eval/exec called")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    assert evaluate("ones(2)*3").tolist() == [3.0, 3.0]


def test_empty_array_with_huge_dimensions_is_refused_by_us() -> None:
    """A 0 among huge dimensions is still a shape numpy cannot hold: our error, not numpy's."""
    assert evaluate("zeros((0, 5))").shape == (0, 5)
    assert evaluate("ones((0, 1000, 1000))").shape == (0, 1000, 1000)
    with pytest.raises(ValueLanguageError, match=r"non-zero dimensions multiply to 1,000,000,000,000,000,000,000,000"):
        evaluate("ones((0, 10**12, 10**12))")


def test_arrays_held_at_once_are_budgeted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each array under the cap is not enough: a+(b+(c+...)) holds every left operand."""
    monkeypatch.setenv("KVCLI_MAX_ELEMENTS", "1000")
    assert parse_value("ones(1000)+ones(1000)").tolist() == [2.0] * 1000  # operands + result: 3x
    assert parse_value("ones(1000)*2+1")[0] == 3.0
    nested = "ones(1000)+(ones(1000)+(ones(1000)+ones(1000)))"
    with pytest.raises(ValueLanguageError, match=r"held at once to 4,000 elements, more than 3 x the limit of 1,000"):
        parse_value(nested)


@pytest.mark.parametrize(
    "text, message",
    [
        ("ones(3)*1e39", "does not fit the dtype: use a wider one such as dtype=float64"),
        ("[1e39, 2]", "does not fit the dtype"),
        ("full(3, 1e39)", "does not fit the dtype"),
        ("ones(3)/0", "division by zero"),
        ("zeros(2)/zeros(2)", "an undefined result"),
    ],
)
def test_numbers_that_do_not_fit_are_errors_not_warnings(text: str, message: str) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy must not merely warn
        with pytest.raises(ValueLanguageError, match=message):
            parse_value(text)
    assert parse_value("full(2, 1e39, dtype=float64)")[0] == 1e39


# ---------------------------------------------------------------------- integer overflow (issue 15, item 9)
@pytest.mark.parametrize("text", [
    "arange(1000, dtype=int8)",
    "ones(3, dtype=uint8) - 2",
    "ones(3, dtype=int8) * 100 + 100",
    "ones(2, dtype=int64) * 2**62 * 2",
    "array([3], dtype=uint8) ** 9",
    "array([2], dtype=int64) ** 63",
    "-array([-128], dtype=int8)",
    "-ones(2, dtype=uint16)",
    "(ones(2) * 300).astype(int8)",
    "full((2,), 1e10, dtype=int8)",
    "linspace(0, 1000, 5, dtype=int8)",
    "array([nan]).astype(int32)",
    "array([-1], dtype=int16).astype(uint16)",
])
def test_integer_overflow_is_an_error_like_float_overflow(text: str) -> None:
    """numpy wraps integers silently (arange(1000, dtype=int8) ends in -25, uint8 1-2 is 255)."""
    with pytest.raises(ValueLanguageError, match="fit|cannot become"):
        evaluate(text)


@pytest.mark.parametrize("text, expected", [
    ("ones(3, dtype=int8) * 127", [127, 127, 127]),
    ("arange(125, 128, dtype=int8)", [125, 126, 127]),
    ("-array([-127], dtype=int8)", [127]),
    ("array([2], dtype=int64) ** 62", [2**62]),
    ("array([-2], dtype=int64) ** 63", [-(2**63)]),
    ("ones(2, dtype=uint8) * 255", [255, 255]),
    ("array([250], dtype=uint8) + 5", [255]),
    ("array([-100], dtype=int8) - 28", [-128]),
    ("array([9223372036854775807], dtype=int64) - 1", [2**63 - 2]),
    ("(ones(2) * 127.9).astype(int8)", [127, 127]),
])
def test_integers_at_the_limits_still_work(text: str, expected: list) -> None:
    assert evaluate(text).tolist() == expected


def test_dtype_option_does_not_wrap() -> None:
    with pytest.raises(ValueLanguageError, match="--dtype int8"):
        parse_value("ones(2) * 300", dtype="int8")
    assert parse_value("ones(2) * 100", dtype="int8").tolist() == [100, 100]


@pytest.mark.parametrize("text", ["inf - inf", "inf * 0", "1e308 * 10", "ones(2) * inf - inf"])
def test_operations_that_make_nan_or_inf_are_refused_on_scalars_and_arrays_alike(text: str) -> None:
    with pytest.raises(ValueLanguageError, match="undefined result|overflows|does not fit"):
        evaluate(text)


def test_written_nan_and_inf_are_values() -> None:
    assert np.isnan(evaluate("nan + 1")) and evaluate("inf + 1") == np.inf
    assert np.isnan(evaluate("[nan, 1]")[0]) and np.isinf(evaluate("-inf*ones(2)")).all()
