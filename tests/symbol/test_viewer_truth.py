"""A viewer and a drawing that never mislead (issue 34, items 1-5; issue 32 item 6's viewer
parts; issue 35's viz items): what a folded box stands for, why it was folded, the node limit
after folding, NaN and infinity in the weights, no folder of the machine in the page, no
internal ids in tooltips, weights named like JavaScript's object properties, extreme float64
weights, an output that cannot be created, a shape that does not fit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from kvcli.mx.ndarray import io as ndarray_io

from .conftest import needs_dot, run_kvcli
from .test_viewer import _errors, _open, browser  # noqa: F401 - the fixture


def _page_data(path: Path) -> dict:
    return json.loads(re.search(r'id="kvcli-data">(.*?)</script>', path.read_text(encoding="utf-8"), re.S).group(1))


def _fc_graph(path: Path, weight: str = "fc_weight", bias: str = "fc_bias") -> Path:
    """data (1, 2) -> FullyConnected(2) with the given weight and bias names."""
    path.write_text(json.dumps({"nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": weight, "inputs": []},
        {"op": "null", "name": bias, "inputs": []},
        {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "2"},
         "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}], "heads": [[3, 0, 0]]}))
    return path


def _params(path: Path, arrays: dict[str, np.ndarray]) -> Path:
    ndarray_io.save(path, {k: ndarray_io.NDArray(v) for k, v in arrays.items()})
    return path


# ---- issue 32 item 6: extreme float64 weights, names like Object's properties ----------------------


@needs_dot
def test_extreme_float64_weights_still_give_a_page(tmp_path: Path) -> None:
    symbol = _fc_graph(tmp_path / "m-symbol.json")
    params = _params(tmp_path / "m-0000.params", {
        "arg:fc_weight": np.array([[1e308, -1e308], [5.0, 1e-300]]), "arg:fc_bias": np.array([-1.7e308, 1.7e308])})
    out = tmp_path / "m.html"
    done = run_kvcli("viz", str(symbol), "--shape", "data=1,2", "--params", str(params), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and out.exists()
    stats = _page_data(out)["params"]["tensors"]["fc_weight"]
    assert (stats["min"], stats["max"], stats["mean"]) == (-1e308, 1e308, 1.25)
    assert sum(stats["hist"]) == 4 and stats["hist"][0] == 1 and stats["hist"][-1] == 1
    bias = _page_data(out)["params"]["tensors"]["fc_bias"]
    assert (bias["mean"], bias["std"]) == (0.0, 1.7e308)


@needs_dot
def test_weights_named_like_object_properties(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    symbol = _fc_graph(tmp_path / "o-symbol.json", weight="constructor", bias="toString")
    # the file holds "constructor" and an extra "__proto__"; "toString" is missing
    params = _params(tmp_path / "o.params", {"arg:constructor": np.ones((2, 2), np.float32),
                                             "arg:__proto__": np.zeros(3, np.float32)})
    out = tmp_path / "o.html"
    done = run_kvcli("viz", str(symbol), "--shape", "data=1,2", "--params", str(params), "-o", str(out))
    assert done.returncode == 0, done.stderr
    driver = browser
    _open(driver, out)
    driver.execute_script("location.hash = '#node=fc'")
    boxes = driver.find_elements(By.CSS_SELECTOR, "#panel .tensor")
    assert [b.get_attribute("data-name") for b in boxes] == ["constructor", "toString"]
    cells = [td.text for td in boxes[0].find_elements(By.TAG_NAME, "td")]
    assert dict(zip(cells[::2], cells[1::2]))["shape"] == "2x2 float32"
    assert boxes[1].text.splitlines() == ["toString", "missing parameter 'toString' (2)"]
    check = driver.find_element(By.ID, "params-check").text
    assert "extra array 'arg:__proto__' (3): not in the graph" in check
    assert _errors(driver) == []


# ---- item 4: NaN and infinity in the weights ------------------------------------------------------


def _nan_model(tmp_path: Path) -> tuple[Path, Path]:
    symbol = _fc_graph(tmp_path / "n-symbol.json")
    params = _params(tmp_path / "n-0000.params", {
        "arg:fc_weight": np.array([[1.0, np.nan], [np.inf, 2.0]], np.float32),
        "arg:fc_bias": np.zeros(2, np.float32)})
    return symbol, params


def test_nan_and_inf_weights_are_a_warning_and_strict_refuses(tmp_path: Path) -> None:
    symbol, params = _nan_model(tmp_path)
    line = f"warning: {params}: 1 array holds NaN or infinity: 'fc_weight' (2 of 4)"
    summary = run_kvcli("summary", str(symbol), "--shape", "data=1,2", "--params", str(params))
    assert summary.returncode == 0 and summary.stderr.splitlines()[0] == line
    strict = run_kvcli("summary", str(symbol), "--shape", "data=1,2", "--params", str(params), "--strict")
    assert strict.returncode == 1 and strict.stdout == ""
    assert strict.stderr.strip() == f"error: {line.removeprefix('warning: ')}: --strict makes this an error"
    out = tmp_path / "n.svg"
    viz = run_kvcli("viz", str(symbol), "--shape", "data=1,2", "--params", str(params), "-o", str(out), "--strict")
    assert viz.returncode == 1 and not out.exists()
    js = run_kvcli("--json", "summary", str(symbol), "--shape", "data=1,2", "--params", str(params))
    assert json.loads(js.stdout)["params_check"]["nonfinite"] == {"fc_weight": 2}


@needs_dot
def test_nan_weights_in_the_banner_and_on_the_tensor(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    symbol, params = _nan_model(tmp_path)
    out = tmp_path / "n.html"
    assert run_kvcli("viz", str(symbol), "--shape", "data=1,2", "--params", str(params), "-o", str(out)).returncode == 0
    driver = browser
    _open(driver, out)
    banner = driver.find_element(By.ID, "banner")
    assert banner.text == "Weights n-0000.params: 1 array holds NaN or infinity: 'fc_weight' (2 of 4)"
    driver.execute_script("location.hash = '#node=fc'")
    weight = driver.find_element(By.CSS_SELECTOR, "#panel .tensor[data-name=fc_weight]")
    assert weight.find_element(By.CSS_SELECTOR, ".nonfinite").text.startswith("2 of 4 values are NaN or infinity")
    bias = driver.find_element(By.CSS_SELECTOR, "#panel .tensor[data-name=fc_bias]")
    assert bias.find_elements(By.CSS_SELECTOR, ".nonfinite") == []
    assert _errors(driver) == []


# ---- item 5: no folder of the machine in the page --------------------------------------------------


@needs_dot
def test_the_page_names_no_folder_of_the_machine(tmp_path: Path) -> None:
    folder = tmp_path / "private-folder-name"
    folder.mkdir()
    symbol, params = _nan_model(folder)
    bad = _params(folder / "bad.params", {"arg:fc_weight": np.ones((3, 3), np.float32)})
    for weights in (params, bad):
        out = tmp_path / "p.html"
        done = run_kvcli("viz", str(symbol), "--shape", "data=1,2", "--params", str(weights), "-o", str(out))
        assert done.returncode == 0, done.stderr
        page = out.read_text(encoding="utf-8")
        assert "private-folder-name" not in page and str(tmp_path) not in page
        assert weights.name in page
