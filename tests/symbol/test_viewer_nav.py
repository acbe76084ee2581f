"""The viewer's first view, overview, keys, address, search list, direction and theme, in
headless Chromium (issue 25, items 1, 3 and 4). Skipped like test_viewer.py without a browser."""

from __future__ import annotations

from pathlib import Path

from kvcli.symbol.graph import from_dict

from .conftest import needs_dot
from .test_bigviz import unrolled
from .test_viewer import _errors, _open, _page, browser  # noqa: F401 - the fixture

CHAIN = 60  # blocks: a graph far too tall to read when fitted to the window


def chain(blocks: int = CHAIN) -> dict:
    """data -> (fc{i}: FullyConnected, fc{i}_relu: Activation) x blocks: tall, not folded."""
    nodes = [{"op": "null", "name": "data", "inputs": []}]
    prev = 0
    for i in range(blocks):
        nodes.append({"op": "null", "name": f"fc{i}_weight", "inputs": []})
        nodes.append({"op": "FullyConnected", "name": f"fc{i}", "attrs": {"num_hidden": "16", "no_bias": "True"},
                      "inputs": [[prev, 0, 0], [len(nodes) - 1, 0, 0]]})
        nodes.append({"op": "Activation", "name": f"fc{i}_relu", "attrs": {"act_type": "relu"},
                      "inputs": [[len(nodes) - 1, 0, 0]]})
        prev = len(nodes) - 1
    return {"nodes": nodes, "heads": [[prev, 0, 0]]}


def _chain_page(tmp_path: Path) -> Path:
    return _page(tmp_path, from_dict(chain()), {"data": (1, 16)}, "chain")


def _open_url(driver, url: str) -> None:
    driver.get(url)
    while driver.execute_script("return document.body && document.body.getAttribute('data-ready')") != "1":
        pass


def _centre(driver, node_id: str) -> tuple[float, float]:
    r = driver.execute_script(
        f"var b = document.getElementById('{node_id}').getBoundingClientRect();"
        "return [b.left + b.width / 2, b.top + b.height / 2];")
    return r[0], r[1]


def _canvas(driver) -> dict:
    return driver.execute_script("var r = document.getElementById('canvas').getBoundingClientRect();"
                                 "return {left: r.left, top: r.top, right: r.right, bottom: r.bottom};")


def _data_id(driver, name: str) -> str:
    return driver.execute_script(
        "var d = JSON.parse(document.getElementById('kvcli-data').textContent);"
        f"for (var g = 0; g < d.nodes.length; g++) if (d.nodes[g].name === {name!r}) return 'v' + d.nodes[g].d;")


@needs_dot
def test_first_view_is_readable_on_the_inputs_with_an_overview(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    driver = browser
    _open(driver, _chain_page(tmp_path))
    assert _errors(driver) == []
    view = driver.execute_script("return window.kvcliViewer.visible()")
    assert view["s"] == 1  # one pixel per point: dot's 14-pt labels at 14 px (>= 9 px)
    # the input is on screen, and so is the graph beyond it
    x, y = _centre(driver, _data_id(driver, "data"))
    c = _canvas(driver)
    assert c["left"] < x < c["right"] and c["top"] < y < c["bottom"]
    assert driver.find_element(By.ID, "minimap").is_displayed()
    assert driver.find_element(By.ID, "minimap-img").get_attribute("src").startswith("blob:")
    mini = driver.find_element(By.ID, "minimap").rect
    rect = driver.find_element(By.ID, "minimap-view").rect
    assert rect["height"] < mini["height"] / 3  # a small part of the whole is in view
    assert rect["y"] + rect["height"] > mini["y"] + mini["height"] * 0.8  # at the inputs (the bottom)
    # a click at the top of the overview moves the view to the top of the drawing
    before = driver.execute_script("return window.kvcliViewer.visible()")
    ActionChains(driver).move_to_element_with_offset(driver.find_element(By.ID, "minimap"), 0,
                                                     -mini["height"] / 2 + 4).click().perform()
    after = driver.execute_script("return window.kvcliViewer.visible()")
    assert after["y"] < before["y"] - 1000 and after["s"] == before["s"]
    assert driver.find_element(By.ID, "minimap-view").rect["y"] < mini["y"] + 10
    # dragging in the overview follows the pointer
    ActionChains(driver).move_to_element_with_offset(driver.find_element(By.ID, "minimap"), 0, 0).click_and_hold() \
        .move_by_offset(0, mini["height"] / 4).release().perform()
    dragged = driver.execute_script("return window.kvcliViewer.visible()")
    assert dragged["y"] > after["y"] + 1000
    # Fit is one key away: 0
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys("0")
    fitted = driver.execute_script("return window.kvcliViewer.visible().s")
    assert 1 / fitted < 9 / 14  # the whole graph: its text would be unreadable as a first view
    assert driver.find_element(By.ID, "minimap-view").rect["height"] >= mini["height"] - 4
    assert _errors(driver) == []


@needs_dot
def test_keys_and_the_address(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browser
    page = _chain_page(tmp_path)
    _open_url(driver, page.as_uri() + "#node=fc30_relu")
    assert driver.find_element(By.ID, "panel-name").text == "fc30_relu"
    target = _data_id(driver, "fc30_relu")
    assert "selected" in driver.find_element(By.ID, target).get_attribute("class")
    x, y = _centre(driver, target)
    c = _canvas(driver)
    assert abs(x - (c["left"] + c["right"]) / 2) < 3 and abs(y - (c["top"] + c["bottom"]) / 2) < 3
    assert driver.execute_script("return window.kvcliViewer.visible().s") == 1
    # selecting another node updates the address
    driver.find_element(By.ID, _data_id(driver, "fc30")).click()
    assert driver.execute_script("return location.hash") == "#node=fc30"
    # the address changed by hand selects that node
    driver.execute_script("location.hash = '#node=fc2'")
    assert driver.find_element(By.ID, "panel-name").text == "fc2"
    body = driver.find_element(By.TAG_NAME, "body")
    view = driver.execute_script("return window.kvcliViewer.visible()")
    body.send_keys("+")
    zoomed = driver.execute_script("return window.kvcliViewer.visible()")
    assert abs(zoomed["w"] - view["w"] / 1.25) < 1e-6
    body.send_keys("-")
    assert abs(driver.execute_script("return window.kvcliViewer.visible()")["w"] - view["w"]) < 1e-6
    body.send_keys(Keys.ARROW_RIGHT)
    moved = driver.execute_script("return window.kvcliViewer.visible()")
    assert abs(moved["x"] - (view["x"] + view["w"] * 0.2)) < 1e-6 and moved["y"] == view["y"]
    body.send_keys(Keys.ARROW_DOWN)
    assert driver.execute_script("return window.kvcliViewer.visible().y") > view["y"]
    body.send_keys(Keys.ESCAPE)  # nothing selected, the address plain
    assert driver.find_elements(By.CSS_SELECTOR, "g.node.selected") == []
    assert driver.execute_script("return location.hash") == ""
    body.send_keys("/")
    assert driver.execute_script("return document.activeElement.id") == "search"
    assert _errors(driver) == []


@needs_dot
def test_search_list_keys_and_a_hit_inside_a_fold(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browser
    _open(driver, _chain_page(tmp_path))
    box = driver.find_element(By.ID, "search")
    box.send_keys("fc1")  # fc1, fc1_relu, fc10 ... fc19, fc10_relu ...: 22 nodes, and the 11 FCs' weights
    rows = driver.find_elements(By.CSS_SELECTOR, "#results li")
    assert len(rows) == 33 and driver.find_element(By.ID, "count").text == "0/33"
    cells = [s.text for s in rows[0].find_elements(By.TAG_NAME, "span")]
    assert cells == ["fc1", "FullyConnected", "1x16"]
    weight = [s.text for s in rows[1].find_elements(By.TAG_NAME, "span")]  # a weight, listed after its node
    assert weight[:2] == ["fc1_weight", "weight"] and weight[2] == "16x16"
    assert [s.text for s in rows[2].find_elements(By.TAG_NAME, "span")] == ["fc1_relu", "Activation", "1x16"]
    box.send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN, Keys.ARROW_DOWN)
    assert driver.find_element(By.CSS_SELECTOR, "#results li.on").text.startswith("fc1_relu")
    assert driver.find_element(By.ID, "count").text == "3/33"
    box.send_keys(Keys.ARROW_UP, Keys.ARROW_UP)
    box.send_keys(Keys.ENTER)  # goes to the highlighted row
    assert driver.find_element(By.ID, "panel-name").text == "fc1"
    box.send_keys(Keys.ENTER)  # and on to the next: the weight, shown in its consumer's panel
    assert driver.find_element(By.ID, "panel-name").text == "fc1"
    assert driver.find_element(By.CSS_SELECTOR, "#panel tr.focus").get_attribute("data-weight") == "fc1_weight"
    assert driver.execute_script("return location.hash") == "#node=fc1_weight"
    box.send_keys(Keys.ENTER)
    assert driver.find_element(By.ID, "panel-name").text == "fc1_relu"
    rows = driver.find_elements(By.CSS_SELECTOR, "#results li")
    sixth = rows[5].find_element(By.CLASS_NAME, "r-name").text
    rows[5].click()
    assert driver.find_element(By.ID, "count").text == "6/33"
    assert sixth in (driver.find_element(By.ID, "panel-name").text, driver.execute_script(
        "return decodeURIComponent(location.hash.slice(6))"))
    box.send_keys(Keys.ESCAPE)
    assert not driver.find_element(By.ID, "results").is_displayed()
    # a folded graph: a hit inside a fold selects that member (the fold opens in place)
    _open(driver, _page(tmp_path, from_dict(unrolled(12)), {"data": (1, 8)}, "rnn12", fold=True))
    assert driver.find_elements(By.CSS_SELECTOR, "g.node[id^=m]") == []
    box = driver.find_element(By.ID, "search")
    box.send_keys("l0_t7", Keys.ENTER)
    assert driver.find_element(By.ID, "panel-name").text == "l0_t7"
    selected = driver.find_element(By.CSS_SELECTOR, "g.node.selected")
    assert selected.get_attribute("id").startswith("m")
    texts = [t.get_attribute("textContent") for t in selected.find_elements(By.TAG_NAME, "text")]
    assert texts == ["l0_t7", "FullyConnected", "8"]
    assert driver.execute_script("return location.hash") == "#node=l0_t7"
    assert _errors(driver) == []


@needs_dot
def test_direction_toggle_and_dark_mode(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    driver = browser
    page = _chain_page(tmp_path)
    _open(driver, page)
    first, last = _data_id(driver, "data"), _data_id(driver, f"fc{CHAIN - 1}_relu")

    def positions() -> tuple[tuple[float, float], tuple[float, float]]:
        driver.execute_script("window.kvcliViewer.fit()")
        return _centre(driver, first), _centre(driver, last)

    (x0, y0), (x1, y1) = positions()
    assert y0 > y1 and abs(x0 - x1) < 2  # MXNet's drawing: inputs at the bottom
    toggle = driver.find_element(By.ID, "rankdir")
    assert toggle.text == "Vertical"
    toggle.click()
    assert toggle.text == "Horizontal"
    (x0, y0), (x1, y1) = positions()
    assert x0 < x1 and abs(y0 - y1) < 2  # inputs on the left, the graph to the right
    assert len(driver.find_elements(By.CSS_SELECTOR, "g.node")) == 2 * CHAIN + 2  # + the output label
    toggle.click()
    (x0, y0), (x1, y1) = positions()
    assert y0 > y1 and toggle.text == "Vertical"
    # dark mode follows the system setting, and the button overrides it
    assert driver.execute_script("return document.documentElement.className") == ""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    try:
        _open(driver, page)
        assert driver.execute_script("return document.documentElement.className") == "dark"
        assert driver.execute_script(
            "return getComputedStyle(document.getElementById('canvas')).backgroundColor") == "rgb(30, 30, 30)"
        edge = driver.execute_script("return getComputedStyle(document.querySelector('g.edge path')).stroke")
        assert edge == "rgb(187, 187, 187)"
        driver.find_element(By.ID, "theme").click()
        assert driver.execute_script("return document.documentElement.className") == ""
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert _errors(driver) == []
