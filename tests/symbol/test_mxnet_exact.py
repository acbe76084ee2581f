"""``kvcli.mx.viz`` and ``kvcli.mx.sym`` give MXNet 1.9.1's output exactly, as recorded by
tests/data/make_mxnet_symviz_reference.py in tests/data/mxnet_symviz_reference.json: the DOT
source of plot_network, the print_summary table, infer_shape_partial, infer_type, reprs."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import kvcli.mx as mx

DATA = Path(__file__).resolve().parents[1] / "data"
REF = json.loads((DATA / "mxnet_symviz_reference.json").read_text())


def _symbol(name: str) -> Any:
    return mx.sym.load_json(REF["symbols"][name])


def _tuples(kwargs: dict[str, Any]) -> dict[str, Any]:
    out = dict(kwargs)
    if "shape" in out:
        out["shape"] = {k: tuple(v) for k, v in out["shape"].items()}
    return out


@pytest.mark.parametrize("case", REF["plots"], ids=lambda c: f"{c['symbol']}-{'-'.join(sorted(c['kwargs']))}")
def test_plot_network_source_is_mxnets(case: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dot = mx.viz.plot_network(_symbol(case["symbol"]), **_tuples(case["kwargs"]))
    # The final newline is the graphviz package's (0.8.4, next to the recorded MXNet, omits it;
    # newer versions write it): everything MXNet decides is compared byte for byte.
    assert dot.source.rstrip("\n") == case["source"].rstrip("\n")


def _summary(name: str, shape: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    mx.viz.print_summary(_symbol(name), shape={k: tuple(v) for k, v in shape.items()})
    return capsys.readouterr().out


def _column(text: str) -> list[str]:
    """The Param # column (characters 76..88 of MXNet's default layout) of each layer row."""
    return [line[76:88].strip() for line in text.splitlines()
            if "(" in line[:52] and not line.startswith("Layer (type)")]


@pytest.mark.parametrize("case", [c for c in REF["summaries"] if c["symbol"] in ("lenet", "mini_resnet", "mlp")],
                         ids=lambda c: c["symbol"])
def test_print_summary_is_mxnets(case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    out = _summary(case["symbol"], case["shape"], capsys)
    assert out == case["stdout"]
    assert sum(int(c) for c in _column(out)) == case["params"]  # the column adds up to the total


@pytest.mark.parametrize("case", [c for c in REF["summaries"] if c["symbol"] in ("split", "fc_after_pool")],
                         ids=lambda c: c["symbol"])
def test_print_summary_keeps_the_right_count_where_mxnet_miscounts(
        case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    out = _summary(case["symbol"], case["shape"], capsys)
    ours, theirs = out.splitlines(), case["stdout"].splitlines()
    assert len(ours) == len(theirs)
    differ = [(a, b) for a, b in zip(ours, theirs) if a != b]
    # only the FullyConnected row (MXNet counts its input's channels, not C*H*W or the
    # split's output) and the total differ; the right total is infer_shape's
    assert [a.split("(")[0] for a, _ in differ] == ["fc", "Total params: " + str(case["params"])]
    assert ours[-2] == f"Total params: {case['params']}"
    assert sum(int(c) for c in _column(out)) == case["params"]
    theirs_total = int(theirs[-2].split(": ")[1])
    assert theirs_total != case["params"]
