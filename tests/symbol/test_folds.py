"""Ideas written once in kvcli.symbol: the box labels (MXNet's and the CLI's from one function)
and the signal handlers of a layout (installed in one place)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from kvcli.symbol.graph import from_dict
from kvcli.symbol.layout import _held_interrupts, signals_as_interrupt
from kvcli.symbol.plan import op_label
from kvcli.symbol.pipeline import visualize
from kvcli.symbol.viz import mxnet_label

from .conftest import SAMPLES, needs_dot


def _node(op: str, **attrs: str):
    doc = {"nodes": [{"op": "null", "name": "data", "inputs": []},
                     {"op": op, "name": "n", "attrs": attrs, "inputs": [[0, 0, 0]]}],
           "heads": [[1, 0, 0]]}
    return from_dict(doc).nodes[-1]


@pytest.mark.parametrize("op, attrs, mxnet, cli", [
    ("Convolution", {"kernel": "(3, 3)", "num_filter": "8", "stride": "(2, 2)"}, "Convolution\n3x3/2x2, 8",
     "Convolution\n3x3/2x2, 8"),
    # a stride with no digits: MXNet prints nothing, the CLI reads it as 1
    ("Convolution", {"kernel": "(3, 3)", "num_filter": "8", "stride": "()"}, "Convolution\n3x3/, 8",
     "Convolution\n3x3/1, 8"),
    # MXNet labels a Deconvolution by name; the CLI as a Convolution
    ("Deconvolution", {"kernel": "(2, 2)", "num_filter": "4"}, "n", "Deconvolution\n2x2/1, 4"),
    # MXNet ignores global_pool and prints the unused kernel
    ("Pooling", {"pool_type": "avg", "kernel": "(7, 7)", "global_pool": "True"}, "Pooling\navg, 7x7/1",
     "Pooling\navg, global"),
    ("Pooling", {"pool_type": "max", "kernel": "(2, 2)", "stride": "(2, 2)"}, "Pooling\nmax, 2x2/2x2",
     "Pooling\nmax, 2x2/2x2"),
    ("FullyConnected", {"num_hidden": "10"}, "FullyConnected\n10", "FullyConnected\n10"),
    ("Activation", {"act_type": "relu"}, "Activation\nrelu", "Activation\nrelu"),
    ("LeakyReLU", {}, "LeakyReLU\nLeaky", "LeakyReLU\nLeaky"),
    ("Flatten", {}, "n", None),
])
def test_mxnet_and_cli_labels_come_from_one_function(op: str, attrs: dict, mxnet: str, cli) -> None:
    node = _node(op, **attrs)
    assert mxnet_label(node) == mxnet
    assert op_label(node) == cli


def test_a_signal_held_while_dot_starts_acts_after_with_the_handlers_restored() -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"), signals_as_interrupt():
        with _held_interrupts():
            os.kill(os.getpid(), signal.SIGTERM)  # held: nothing happens inside the block
            held = True
        held = False  # pragma: no cover - the held SIGTERM raised on leaving the block
    assert held
    assert {sig: signal.getsignal(sig) for sig in before} == before


@needs_dot
def test_the_library_shows_progress_only_through_the_callers_progress(tmp_path: Path, capfd) -> None:
    from contextlib import contextmanager

    shown: list[str] = []

    @contextmanager
    def progress(what: str):
        shown.append(what)
        yield

    done = visualize(SAMPLES / "mlp.json", tmp_path / "m.svg", progress=progress)
    assert done.output == tmp_path / "m.svg" and (tmp_path / "m.svg").read_bytes().startswith(b"<?xml")
    assert shown == ["laying out m.svg with dot"]
    visualize(SAMPLES / "mlp.json", tmp_path / "n.svg")  # no progress: nothing on the terminal
    assert capfd.readouterr().err == ""


def test_an_error_about_a_parameter_names_it_in_python_and_the_cli_names_the_flag(tmp_path: Path) -> None:
    from kvcli.errors import SymbolError

    from .conftest import run_kvcli

    with pytest.raises(SymbolError) as caught:
        visualize(SAMPLES / "mlp.json", tmp_path / "m.dot", focus="nosuch")
    assert str(caught.value) == "focus 'nosuch': no drawn node has that name"
    done = run_kvcli("viz", str(SAMPLES / "mlp.json"), "-o", str(tmp_path / "m.dot"), "--focus", "nosuch")
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["error: --focus 'nosuch': no drawn node has that name"]
    with pytest.raises(SymbolError) as caught:
        visualize(SAMPLES / "mlp.json", tmp_path / "m.dot", shape=["1,2"])
    assert str(caught.value).endswith("shape '1,2' has no NAME=; write NAME=D1,D2,..., e.g. data=1,3,224,224")
    done = run_kvcli("summary", str(SAMPLES / "mlp.json"), "--shape", "1,2")
    assert done.returncode == 1
    assert done.stderr.strip().endswith("--shape '1,2' has no NAME=; write NAME=D1,D2,..., e.g. data=1,3,224,224")


def test_every_parameter_a_library_error_names_is_an_option_of_its_command() -> None:
    """The CLI shows a parameter as ``--`` + its name with dashes (output.flag_for)."""
    from kvcli.cli import table
    from kvcli.cli.output import flag_for

    viz = table.find("viz")
    assert viz is not None
    for param in ("focus", "format", "layout_timeout", "max_nodes", "allow_unknown_ops", "shape", "params", "dtype",
                  "collapse", "depth", "radius", "strict", "full"):
        assert viz.option(flag_for(param)) is not None, param


@needs_dot
def test_every_picture_is_written_one_way_with_a_plain_files_mode(tmp_path: Path) -> None:
    """.svg, .html and .dot all go through osutil.atomic_write: whole or not at all, mode 0666 less
    the umask (the HTML page was 0644 whatever the umask, the .dot file written in place)."""
    old = os.umask(0o027)
    try:
        for name in ("m.svg", "m.html", "m.dot"):
            visualize(SAMPLES / "mlp.json", tmp_path / name)
    finally:
        os.umask(old)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.dot", "m.html", "m.svg"]  # no temporary file left
    assert {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {
        "m.dot": 0o640, "m.html": 0o640, "m.svg": 0o640}
