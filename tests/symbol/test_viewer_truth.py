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

from kvcli.mx.ndarray import io as ndarray_io

from .conftest import needs_dot, run_kvcli
from .graphs import distinct_chain
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
        done = run_kvcli("viz", str(symbol), "--shape", "data=1,2", "--params", str(weights), "-o", str(out), "--yes")
        assert done.returncode == 0, done.stderr
        page = out.read_text(encoding="utf-8")
        assert "private-folder-name" not in page and str(tmp_path) not in page
        assert weights.name in page


# ---- item 1: a folded box says what it stands for -------------------------------------------------


def _facts_page(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "f.html"
    done = run_kvcli("viz", str(RESNET), "--shape", "data=1,3,224,224", *args, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return _page_data(out)


RESNET = Path(__file__).resolve().parents[1] / "data" / "sample_models" / "mxnet_v1.3_resnet50_attrs.json"


@needs_dot
def test_a_folded_box_states_members_params_per_member_and_in_all(tmp_path: Path) -> None:
    from kvcli.symbol.graph import load_file
    from kvcli.symbol.shapes import infer_shapes
    from kvcli.symbol.summary import summarize

    data = _facts_page(tmp_path, "--collapse", "stage3_*_conv*")
    box = next(d for d in data["draws"] if d.get("fold") == "pattern")
    layers = {layer.name: layer for layer in
              summarize(infer_shapes(load_file(RESNET), {"data": (1, 3, 224, 224)})).layers}
    convs = [name for name in layers if name.startswith("stage3_") and "_conv" in name]
    facts = box["box"]
    assert facts["members"] == len(convs) == box["count"] == 18
    assert facts["ops"] == {"Convolution": 18}
    each = [layers[name].params for name in convs]
    assert facts["params"] == {"each": [min(each), max(each)], "total": sum(each), "shared": False, "unknown": False}
    assert facts["params"]["total"] != data["nodes"][box["members"][0]]["params"]  # not one member's numbers
    assert facts["macs"]["total"] == sum(layers[name].macs for name in convs)
    shapes = [layers[name].output_shapes[0] for name in convs]
    assert facts["out"] == {"first": "x".join(map(str, shapes[0])), "last": "x".join(map(str, shapes[-1])),
                            "kinds": len(set(shapes))} and len(set(shapes)) > 1
    assert facts["attrs"]["kernel"] == {"values": 2, "without": 0, "top": [["(1,1)", 12], ["(3,3)", 6]]}
    assert facts["attrs"]["no_bias"] == "True"  # shared by all members: shown as it is


@needs_dot
def test_a_fold_of_steps_sharing_weights_counts_them_once(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    char = RESNET.parent / "mxnet_v0.9_char_lstm_embedding_6084nodes_attr.json"
    out = tmp_path / "c.html"
    done = run_kvcli("viz", str(char), "--shape", "data/*=32", "--shape", "l*_init_*=32,512", "-o", str(out))
    assert done.returncode == 0, done.stderr
    data = _page_data(out)
    d = next(i for i, dr in enumerate(data["draws"]) if dr["name"] == "t0_l0_i2h")
    facts = data["draws"][d]["box"]
    assert facts["params"] == {"each": [526_336, 526_336], "total": 526_336, "shared": True, "unknown": False}
    driver = browser
    _open(driver, out)
    driver.execute_script(f"window.kvcliViewer.describe({d})")
    assert driver.find_element(By.ID, "panel-name").text == "t0_l0_i2h … t128_l0_i2h (×129)"
    cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#panel-table td")]
    rows = dict(zip(cells[::2], cells[1::2]))
    assert rows["members"] == "129 (repeated blocks folded)"
    assert rows["params"] == "526,336 per member; 526,336 in all (members share weights: each counted once)"
    assert rows["output"] == "32x2048"
    assert _errors(driver) == []


# ---- items 3 and 5: the limit after folding; no internal ids in tooltips ----------------------------


@needs_dot
def test_the_node_limit_is_checked_after_folding(tmp_path: Path) -> None:
    from .graphs import unrolled

    path = tmp_path / "rnn.json"
    path.write_text(json.dumps(unrolled(7000)))  # 28,001 nodes, 21,001 drawn: more than 20,000
    out = tmp_path / "rnn.svg"
    done = run_kvcli("viz", str(path), "--shape", "data=1,8", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {out} (28,001 nodes in the file (7,000 weights hidden): 21,001 drawn as 4 boxes)"
    assert done.stderr.startswith("21,001 nodes (more than the 4,000 boxes whose exact layout kvcli tries): ")
    full = run_kvcli("viz", str(path), "--shape", "data=1,8", "-o", str(tmp_path / "f.svg"), "--full")
    assert full.returncode == 1 and "21,001 boxes to lay out is more than 20,000" in full.stderr


@needs_dot
def test_tooltips_name_nodes_never_the_pages_ids(browser, tmp_path: Path) -> None:  # noqa: F811
    char = RESNET.parent / "mxnet_v0.9_ocr_lstm_warpctc_attr.json"
    out = tmp_path / "o.html"
    assert run_kvcli("viz", str(char), "-o", str(out)).returncode == 0
    driver = browser
    _open(driver, out)

    def titles() -> list[str]:
        return driver.execute_script(
            "return Array.prototype.map.call(document.querySelectorAll('#canvas g.node > title, #canvas g.edge > title'),"
            " function (t) { return t.textContent; })")

    def check(found: list[str]) -> None:
        assert found and not [t for t in found if re.fullmatch(r"[vme]\d+", t) or "->" in t or re.search(r"\b[vm]\d+\b", t)]

    first = titles()
    check(first)
    assert "l0_t0_i2h … t29_i2h (×30)" in first or any("(×30)" in t for t in first)
    d = driver.execute_script("return JSON.parse(document.getElementById('kvcli-data') ? '0' : '0')")
    driver.execute_script("window.kvcliViewer.expand(arguments[0], true)", d + 1)  # a dagre view: same rule
    check(titles())
    assert _errors(driver) == []


# ---- issue 35: labels, -o that cannot be written, a shape that does not fit, PNG = SVG, quiet render --


def test_fold_labels_write_the_shared_prefix_once() -> None:
    from kvcli.symbol.fold import span_lines

    assert span_lines("resnetv10_stage1_conv0", "resnetv10_stage4_conv2", "×9") == (
        "resnetv10_stage1_conv0 …\nstage4_conv2 (×9)", "resnetv10_stage1_conv0 … stage4_conv2 (×9)")
    assert span_lines("t0_l0_i2h", "t128_l0_i2h", "×129")[1] == "t0_l0_i2h … t128_l0_i2h (×129)"  # "t" is no part
    assert span_lines("_plus0", "_plus768", "×3")[1] == "_plus0 … _plus768 (×3)"  # nor is a lone "_"


@needs_dot
def test_an_output_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    model = RESNET.parent.parent / "mxnet_models" / "lenet-symbol.json"
    afile = tmp_path / "afile"
    afile.write_text("x")
    for target, why in ((afile / "x.svg", f"{afile} is not a folder"), (afile / "sub" / "x.html", f"{afile} is not a folder"),
                        (Path("/proc/kvcli-x.svg"), None), (Path("/proc/kvcli-x.dot"), None)):
        done = run_kvcli("viz", str(model), "--shape", "data=1,1,28,28", "-o", str(target))
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: cannot write {target}: "), lines
        if why:
            assert lines[0] == f"error: cannot write {target}: {why}"
    assert afile.read_text() == "x"


def test_a_read_only_folder_is_one_error_before_any_work(tmp_path: Path) -> None:
    import kvcli.symbol
    from kvcli.errors import SymbolError

    from tests.other_user import as_user, other_uid

    import shutil
    import tempfile

    uid = other_uid()
    top = Path(tempfile.mkdtemp(prefix="kvcli-ro-"))  # in /tmp, which the other user can cross
    try:
        top.chmod(0o755)
        folder = top / "ro"
        folder.mkdir(mode=0o555)
        model = (RESNET.parent.parent / "mxnet_models" / "lenet-symbol.json").read_text()

        def attempt() -> str:
            try:
                kvcli.symbol.visualize(kvcli.symbol.graph.load_json(model), folder / "x.svg")
            except SymbolError as error:
                return str(error)
            return "written"

        import kvcli.symbol.graph  # noqa: F401 - loaded before the fork

        assert as_user(uid, attempt) == f"cannot write {folder / 'x.svg'}: the folder {folder} is not writable"
        assert list(folder.iterdir()) == []
    finally:
        shutil.rmtree(top)


def test_a_shape_that_does_not_fit_is_an_error_unless_partial() -> None:
    wrong = ("summary", str(RESNET), "--shape", "data=1,3,224")
    refused = run_kvcli(*wrong)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.strip() == (
        f"error: {RESNET}: the shapes given do not fit the graph at 'conv0' (Convolution): a 2-d kernel needs a "
        "4-d input, got (1, 3, 224): give shapes that fit, or pass --partial to show what is known")
    shown = run_kvcli(*wrong, "--partial")
    assert shown.returncode == 0 and "Learnable parameters: at least" in shown.stdout
    assert "cannot infer shapes at 'conv0'" in shown.stderr
    viz = run_kvcli("viz", str(RESNET), "--shape", "data=1,3,224", "-o", "-", "--format", "dot")
    assert viz.returncode == 1 and "--partial" in viz.stderr


@needs_dot
def test_the_png_and_the_svg_are_the_same_drawing(tmp_path: Path) -> None:
    """A dot that is slow to write PNGs (6 s: beyond the 5 s trial) but quick for SVG: the trial
    is an SVG layout for every format, so the PNG is not folded when the SVG is not."""
    import shutil

    fake = tmp_path / "dot"
    fake.write_text(f"#!/bin/sh\ncase \"$1\" in -Tpng) sleep 6 ;; esac\nexec {shutil.which('dot')} \"$@\"\n")
    fake.chmod(0o755)
    # 800 distinct nodes: above the size that is drawn exactly untried, laid out by dot in a second
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(distinct_chain(800)))
    said = {}
    for ext in ("svg", "png"):
        out = tmp_path / f"chain.{ext}"
        done = run_kvcli("viz", str(path), "--shape", "data=1,8", "-o", str(out), env={"KVCLI_DOT": str(fake)})
        assert done.returncode == 0, done.stderr
        said[ext] = (done.stdout.replace(str(out), "OUT"), done.stderr)
    assert said["png"][0] == said["svg"][0] == "wrote OUT (801 nodes)\n"  # exact, not folded
    assert said["svg"][1] == ""  # nothing folded, no bounded settings: the PNG may only say it was shrunk
    assert all(line.startswith("chain.png: graphviz shrank the picture") for line in said["png"][1].splitlines())


def test_plot_network_renders_without_graphviz_warnings(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "import kvcli.mx as mx\n"
        "x = mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), num_filter=4, name='conv')\n"
        "x = mx.sym.FullyConnected(x, num_hidden=10, name='fc')\n"  # 'FullyConnected' overflows MXNet's box
        f"print(mx.viz.plot_network(x, shape={{'data': (1, 3, 8, 8)}}).render({str(tmp_path / 'net')!r}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout.strip() == str(tmp_path / "net.pdf")
    assert (tmp_path / "net.pdf").read_bytes().startswith(b"%PDF")


def test_plot_network_returns_a_digraph_by_graphviz_s_name() -> None:
    import graphviz

    import kvcli.mx as mx

    drawn = mx.viz.plot_network(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc"))
    assert isinstance(drawn, graphviz.Digraph)
    assert type(drawn).__name__ == "Digraph"  # what a program printing its type reads under MXNet


# ---- item 6: the checkpoint beside the symbol file -------------------------------------------------


def test_the_newest_checkpoint_beside_the_symbol_file_is_used_and_named(tmp_path: Path) -> None:
    import shutil

    source = Path(__file__).resolve().parents[1] / "data" / "mxnet_checkpoint"
    symbol = tmp_path / "net-symbol.json"
    shutil.copy(source / "small_cnn-symbol.json", symbol)
    shutil.copy(source / "small_cnn-bad.params", tmp_path / "net-0002.params")  # older epoch: wrong shapes
    shutil.copy(source / "small_cnn-0000.params", tmp_path / "net-0010.params")  # newest: the good one
    (tmp_path / "net-10.params").write_text("not an epoch MXNet writes")
    (tmp_path / "other-0099.params").write_text("another model's")
    shape = ("--shape", "data=1,1,8,8")
    found = run_kvcli("--json", "summary", str(symbol), *shape)
    assert found.returncode == 0, found.stderr
    assert found.stderr.splitlines() == [
        "using net-0010.params, the newest checkpoint beside net-symbol.json; --no-params leaves it out",
        f"{tmp_path / 'net-0010.params'}: all 10 parameters and auxiliary states match the graph's shapes"]
    assert json.loads(found.stdout)["params_check"]["file"] == str(tmp_path / "net-0010.params")
    off = run_kvcli("--json", "summary", str(symbol), *shape, "--no-params")
    assert off.returncode == 0 and off.stderr == "" and "params_check" not in json.loads(off.stdout)
    given = run_kvcli("summary", str(symbol), *shape, "--params", str(tmp_path / "net-0002.params"))
    assert given.returncode == 0 and "using" not in given.stderr and "4x1x5x5" in given.stderr
    both = run_kvcli("summary", str(symbol), "--params", str(tmp_path / "net-0002.params"), "--no-params")
    assert both.returncode == 1 and "--params and --no-params together" in both.stderr
    (tmp_path / "model.json").write_text(symbol.read_text())  # not NAME-symbol.json: nothing is looked for
    plain = run_kvcli("summary", str(tmp_path / "model.json"), *shape)
    assert plain.returncode == 0 and plain.stderr == ""
