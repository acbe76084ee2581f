"""Static drawings users print and share (issue 34, item 11): a colour legend, a PDF of A4
pages with every box whole on some page, and --rankdir naming the side the inputs are on."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kvcli.symbol.pdfpages import A4, MARGIN, OVERLAP, plan_pages

from .conftest import DATA, MODELS, needs_dot, run_kvcli

LENET = DATA / "mxnet_models" / "lenet-symbol.json"
RESNET = MODELS / "mxnet_v1.3_resnet50_attrs.json"
SVG = "{http://www.w3.org/2000/svg}"


def _centre(svg: Path, name: str) -> tuple[float, float]:
    """Where dot drew the node whose first label line is ``name`` (its text's x, y)."""
    root = ET.parse(svg).getroot()
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "node":
            texts = [t for t in g.iter(f"{SVG}text")]
            if texts and texts[0].text == name:
                return float(texts[0].get("x")), float(texts[0].get("y"))
    raise AssertionError(f"{name} not drawn")


@needs_dot
@pytest.mark.parametrize("rankdir", ["tb", "bt", "lr", "rl"])
def test_rankdir_names_the_side_the_inputs_are_on(tmp_path: Path, rankdir: str) -> None:
    out = tmp_path / "l.svg"
    done = run_kvcli("viz", str(LENET), "--shape", "data=1,1,28,28", "--rankdir", rankdir, "-o", str(out))
    assert done.returncode == 0, done.stderr
    (dx, dy), (sx, sy) = _centre(out, "data"), _centre(out, "softmax")  # SVG: y grows downwards
    side = {"tb": dy < sy, "bt": dy > sy, "lr": dx < sx, "rl": dx > sx}
    assert side[rankdir], (rankdir, (dx, dy), (sx, sy))


@needs_dot
def test_static_drawings_have_a_colour_legend(tmp_path: Path) -> None:
    out = tmp_path / "l.svg"
    assert run_kvcli("viz", str(LENET), "--shape", "data=1,1,28,28", "-o", str(out), "--title", "LeNet <5>").returncode == 0
    root = ET.parse(out).getroot()
    graph = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "graph")
    words = [t.text for t in graph.findall(f"{SVG}text")]  # the graph's own label, not the nodes'

    # LeNet: inputs, convolutions and FC, activations, pooling, flatten, softmax output (other)
    assert words == ["LeNet <5>", "input", "Convolution, FullyConnected", "Activation, LeakyReLU", "Pooling",
                     "Concat, Flatten, Reshape", "other operators"]
    fills = {p.get("fill") for p in graph.iter(f"{SVG}polygon")}
    assert {"#8dd3c7", "#fb8072", "#ffffb3", "#80b1d3", "#fdb462", "#fccde5"} <= fills
    assert "#bebada" not in fills  # no BatchNorm in LeNet: no BatchNorm cell
    page = tmp_path / "l.html"  # the viewer has its own panels: its drawing has no legend
    assert run_kvcli("viz", str(LENET), "--shape", "data=1,1,28,28", "-o", str(page)).returncode == 0
    assert "Convolution, FullyConnected</text>" not in page.read_text(encoding="utf-8")


def test_the_page_cut_picks_the_fewest_a4_pages() -> None:
    tall = plan_pages(528, 19_044)  # ResNet-50 top to bottom: one page across, at full size
    assert (tall.columns, tall.scale, tall.size) == (1, 1.0, A4)
    room = A4[1] - 2 * MARGIN
    assert tall.rows == 1 + -(-(19_044 - room) // (room - OVERLAP))
    wide = plan_pages(19_044, 528)  # the same drawn left to right: landscape pages
    assert (wide.rows, wide.size) == (1, (A4[1], A4[0])) and wide.count == tall.count
    assert plan_pages(300, 400).count == 1


@needs_dot
def test_the_pdf_is_a4_pages_each_box_whole_on_one(tmp_path: Path) -> None:
    out = tmp_path / "r.pdf"
    done = run_kvcli("viz", str(RESNET), "--shape", "data=1,3,224,224", "-o", str(out))
    assert done.returncode == 0, done.stderr
    m = re.fullmatch(r"r\.pdf: (\d+) A4 pages \(1 across, (\d+) down\) at (\d+)%\n", done.stderr)
    assert m and m.group(1) == m.group(2) and int(m.group(1)) > 10, done.stderr
    pdf = out.read_bytes()
    # the appended xref points at each new object, the new trailer at the old xref
    xref_at = int(re.findall(rb"startxref\s+(\d+)", pdf)[-1])
    first, count = (int(x) for x in re.match(rb"xref\n(\d+) (\d+)\n", pdf[xref_at:]).groups())
    rows = re.findall(rb"(\d{10}) 00000 n \n", pdf[xref_at:])
    assert len(rows) == count
    for number, offset in zip(range(first, first + count), rows):
        assert pdf[int(offset):].startswith(f"{number} 0 obj".encode())
    pages = re.findall(rb"/Type /Page /Parent \d+ 0 R /MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)
    assert len(pages) == int(m.group(1)) and set(pages) == {(b"595.28", b"841.89")}
    counts = re.findall(rb"/Type /Pages /Kids \[[^\]]*\] /Count (\d+)", pdf)
    assert counts[-1] == m.group(1).encode()
    # tiles overlap by more than the tallest box, so every box is whole on some page
    root = ET.fromstring(run_kvcli("viz", str(RESNET), "--shape", "data=1,3,224,224", "-o", "-").stdout)
    heights = [float(b) - float(a) for g in root.iter(f"{SVG}g") if g.get("class") == "node"
               for poly in g.iter(f"{SVG}polygon")
               for a, b in [(min(p.split(",")[1] for p in poly.get("points").split()),
                             max(p.split(",")[1] for p in poly.get("points").split()))]]
    scale = int(m.group(3)) / 100
    assert max(heights) * scale < OVERLAP
