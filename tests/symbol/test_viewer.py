"""The HTML viewer in a real browser (headless Chromium driven by selenium): it loads offline,
searches, shows a node's details, collapses a group, sorts the summary, exports the view,
and opens a 6,000-node graph (how fast: ``python bench/scale.py``). Skipped, with the reason,
when no browser is installed."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Iterator

import pytest

from kvcli.symbol.fold import fold_repeats, prepare
from kvcli.symbol.graph import from_dict, load_file
from kvcli.symbol.plan import build_plan
from kvcli.symbol.render import plan_to_digraph, render_bytes
from kvcli.symbol.shapes import infer_shapes
from kvcli.symbol.summary import summarize
from kvcli.symbol.viewer import build_html

from .conftest import SAMPLES, needs_dot, run_kvcli
from .graphs import unrolled

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _why_no_browser() -> str:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "BROWSER TESTS SKIPPED: selenium is not installed (pip install -e '.[test]')"
    if not (Path(CHROMIUM).exists() and Path(DRIVER).exists()):
        return ("BROWSER TESTS SKIPPED: chromium/chromedriver not found "
                "(as root: apt-get install -y chromium chromium-driver, or `make install`)")
    return ""


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    reason = _why_no_browser()
    if reason:
        warnings.warn(reason, stacklevel=2)
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="kvcli-chromium-")
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run",
                f"--user-data-dir={profile}", "--window-size=1400,900"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _page(tmp_path: Path, graph, given, name: str, fold: bool = False) -> Path:
    """The viewer page as the CLI writes it; ``fold`` folds repeated blocks even when small."""
    result = infer_shapes(graph, given)
    base = build_plan(graph, result, readable=True)
    plan, bounded = (fold_repeats(base), False) if fold else prepare(base)
    svg = render_bytes(plan_to_digraph(plan, title=name, readable=True, bounded=bounded, svg_ids=True)).decode()
    out = tmp_path / f"{name}.html"
    out.write_text(build_html(plan, summarize(result), svg, name, base=base), encoding="utf-8")
    return out


def _open(driver, path: Path) -> None:
    """Load the page and wait for the marker it sets once drawn (``data-ready`` on the body)."""
    deadline = time.monotonic() + 30
    driver.get(path.as_uri())
    while driver.execute_script("return document.body && document.body.getAttribute('data-ready')") != "1":
        assert time.monotonic() < deadline, "viewer never became ready"
        time.sleep(0.02)


def _errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


@needs_dot
def test_viewer_search_click_collapse_summary(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browser
    graph = load_file(SAMPLES / "mini_resnet.json")
    _open(driver, _page(tmp_path, graph, {"data": (1, 3, 32, 32)}, "mini_resnet"))
    assert _errors(driver) == []
    # offline: the page fetched nothing at all
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    # search by op, next, next, previous
    box = driver.find_element(By.ID, "search")
    box.send_keys("convolution", Keys.ENTER)
    assert driver.find_element(By.ID, "count").text == "1/6"
    box.send_keys(Keys.ENTER)
    assert driver.find_element(By.ID, "count").text == "2/6"
    driver.find_element(By.ID, "prev").click()
    assert driver.find_element(By.ID, "count").text == "1/6"
    assert driver.find_element(By.ID, "panel-name").text == "stem_conv"
    assert len(driver.find_elements(By.CSS_SELECTOR, "g.node.hit")) == 6
    # click a node: its details
    names = [d["name"] for d in json.loads(driver.execute_script(
        "return document.getElementById('kvcli-data').textContent"))["draws"]]
    fc = names.index("fc")
    driver.find_element(By.ID, "fit").click()  # the whole graph again, so fc is on screen
    driver.find_element(By.ID, f"v{fc}").click()  # a real mouse click on the box
    assert driver.find_element(By.ID, "panel-name").text == "fc"
    cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#panel-table td")]
    pairs = dict(zip(cells[::2], cells[1::2]))
    assert pairs["op"] == "FullyConnected" and pairs["num_hidden"] == "10"
    assert pairs["output"] == "1x10"
    assert [b for a, b in zip(cells[::2], cells[1::2]) if a == "weight"] == ["fc_weight : 10x32", "fc_bias : 10"]
    assert pairs["params"] == "330"  # 10*32 + 10
    # collapse the stem_* group to one box, then expand it
    driver.find_element(By.ID, "tab-groups").click()
    groups = driver.execute_script("return window.kvcliViewer.groups.map(function (g) { return g.name; })")
    j = groups.index("stem_*")
    driver.find_element(By.ID, f"group-{j}").click()
    hidden = driver.find_elements(By.CSS_SELECTOR, "g.node.kv-hidden")
    assert sorted(h.get_attribute("id") for h in hidden) == [f"v{names.index('stem_bn')}", f"v{names.index('stem_relu')}"]
    rep = driver.find_element(By.ID, f"v{names.index('stem_conv')}")
    assert rep.find_element(By.TAG_NAME, "text").get_attribute("textContent") == "stem_* (×3)"
    assert driver.find_elements(By.CSS_SELECTOR, "g.edge.kv-hidden")  # their edges went too
    driver.find_element(By.ID, f"group-{j}").click()
    assert driver.find_elements(By.CSS_SELECTOR, "g.kv-hidden") == []
    assert rep.find_element(By.TAG_NAME, "text").get_attribute("textContent") == "stem_conv"
    # the summary, sorted by params (largest first), and its totals
    driver.find_element(By.ID, "tab-summary").click()
    rows = driver.find_elements(By.CSS_SELECTOR, "#sumtable tbody tr")
    assert len(rows) == len(summarize(infer_shapes(graph, {"data": (1, 3, 32, 32)})).layers)
    driver.find_element(By.CSS_SELECTOR, "#sumtable th[data-key=params]").click()
    first = driver.find_element(By.CSS_SELECTOR, "#sumtable tbody tr").find_elements(By.TAG_NAME, "td")
    summary = summarize(infer_shapes(graph, {"data": (1, 3, 32, 32)}))
    top = max(summary.layers, key=lambda layer: layer.params)
    assert first[0].text == top.name and first[3].text == f"{top.params:,}"
    totals = " ".join((summary.total_text(summary.params), summary.total_text(summary.aux), summary.macs_text(),
                       summary.bytes_text()))
    assert driver.find_element(By.CSS_SELECTOR, "#sumtable tfoot").text.endswith(totals)
    # export of the current view is a standalone SVG of what is shown
    exported = driver.execute_script("return window.kvcliViewer.currentSvg()")
    assert exported.startswith("<svg") and "stem_conv" in exported and "javascript:" not in exported
    assert _errors(driver) == []


@needs_dot
def test_six_thousand_nodes_open(browser, tmp_path: Path) -> None:
    # how long opening takes: `python bench/scale.py` (budget 3 s)
    graph = from_dict(unrolled(2000))  # 6,001 drawn nodes, folded for the layout
    _open(browser, _page(tmp_path, graph, {"data": (1, 8)}, "big"))
    assert _errors(browser) == []
    info = browser.execute_script(
        "var d = JSON.parse(document.getElementById('kvcli-data').textContent);"
        "return [d.nodes.length, d.draws.length, document.querySelectorAll('g.node').length]")
    assert info[0] == 8001 and info[1] == info[2] == 5  # 4 folded boxes + the output's shape label
    # a fold of 2,000 is too many boxes to lay out in the page: it says so, and draws nothing new
    browser.execute_script("window.kvcliViewer.describe(1)")
    browser.find_element("id", "expand").click()
    assert browser.find_element("id", "status").text.startswith("Expanding this fold would show 2,004 boxes; "
                                                                "the page lays out at most 1,500.")
    assert browser.find_elements("css selector", "g.node[id^=m]") == []


@needs_dot
def test_cli_writes_html(tmp_path: Path) -> None:
    out = tmp_path / "m.html"
    result = run_kvcli("viz", str(SAMPLES / "mlp.json"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "default-src 'none'" in page
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:|//)", page), "no external resource"
    assert "<?xml" not in page and "<!DOCTYPE svg" not in page
    assert [p.name for p in tmp_path.iterdir()] == ["m.html"]


def _view_edges(base, plan, expanded: set[int]) -> int:
    """How many edges the expanded view draws: the unfolded drawing's edges between shown boxes."""
    draw_of = {m: d for d, node in enumerate(plan.nodes) for m in node.members}
    out_of = {id(node): d for d, node in enumerate(plan.nodes) if not node.members}

    def unit(b: int) -> str:
        node = base.nodes[b]
        if not node.members:
            return f"v{out_of[id(node)]}"
        g = node.members[0]
        return f"m{g}" if draw_of[g] in expanded else f"v{draw_of[g]}"

    return len({(unit(e.head), unit(e.tail)) for e in base.edges} - {(u, u) for u in map(unit, range(len(base.nodes)))})


@needs_dot
def test_fold_expands_in_place_searchable_and_folds_back(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browser
    graph = from_dict(unrolled(12))
    given = {"data": (1, 8)}
    _open(driver, _page(tmp_path, graph, given, "rnn12", fold=True))
    assert _errors(driver) == []
    base = build_plan(graph, infer_shapes(graph, given), readable=True)
    plan = fold_repeats(base)
    fc = next(d for d, n in enumerate(plan.nodes) if n.op == "FullyConnected")
    assert plan.nodes[fc].label.startswith("l0_t0 …\nt11 (×12)")
    members = plan.nodes[fc].members
    before = len(driver.find_elements(By.CSS_SELECTOR, "g.node"))
    assert before == len(plan.nodes) == 5  # data, 3 folds, the output's shape
    # click the fold, expand it from the side panel
    driver.find_element(By.ID, f"v{fc}").click()
    assert driver.find_element(By.ID, "panel-name").text == "l0_t0 … t11 (×12)"
    driver.find_element(By.ID, "expand").click()
    shown = driver.find_elements(By.CSS_SELECTOR, "g.node[id^=m]")
    assert sorted(int(g.get_attribute("id")[1:]) for g in shown) == sorted(members)
    assert all(g.is_displayed() for g in shown)
    texts = {g.get_attribute("id"): [t.get_attribute("textContent") for t in g.find_elements(By.TAG_NAME, "text")]
             for g in shown}
    assert texts[f"m{members[7]}"] == ["l0_t7", "FullyConnected", "8"]
    assert len(driver.find_elements(By.CSS_SELECTOR, "g.node")) == before - 1 + 12
    assert len(driver.find_elements(By.CSS_SELECTOR, "g.edge")) == _view_edges(base, plan, {fc})
    assert driver.find_element(By.ID, "panel-name").text == "l0_t0"  # the first member, centred
    # boxes never overlap in the browser's layout
    rects = driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('g.node'), function (g) {"
        " var b = g.getBBox(); return [b.x, b.y, b.width, b.height]; })")
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1], (a, b)
    # the members are searchable: one hit per member, each its own box
    box = driver.find_element(By.ID, "search")
    box.clear()
    box.send_keys("l0_t7", Keys.ENTER)
    assert driver.find_element(By.ID, "count").text == "1/2"  # the node, then its weight l0_t7_w_weight
    assert driver.find_element(By.ID, "panel-name").text == "l0_t7"
    assert driver.find_element(By.ID, f"m{members[7]}").get_attribute("class") == "node hit current selected"
    cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#panel-table td")]
    assert dict(zip(cells[::2], cells[1::2]))["output"] == "1x8"
    box.clear()
    box.send_keys("fullyconnected", Keys.ENTER)
    assert driver.find_element(By.ID, "count").text == "1/12"
    assert _errors(driver) == []
    # double-click a member: the fold closes again, dot's drawing is back
    driver.find_element(By.ID, "fit").click()
    ActionChains(driver).double_click(driver.find_element(By.ID, f"m{members[3]}")).perform()
    assert driver.find_elements(By.CSS_SELECTOR, "g.node[id^=m]") == []
    assert len(driver.find_elements(By.CSS_SELECTOR, "g.node")) == before
    assert driver.find_element(By.ID, "panel-name").text == "l0_t0 … t11 (×12)"
    assert driver.find_element(By.ID, "count").text == "1/12"  # the same 12 nodes found, the place kept
    assert [g.get_attribute("id") for g in driver.find_elements(By.CSS_SELECTOR, "g.node.hit")] == [f"v{fc}"]
    # expand two folds, then "Fold all"
    for d in (fc, fc + 1):
        driver.execute_script(f"window.kvcliViewer.expand({d}, true)")
    assert len(driver.find_elements(By.CSS_SELECTOR, "g.node[id^=m]")) == 24
    assert len(driver.find_elements(By.CSS_SELECTOR, "g.edge")) == _view_edges(base, plan, {fc, fc + 1})
    driver.find_element(By.ID, "fold-all").click()
    assert len(driver.find_elements(By.CSS_SELECTOR, "g.node")) == before
    assert driver.find_element(By.ID, "fold-all").get_attribute("disabled") == "true"
    assert _errors(driver) == []


@needs_dot
def test_pan_zoom_fit_dtypes_png_export_and_licence(browser, tmp_path: Path) -> None:
    """The page `kvcli viz --dtype` writes: wheel zoom, drag pan, Fit; dtypes in the panel; PNG export;
    name-prefix groups offered; the bundled layout library's licence carried in the page."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.webdriver.common.by import By

    driver = browser
    out = tmp_path / "r.html"
    result = run_kvcli("viz", str(SAMPLES / "mini_resnet.json"), "--shape", "data=1,3,32,32",
                       "--dtype", "data=float16", "-o", str(out))
    assert result.returncode == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    licence = (Path(__file__).parents[2] / "kvcli/symbol/viewer/LICENSE-dagre.txt").read_text(encoding="utf-8")
    assert "Copyright (c) 2012-2014 Chris Pettitt" in licence and licence in page
    assert "sourceMappingURL" not in page
    _open(driver, out)
    assert _errors(driver) == []

    def view() -> list[float]:
        return [float(x) for x in driver.find_element(By.CSS_SELECTOR, "#canvas svg").get_dom_attribute("viewBox").split()]

    driver.find_element(By.ID, "fit").click()
    home = view()
    canvas = driver.find_element(By.ID, "canvas")
    ActionChains(driver).scroll_from_origin(ScrollOrigin.from_element(canvas), 0, -200).perform()
    zoomed = view()
    assert zoomed[2] < home[2] and zoomed[3] < home[3]  # wheel up: closer
    ActionChains(driver).move_to_element_with_offset(canvas, 0, 0).click_and_hold().move_by_offset(120, 60).release().perform()
    panned = view()
    assert panned[2:] == zoomed[2:] and panned[0] < zoomed[0] and panned[1] < zoomed[1]  # dragged right/down
    driver.find_element(By.ID, "fit").click()
    assert view() == home
    driver.find_element(By.ID, "zoomin").click()
    assert abs(view()[2] - home[2] / 1.5) < 1e-3
    driver.find_element(By.ID, "fit").click()
    # dtypes: the side panel shows each input's and the output's type
    names = [d["name"] for d in json.loads(driver.execute_script(
        "return document.getElementById('kvcli-data').textContent"))["draws"]]
    driver.execute_script(f"window.kvcliViewer.describe({names.index('fc')})")
    cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#panel-table td")]
    pairs = dict(zip(cells[::2], cells[1::2]))
    assert pairs["output"] == "1x10 float16" and pairs["input 0"] == "flatten0 : 1x32 float16"
    groups_ = driver.execute_script("return window.kvcliViewer.groups.map(function (g) { return g.name; })")
    assert groups_ == ["b0a_*", "b1a_*", "stem_*", "b0b_*", "b1b_*", "b1proj_*"]  # name prefixes, largest first
    # PNG export of the current view: a real PNG of the view's size (x2)
    driver.execute_script(
        "window.__blobs = []; var make = URL.createObjectURL;"
        "URL.createObjectURL = function (b) { window.__blobs.push(b); return make(b); };"
        "HTMLAnchorElement.prototype.click = function () { window.__saved = this.download; };")
    driver.find_element(By.ID, "export-png").click()
    head = driver.execute_async_script(
        "var done = arguments[0]; (function wait() {"
        " var png = window.__blobs.filter(function (b) { return b.type === 'image/png'; })[0];"
        " if (!png) return setTimeout(wait, 20);"
        " png.arrayBuffer().then(function (a) { var v = new DataView(a);"
        "  done([window.__saved, Array.from(new Uint8Array(a, 0, 8)), v.getUint32(16), v.getUint32(20)]); }); })();")
    saved, magic, width, height = head
    assert saved == "mini_resnet.png" and magic == [137, 80, 78, 71, 13, 10, 26, 10]
    assert (width, height) == (round(home[2] * 2), round(home[3] * 2))
    assert _errors(driver) == []


def test_groups_offer_prefixes_and_repeated_blocks(models: Path) -> None:
    """ResNet-50's groups: stage prefixes and each repeated block (stage3_unit*_conv1: six units)."""
    from kvcli.symbol.viewer import groups

    plan = build_plan(load_file(models / "mxnet_v1.3_resnet50_attrs.json"), readable=True)
    found = {g["name"]: [plan.nodes[d].name for d in g["draws"]] for g in groups(plan)}
    assert found["stage3_unit*_conv1"] == [f"stage3_unit{u}_conv1" for u in range(1, 7)]
    assert len(found["stage3_*"]) == 55 and found["stage1_unit1_*"][0] == "stage1_unit1_bn1"
