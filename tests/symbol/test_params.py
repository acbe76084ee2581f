"""`viz/summary --params`: an MXNet checkpoint checked against its graph, and per-tensor
statistics in the viewer (issue 25, item 2). The checkpoint and the statistics were written
by MXNet 1.9.1 (tests/data/make_mxnet_checkpoint.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from kvcli.mx.ndarray import io as ndarray_io
from kvcli.errors import SymbolError
from kvcli.symbol.graph import load_file
from kvcli.symbol.params import HIST_BINS, check_params, load_params, tensor_stats
from kvcli.symbol.shapes import infer_shapes

from .conftest import needs_dot, run_kvcli
from .test_viewer import _errors, _open, browser  # noqa: F401 - the fixture

DATA = Path(__file__).resolve().parents[1] / "data" / "mxnet_checkpoint"
SYMBOL = DATA / "small_cnn-symbol.json"
GOOD, BAD = DATA / "small_cnn-0000.params", DATA / "small_cnn-bad.params"
SHAPE = ("--shape", "data=1,1,8,8")


def _result():
    graph = load_file(SYMBOL)
    return infer_shapes(graph, {"data": (1, 1, 8, 8)})


def test_a_matching_checkpoint_passes() -> None:
    check = check_params(_result(), load_params(GOOD), "good.params")
    assert check.ok and check.expected == check.matched == 10  # 8 parameters + 2 BatchNorm moving stats
    assert check.lines() == ["good.params: all 10 parameters and auxiliary states match the graph's shapes"]


def test_missing_extra_and_wrong_shaped_arrays_are_named_one_line_each() -> None:
    check = check_params(_result(), load_params(BAD), "bad.params")
    assert [(p.kind, p.name) for p in check.problems] == [
        ("shape", "conv1_weight"), ("missing", "fc2_bias"), ("extra", "extra_weight")]
    assert check.lines() == [
        "bad.params: 'arg:conv1_weight' is 4x1x5x5; the graph needs 4x1x3x3",
        "bad.params: missing parameter 'fc2_bias' (3)",
        "bad.params: extra array 'arg:extra_weight' (2x2): not in the graph",
    ]
    assert check.matched == 8


def test_kind_prefix_inputs_and_unprefixed_names(tmp_path: Path) -> None:
    good = load_params(GOOD)
    arrays = {t.name: ndarray_io.NDArray(t.value) for t in good.values()}
    # Gluon's save_parameters: no prefixes; a moving mean stored as a parameter; the input saved too
    stored = {("arg:" + k if k == "bn1_moving_mean" else k): v for k, v in arrays.items()}
    stored["data"] = ndarray_io.NDArray(np.zeros((1, 1, 8, 8), np.float32))
    path = tmp_path / "mixed.params"
    ndarray_io.save(path, stored)
    check = check_params(_result(), load_params(path), "mixed.params")
    assert [p.text for p in check.problems] == [
        "'arg:bn1_moving_mean' is stored as a parameter; the graph uses it as an auxiliary state",
        "extra array 'data' (1x1x8x8): an input of the graph, not a parameter",
    ]
    unnamed = tmp_path / "list.params"
    ndarray_io.save(unnamed, [ndarray_io.NDArray(np.zeros(3, np.float32))])
    with pytest.raises(SymbolError, match=r"holds 1 unnamed arrays; a model's parameters are saved by name"):
        load_params(unnamed)
    with pytest.raises(SymbolError, match=r"^params .*small_cnn-symbol.json: .*not an MXNet .params file"):
        load_params(SYMBOL)


def test_statistics_equal_numpy_on_what_mxnet_loads() -> None:
    truth = json.loads((DATA / "small_cnn_stats.json").read_text())
    tensors = load_params(GOOD)
    assert sorted(t.key for t in tensors.values()) == sorted(truth)
    for t in tensors.values():
        want, got = truth[t.key], tensor_stats(t.value)
        assert got["shape"] == "x".join(map(str, want["shape"])) and got["dtype"] == want["dtype"] == "float32"
        for k in ("min", "max", "mean", "std"):
            assert got[k] == pytest.approx(want[k], rel=1e-5, abs=1e-7), (t.key, k)
        assert got["zeros"] == want["zeros"]
        assert got["first"] == pytest.approx(want["first"][:8], rel=1e-6)
        assert sum(got["hist"]) == int(np.prod(want["shape"]))
        assert len(got["hist"]) == (HIST_BINS if want["min"] < want["max"] else 1)
    bias = tensor_stats(tensors["fc1_bias"].value)
    assert bias["zeros"] == 0.5  # the recorded half of exact zeros


def test_statistics_of_odd_values_stay_json() -> None:
    stats = tensor_stats(np.array([np.nan, np.inf, 0.0, 2.0], np.float32))
    assert stats["nonfinite"] == 2 and stats["min"] == 0 and stats["max"] == 2 and stats["zeros"] == 0.25
    assert stats["first"] == [None, None, 0.0, 2.0]
    json.dumps(stats, allow_nan=False)  # the page's JSON: no NaN
    assert tensor_stats(np.zeros((0, 3), np.float32))["first"] == []
    assert tensor_stats(np.array([True, False]))["first"] == [1.0, 0.0]


def test_summary_reports_the_check() -> None:
    ok = run_kvcli("summary", str(SYMBOL), *SHAPE, "--params", str(GOOD))
    assert ok.returncode == 0 and ok.stderr.strip() == (
        f"{GOOD}: all 10 parameters and auxiliary states match the graph's shapes")
    bad = run_kvcli("summary", str(SYMBOL), *SHAPE, "--params", str(BAD))
    assert bad.returncode == 0 and bad.stderr.splitlines() == [
        f"warning: {BAD}: 'arg:conv1_weight' is 4x1x5x5; the graph needs 4x1x3x3",
        f"warning: {BAD}: missing parameter 'fc2_bias' (3)",
        f"warning: {BAD}: extra array 'arg:extra_weight' (2x2): not in the graph",
    ]
    strict = run_kvcli("summary", str(SYMBOL), *SHAPE, "--params", str(BAD), "--strict")
    assert strict.returncode == 1 and strict.stdout == ""
    assert strict.stderr.strip() == (f"error: {BAD}: 'arg:conv1_weight' is 4x1x5x5; the graph needs 4x1x3x3: "
                                     "--strict makes this an error")
    js = run_kvcli("--json", "summary", str(SYMBOL), *SHAPE, "--params", str(BAD))
    report = json.loads(js.stdout)["params_check"]
    assert report["matched"] == 8 and [p["kind"] for p in report["problems"]] == ["shape", "missing", "extra"]
    unknown = run_kvcli("summary", str(SYMBOL), "--params", str(GOOD))  # no --shape: nothing to compare
    assert unknown.returncode == 0 and unknown.stderr.splitlines()[-1] == (
        f"warning: {GOOD}: 10 of 10 arrays not checked: their shapes are unknown; give input shapes with --shape")
    plain = run_kvcli("--json", "summary", str(SYMBOL), *SHAPE, "--no-params")  # else the checkpoint beside it
    assert "params_check" not in json.loads(plain.stdout) and plain.stderr == ""


@needs_dot
def test_without_params_nothing_changes(tmp_path: Path) -> None:
    out = tmp_path / "m.html"
    done = run_kvcli("viz", str(SYMBOL), *SHAPE, "-o", str(out), "--no-params")
    assert done.returncode == 0 and done.stderr == ""
    data = re.search(r'id="kvcli-data">(.*?)</script>', out.read_text(encoding="utf-8"), re.S).group(1)
    assert "params" not in json.loads(data)


@needs_dot
def test_viewer_shows_each_tensor(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    out = tmp_path / "cnn.html"
    done = run_kvcli("viz", str(SYMBOL), *SHAPE, "--params", str(BAD), "-o", str(out))
    assert done.returncode == 0 and len(done.stderr.splitlines()) == 3
    driver = browser
    _open(driver, out)
    check = driver.find_element(By.ID, "params-check")
    assert check.get_attribute("class") == "bad" and check.text.startswith("Weights small_cnn-bad.params: 3 problem(s)")
    driver.execute_script("location.hash = '#node=conv1'")
    boxes = driver.find_elements(By.CSS_SELECTOR, "#panel .tensor")
    assert [b.get_attribute("data-name") for b in boxes] == ["conv1_weight", "conv1_bias"]
    assert boxes[0].find_element(By.CLASS_NAME, "problem").text == \
        "'arg:conv1_weight' is 4x1x5x5; the graph needs 4x1x3x3"
    truth = json.loads((DATA / "small_cnn_stats.json").read_text())["arg:conv1_bias"]
    cells = [td.text for td in boxes[1].find_elements(By.TAG_NAME, "td")]
    stats = dict(zip(cells[::2], cells[1::2]))
    assert stats["shape"] == "4 float32" and stats["zeros"] == "50.0 %"
    lo, hi = (float(x) for x in stats["min / max"].split(" / "))
    assert lo == pytest.approx(truth["min"], rel=1e-4) and hi == pytest.approx(truth["max"], rel=1e-4)
    assert len(boxes[1].find_elements(By.CSS_SELECTOR, "svg.hist rect")) == HIST_BINS
    driver.execute_script("location.hash = '#node=fc2'")
    missing = driver.find_element(By.CSS_SELECTOR, "#panel .tensor[data-name=fc2_bias]")
    assert missing.text.splitlines() == ["fc2_bias", "missing parameter 'fc2_bias' (3)"]
    assert _errors(driver) == []
