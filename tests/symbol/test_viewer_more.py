"""What users would miss from Netron (issue 34, items 7-10) and the model's cost in the viewer,
in headless Chromium: one search over operators, weights and shapes with links to weights; a
weight's values paged; export of the whole graph; expand all / by level; keys along edges;
the first view on the input and its first consumer; the overview in dark mode; MACs in the
panel, colour by cost, the costliest layers, a fold's sum."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np

from .conftest import DATA, MODELS, needs_dot, run_kvcli
from .test_viewer import _errors, _open, browser  # noqa: F401 - the fixture

CNN = DATA / "mxnet_checkpoint" / "small_cnn-symbol.json"
MOBILENET = DATA / "mxnet_cost" / "mobilenet1.0-symbol.json"
CHAR_LSTM = MODELS / "mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json"


def _viz(tmp_path: Path, model: Path, name: str, *args: str) -> Path:
    out = tmp_path / f"{name}.html"
    done = run_kvcli("viz", str(model), *args, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def _panel(driver) -> dict:
    from selenium.webdriver.common.by import By

    cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#panel-table td")]
    return dict(zip(cells[::2], cells[1::2]))


@needs_dot
def test_one_search_finds_weights_and_shapes_and_links_a_weight(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    driver = browser
    _open(driver, _viz(tmp_path, CNN, "cnn", "--shape", "data=1,1,8,8"))
    box = driver.find_element(By.ID, "search")
    box.send_keys("4x1x3x3")  # a shape: conv1's weight
    rows = [[s.text for s in li.find_elements(By.TAG_NAME, "span")]
            for li in driver.find_elements(By.CSS_SELECTOR, "#results li")]
    assert rows == [["conv1_weight", "weight", "4x1x3x3"]]
    box.clear()
    box.send_keys("3,3")  # commas read as the shape's x
    assert ["conv1_weight", "weight", "4x1x3x3"] in [[s.text for s in li.find_elements(By.TAG_NAME, "span")]
                                                     for li in driver.find_elements(By.CSS_SELECTOR, "#results li")]
    box.clear()
    box.send_keys("moving_var")  # auxiliary states too
    rows = [[s.text for s in li.find_elements(By.TAG_NAME, "span")]
            for li in driver.find_elements(By.CSS_SELECTOR, "#results li")]
    assert rows == [["bn1_moving_var", "aux state", "4"]]
    # a link to a weight opens its consumer, the weight's row marked
    driver.get(driver.current_url.split("#")[0] + "#node=fc1_bias")
    driver.refresh()
    _wait_ready(driver)
    assert driver.find_element(By.ID, "panel-name").text == "fc1"
    assert driver.find_element(By.CSS_SELECTOR, "#panel tr.focus").get_attribute("data-weight") == "fc1_bias"
    assert _errors(driver) == []


def _wait_ready(driver) -> None:
    import time

    deadline = time.monotonic() + 30
    while driver.execute_script("return document.body && document.body.getAttribute('data-ready')") != "1":
        assert time.monotonic() < deadline
        time.sleep(0.02)


@needs_dot
def test_a_weights_values_page_by_page(browser, tmp_path: Path) -> None:  # noqa: F811
    import shutil

    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from kvcli.mx.ndarray import io as ndarray_io

    symbol = tmp_path / "v-symbol.json"
    shutil.copy(CNN, symbol)
    values = {k: v for k, v in ndarray_io.load(CNN.parent / "small_cnn-0000.params").items()}
    fc1 = values["arg:fc1_weight"].asnumpy()
    ndarray_io.save(tmp_path / "v-0000.params", values)
    out = _viz(tmp_path, symbol, "v", "--shape", "data=1,1,8,8", "--values", "all")
    data = json.loads(re.search(r'id="kvcli-data">(.*?)</script>', out.read_text(), re.S).group(1))
    carried = data["params"]["values"]["fc1_weight"]
    assert carried["enc"] == "f4" and carried["n"] == fc1.size
    assert np.array_equal(np.frombuffer(base64.b64decode(carried["b64"]), "<f4"), fc1.reshape(-1))
    driver = browser
    _open(driver, out)
    driver.execute_script("location.hash = '#node=fc1_weight'")
    tensor = driver.find_element(By.CSS_SELECTOR, ".tensor[data-name=fc1_weight]")
    rows = tensor.find_elements(By.CSS_SELECTOR, ".v-table tr")
    assert len(rows) == min(50, fc1.size)
    first = [td.text for td in rows[0].find_elements(By.TAG_NAME, "td")]
    assert first[0] == "[0, 0]" and np.float32(float(first[1])) == fc1[0, 0]
    tensor.find_element(By.CLASS_NAME, "v-next").click()
    second = [td.text for td in tensor.find_elements(By.CSS_SELECTOR, ".v-table tr")[0].find_elements(By.TAG_NAME, "td")]
    i, j = divmod(50, fc1.shape[1])
    assert second[0] == f"[{i}, {j}]" and np.float32(float(second[1])) == fc1[i, j]
    goto = tensor.find_element(By.CLASS_NAME, "v-goto")  # an index of the shape
    goto.send_keys(f"{fc1.shape[0] - 1},{fc1.shape[1] - 1}", Keys.ENTER)
    last = [td.text for td in tensor.find_elements(By.CSS_SELECTOR, ".v-table tr")[-1].find_elements(By.TAG_NAME, "td")]
    assert last[0] == f"[{fc1.shape[0] - 1}, {fc1.shape[1] - 1}]" and np.float32(float(last[1])) == fc1[-1, -1]
    assert _errors(driver) == []
    # by default the page carries the first 1,000 values of each tensor and says so when cut
    small = _viz(tmp_path, symbol, "w", "--shape", "data=1,1,8,8", "--values", "10")
    _open(driver, small)
    driver.execute_script("location.hash = '#node=fc1_weight'")
    head = driver.find_element(By.CSS_SELECTOR, ".tensor[data-name=fc1_weight] .values h4").text
    assert head == f"Values: the first 10 of {fc1.size} are in this page (kvcli viz --values all puts in every value)"
    assert _errors(driver) == []


@needs_dot
def test_export_is_the_whole_graph_and_folds_expand_all_or_by_level(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    ocr = MODELS / "mxnet_v0.9_ocr_lstm_warpctc_attr.json"
    driver = browser
    _open(driver, _viz(tmp_path, ocr, "ocr"))
    driver.find_element(By.ID, "zoomin").click()  # a view of part of the graph: the export is still all of it
    view = driver.execute_script("return window.kvcliViewer.visible()")
    home = driver.execute_script("return window.kvcliViewer.home()")
    assert view["w"] < home["w"]
    svg = driver.execute_script("return window.kvcliViewer.wholeSvg()")
    m = re.search(r'viewBox="([-\d.]+) ([-\d.]+) ([\d.]+) ([\d.]+)"', svg)
    assert m and [float(x) for x in m.groups()] == [home["x"], home["y"], home["w"], home["h"]]
    assert svg.count('class="node"') == len(driver.find_elements(By.CSS_SELECTOR, "#canvas g.node"))
    folds = driver.execute_script("return window.kvcliViewer.folds().length")
    assert folds > 20
    driver.find_element(By.ID, "expand-level").click()
    first_level = len(driver.execute_script("return Object.keys(window.kvcliViewer.expanded())"))
    assert 0 < first_level < folds
    driver.find_element(By.ID, "expand-all").click()
    assert len(driver.execute_script("return Object.keys(window.kvcliViewer.expanded())")) == folds
    assert driver.find_element(By.ID, "expand-all").get_attribute("disabled") == "true"
    assert len(driver.find_elements(By.CSS_SELECTOR, "#canvas g.node[id^=m]")) == 792 - (38 - folds)
    driver.find_element(By.ID, "fold-all").click()
    assert driver.execute_script("return Object.keys(window.kvcliViewer.expanded()).length") == 0
    # the char-LSTM: its folds at once are more boxes than the page lays out; it says what it did
    _open(driver, _viz(tmp_path, CHAR_LSTM, "char", "--shape", "data/*=32", "--shape", "l*_init_*=32,512"))
    driver.find_element(By.ID, "expand-all").click()
    said = driver.find_element(By.ID, "notes").text
    assert re.fullmatch(r"Expanded \d+ of the \d+ folds: all of them would show more than the 1,500 boxes "
                        r"the page lays out itself", said), said
    assert _errors(driver) == []


@needs_dot
def test_keys_walk_along_edges_and_the_first_view_shows_input_and_consumer(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    driver = browser
    _open(driver, _viz(tmp_path, MODELS / "mxnet_v1.3_resnet50_attrs.json", "r", "--shape", "data=1,3,224,224"))

    def on_screen(name: str) -> bool:
        return driver.execute_script(
            "var name = arguments[0], d = JSON.parse(document.getElementById('kvcli-data').textContent);"
            "var i = d.draws.findIndex(function (x) { return x.name === name; });"
            "var r = document.getElementById('v' + i).getBoundingClientRect(),"
            " c = document.getElementById('canvas').getBoundingClientRect();"
            "return r.left >= c.left && r.right <= c.right && r.top >= c.top && r.bottom <= c.bottom;", name)

    assert on_screen("data") and on_screen("bn_data")  # the input and its first consumer
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys("o")  # nothing selected: the first input
    assert driver.find_element(By.ID, "panel-name").text == "data"
    body.send_keys("o")
    assert driver.find_element(By.ID, "panel-name").text == "bn_data"
    for _ in range(5):
        body.send_keys("o")
    assert driver.find_element(By.ID, "panel-name").text == "stage1_unit1_bn1"
    body.send_keys("o", "o")  # on to relu1, then its first consumer: conv1 or the shortcut sc
    assert driver.find_element(By.ID, "panel-name").text in ("stage1_unit1_conv1", "stage1_unit1_sc")
    first = driver.find_element(By.ID, "panel-name").text
    body.send_keys("n")  # its sibling: the other consumer of relu1
    assert {first, driver.find_element(By.ID, "panel-name").text} == {"stage1_unit1_conv1", "stage1_unit1_sc"}
    body.send_keys("i")
    assert driver.find_element(By.ID, "panel-name").text == "stage1_unit1_relu1"
    body.send_keys("?")
    assert driver.find_element(By.ID, "keys").text.startswith("i / o go to an input / a consumer")
    assert _errors(driver) == []


@needs_dot
def test_the_overview_follows_dark_mode(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    driver = browser
    _open(driver, _viz(tmp_path, CNN, "d", "--shape", "data=1,1,8,8", "--no-params"))

    def overview_svg() -> str:  # what the overview image was drawn from
        return driver.execute_script("return window.kvcliViewer.miniText()")

    light = overview_svg()
    if driver.execute_script("return document.documentElement.classList.contains('dark')"):
        driver.find_element(By.ID, "theme").click()
        light = overview_svg()
    assert "#1e1e1e" not in light
    driver.find_element(By.ID, "theme").click()
    dark = overview_svg()
    assert "g.graph &gt; polygon { fill: #1e1e1e" in dark or "g.graph > polygon { fill: #1e1e1e" in dark
    assert _errors(driver) == []


@needs_dot
def test_cost_in_the_panel_colours_costliest_and_a_folds_sum(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    from kvcli.symbol.graph import load_file
    from kvcli.symbol.shapes import infer_shapes
    from kvcli.symbol.summary import summarize

    summary = summarize(infer_shapes(load_file(MOBILENET), {"data": (1, 3, 224, 224)}))
    layers = sorted((layer for layer in summary.layers if layer.macs), key=lambda layer: -layer.macs)
    driver = browser
    _open(driver, _viz(tmp_path, MOBILENET, "m", "--shape", "data=1,3,224,224"))
    totals = driver.find_element(By.ID, "totals").text
    assert totals.endswith(f"MACs: {summary.macs:,} (569 M)")
    driver.execute_script(f"location.hash = '#node={layers[0].name}'")
    rows = _panel(driver)
    assert rows["MACs"] == f"{layers[0].macs:,} ({layers[0].macs / 1e6:.3g} M)"
    assert rows["output bytes"].startswith(f"{layers[0].out_bytes:,} (")
    driver.find_element(By.ID, "tab-cost").click()
    listed = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
              for tr in driver.find_elements(By.CSS_SELECTOR, "#costliest tr[data-g]")]
    assert [r[0] for r in listed] == [layer.name for layer in layers[:25]]
    assert listed[0][2] == f"{layers[0].macs:,}" and listed[0][3] == f"{100 * layers[0].macs / summary.macs:.1f} %"
    driver.find_elements(By.CSS_SELECTOR, "#costliest tr[data-g]")[3].click()
    assert driver.find_element(By.ID, "panel-name").text == layers[3].name
    # colour by cost: the costliest box in the darkest colour, a box without MACs in grey
    driver.find_element(By.ID, "colour-cost").click()
    fills = driver.execute_script(
        "var d = JSON.parse(document.getElementById('kvcli-data').textContent), out = {};"
        "d.draws.forEach(function (x, i) { var p = document.querySelector('#v' + i + ' polygon, #v' + i + ' ellipse');"
        " if (p) out[x.name] = p.getAttribute('fill'); }); return out;")
    assert fills[layers[0].name] == "#bd0026" and fills["mobilenet0_relu0_fwd"] == "#eeeeee"
    driver.find_element(By.ID, "colour-cost").click()  # and back to the kinds' colours
    assert driver.execute_script(
        "return document.querySelector('#canvas g.node polygon[fill=\"#bd0026\"]')") is None
    assert _errors(driver) == []
    # a fold sums its members: the char-LSTM's folded i2h layer
    _open(driver, _viz(tmp_path, CHAR_LSTM, "c", "--shape", "data/*=32", "--shape", "l*_init_*=32,512"))
    d = driver.execute_script("return JSON.parse(document.getElementById('kvcli-data').textContent).draws"
                              ".findIndex(function (x) { return x.name === 't0_l0_i2h'; })")
    driver.execute_script(f"window.kvcliViewer.describe({d})")
    per = 32 * 256 * 2048  # batch 32, embedding 256 -> 2,048 gates
    assert _panel(driver)["MACs"] == f"{129 * per:,} ({129 * per / 1e9:.3g} G) in all; {per:,} ({per / 1e6:.3g} M) per member"
    assert _errors(driver) == []
