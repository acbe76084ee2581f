"""Drawing: the DOT source matches ``mx.viz.plot_network`` (lines below were printed by
MXNet 1.9.1 for the same files), edges carry full shapes, and the output formats work."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvcli.errors import GraphvizMissingError, SymbolError
from kvcli.mx import sym
from kvcli.symbol.graph import load_file
from kvcli.symbol.render import PALETTE, to_digraph, write
from kvcli.symbol.shapes import infer_shapes

from .conftest import needs_dot

# Node lines of MXNet 1.9.1's plot_network(mx.sym.load(...)).source
MXNET_LENET_LINES = [
    'data [label=data fillcolor="#8dd3c7" fixedsize=true height=0.8034 shape=oval style=filled width=1.3]',
    'conv1 [label="Convolution\n5x5/1, 20" fillcolor="#fb8072" fixedsize=true height=0.8034 shape=box style=filled width=1.3]',
    'activation0 [label="Activation\ntanh" fillcolor="#ffffb3" fixedsize=true height=0.8034 shape=box style=filled width=1.3]',
    'pooling0 [label="Pooling\nmax, 2x2/2x2" fillcolor="#80b1d3" fixedsize=true height=0.8034 shape=box style=filled width=1.3]',
    'flatten0 [label=flatten0 fillcolor="#fdb462" fixedsize=true height=0.8034 shape=box style=filled width=1.3]',
    'fc1 [label="FullyConnected\n500" fillcolor="#fb8072" fixedsize=true height=0.8034 shape=box style=filled width=1.3]',
    'fc1 -> flatten0 [label="" arrowtail=open dir=back]',
]
MXNET_RESNET_LINES = [
    'bn_data [label=bn_data fillcolor="#bebada" fixedsize=true height=0.8034 shape=box style=filled width=1.3]',
    'conv0 [label="Convolution\n7x7/2x2, 64" fillcolor="#fb8072" fixedsize=true height=0.8034 shape=box style=filled width=1.3]',
    'relu0 [label="Activation\nrelu" fillcolor="#ffffb3" fixedsize=true height=0.8034 shape=box style=filled width=1.3]',
]


def lines(source: str) -> set[str]:
    return {line.strip() for line in source.split("\n\t")}


def test_lenet_dot_lines_equal_mxnet(mxnet_models: Path) -> None:
    source = to_digraph(load_file(mxnet_models / "lenet-symbol.json")).source
    assert set(MXNET_LENET_LINES) <= lines(source)
    assert "_weight" not in source and "_bias" not in source  # hidden by default


def test_resnet_dot_lines_equal_mxnet(models: Path) -> None:
    source = to_digraph(load_file(models / "mxnet_v1.3_resnet50_attrs.json")).source
    assert set(MXNET_RESNET_LINES) <= lines(source)
    assert "_moving_mean" not in source


def test_edges_show_full_shapes(mxnet_models: Path) -> None:
    graph = load_file(mxnet_models / "lenet-symbol.json")
    source = to_digraph(graph, infer_shapes(graph, {"data": (32, 1, 28, 28)})).source
    assert 'conv1 -> data [label="32x1x28x28" arrowtail=open dir=back]' in source
    assert 'fc1 -> flatten0 [label="32x800" arrowtail=open dir=back]' in source
    assert 'softmax -> softmax_label [label=32 arrowtail=open dir=back]' in source


def test_multi_output_edges_use_their_own_output(models: Path) -> None:
    # MXNet labels every edge of a multi-output node with its *last* output; we use the
    # output actually read: SSD's MultiBoxTarget feeds loc (29232) and cls (7308) targets.
    graph = load_file(models / "mxnet_v0.9_ssd300_vgg16_attr.json")
    source = to_digraph(graph, infer_shapes(graph, {"data": (1, 3, 300, 300), "label": (1, 58, 6)})).source
    assert '-> multibox_target [label="1x29232"' in source
    assert 'cls_prob -> multibox_target [label="1x7308"' in source


def test_show_weights_draws_them_as_inputs() -> None:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc")
    source = to_digraph(net.to_graph(), hide_weights=False).source
    assert f'fc_weight [label=fc_weight fillcolor="{PALETTE[0]}"' in source and "shape=oval" in source
    assert "fc -> fc_weight" in source


def test_rankdir_title_and_odd_names() -> None:
    a = sym.Variable("a:b")  # ':' would be a graphviz port: it gets a safe id
    net = sym.relu(sym.Variable("x y") + sym.Variable("ñandú\\z"), name="out put") * a
    source = to_digraph(net.to_graph(), rankdir="LR", caption="My \"net\"").source
    assert "rankdir=LR" in source
    assert 'label="My \\"net\\""' in source
    assert '"x y" [label="x y"' in source
    assert 'label="ñandú\\\\z"' in source  # a backslash stays literal
    assert 'label="a:b"' in source and '"a:b"' not in source.split("label=")[0]


def test_colours_by_kind() -> None:
    x = sym.Variable("x")
    net = sym.Concat(sym.BatchNorm(x, name="bn"), sym.Pooling(x, kernel=(2, 2), pool_type="avg", name="pool"),
                     name="cat")
    net = sym.LeakyReLU(sym.Embedding(net, input_dim=3, output_dim=2, name="emb"), name="lrelu")
    source = to_digraph(net.to_graph()).source
    expected = {"bn": PALETTE[3], "pool": PALETTE[4], "cat": PALETTE[5], "emb": PALETTE[7], "lrelu": PALETTE[2]}
    for name, colour in expected.items():
        assert any(line.startswith(f"{name} [") and f'fillcolor="{colour}"' in line for line in lines(source)), name
    assert 'lrelu [label="LeakyReLU\nLeaky"' in source


@needs_dot
@pytest.mark.parametrize("ext,magic", [(".svg", b"<?xml"), (".pdf", b"%PDF"), (".png", b"\x89PNG"),
                                       (".dot", b"digraph")])
def test_formats(tmp_path: Path, ext: str, magic: bytes) -> None:
    dot = to_digraph(sym.relu(sym.Variable("sum_ reducción"), name="r").to_graph())
    out = write(dot, tmp_path / f"g{ext}")
    assert out.read_bytes().startswith(magic)


@needs_dot
def test_svg_keeps_non_ascii_names(tmp_path: Path) -> None:
    dot = to_digraph(sym.relu(sym.Variable("x"), name="sum_ reducción").to_graph())
    svg = write(dot, tmp_path / "g.svg").read_text(encoding="utf-8")
    assert "sum_ reducción" in svg


def test_missing_dot_writes_dot_file_and_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVCLI_DOT", str(tmp_path / "no-such-dot"))
    dot = to_digraph(sym.relu(sym.Variable("x")).to_graph())
    with pytest.raises(GraphvizMissingError, match="install graphviz") as error:
        write(dot, tmp_path / "g.svg")
    assert "apt-get install graphviz" in str(error.value)
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    assert not (tmp_path / "g.svg").exists()


def test_unknown_format_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SymbolError, match="unknown output format '.jpg'"):
        write(to_digraph(sym.relu(sym.Variable("x")).to_graph()), tmp_path / "g.jpg")
