"""Regressions for the bugs the stress tests found in kvcli (one section per fix).

Each case once escaped as an exception other than a :class:`~kvcli.errors.KVCliError` (a
traceback in the CLI) or allocated what a file or expression asked for.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import KVCliError, ValueLanguageError

from .conftest import assert_one_json_error, assert_one_line_error, run_kvcli

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ values: arange
ARANGE_REFUSED = [
    "arange(0, 1, 5e-324)",  # (stop - start) / step is inf: OverflowError in math.ceil
    "arange(0, 1e308, 1e-308)",
    "arange(10, dtype=bool)",  # numpy: TypeError
    "arange(0, 10**18, 10**17, dtype=int8)",  # numpy: OverflowError
    "arange(300, 301, dtype=uint8)",
]


@pytest.mark.parametrize("value", ARANGE_REFUSED)
def test_arange_errors_are_value_language_errors(value: str) -> None:
    from kvcli.values import evaluate

    with pytest.raises(ValueLanguageError, match="arange"):
        evaluate(value)


@pytest.mark.parametrize("value,expected", [
    ("arange(0, -9.223372036854778e+18)", []),  # numpy: ValueError "Maximum allowed size exceeded"
    ("arange(-3)", []),
    ("arange(2, dtype=bool)", [False, True]),
    ("arange(1, 2, 0.25)", [1.0, 1.25, 1.5, 1.75]),
    ("arange(5, dtype=uint8)", [0, 1, 2, 3, 4]),
])
def test_arange_still_works(value: str, expected: list) -> None:
    from kvcli.values import evaluate

    assert evaluate(value).tolist() == expected


def test_arange_error_through_the_cli(tmp_path: Path) -> None:
    assert_one_line_error(run_kvcli(tmp_path, "init", "k", "arange(0, 1, 5e-324)"), "arange")


# ------------------------------------------------------------------ values: many arrays at once
@pytest.mark.parametrize("value", [
    "[ones(600), ones(600)]", "(ones(600), ones(600))", "[[ones(600)], [ones(600)]]",
    "full(ones(600), ones(600))", "array([ones(600), 1, ones(600)])",
])
def test_items_of_one_list_or_call_share_the_cap(value: str) -> None:
    """Each array under the cap, all of them over it: refused as soon as the sum passes it
    (the arrays are not all allocated first; see test_resource_limits for the CLI proof)."""
    from kvcli.values import evaluate

    with pytest.raises(ValueLanguageError, match="more than 1,000 elements"):
        evaluate(value, limit=1000)


def test_npy_header_is_checked_against_the_data_before_allocating(tmp_path: Path) -> None:
    import io

    from numpy.lib import format as npy

    from kvcli.values import load_npy, load_npy_file

    buffer = io.BytesIO()
    npy.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False, "shape": (2**62, 4)})
    path = tmp_path / "lying.npy"
    path.write_bytes(buffer.getvalue())
    # (2**62, 4) float64 is over 2**62 bytes: refused from the header alone (was OverflowError)
    with pytest.raises(ValueLanguageError, match="impossible shape"):
        load_npy_file(str(path))
    buffer.seek(0)
    with pytest.raises(ValueLanguageError, match="impossible shape"):  # a stream, the same
        load_npy(buffer, "stdin")
    good = np.arange(12, dtype=np.int16).reshape(3, 4)
    for fortran in (False, True):
        np.save(path, np.asfortranarray(good) if fortran else good)
        assert np.array_equal(load_npy_file(str(path)), good)
        assert np.array_equal(load_npy(io.BytesIO(path.read_bytes()), "stdin"), good)


# ------------------------------------------------------------------ symbol: output counts
def one_op_graph(op: str, attrs: dict, index: int = 0) -> str:
    return json.dumps({
        "nodes": [{"op": "null", "name": "data", "inputs": []},
                  {"op": op, "name": "node", "attrs": attrs, "inputs": [[0, 0, 0]]}],
        "heads": [[1, index, 0]],
    })


@pytest.mark.parametrize("op,attrs,index", [
    ("SliceChannel", {"num_outputs": "1000000000"}, 0),  # MemoryError (or an OOM kill)
    ("SliceChannel", {"num_outputs": "1" + "0" * 30}, 0),  # OverflowError
    ("split", {"num_outputs": "-1"}, 0),
    ("SliceChannel", {"num_outputs": "0"}, 0),
    ("MyCustomOp", {}, 10**9),  # an unknown op: the file says how many outputs it has
    ("MyCustomOp", {}, 10**30),
])
def test_symbol_output_counts_are_bounded(op: str, attrs: dict, index: int) -> None:
    from kvcli.errors import SymbolError
    from kvcli.symbol.graph import load_json

    with pytest.raises(SymbolError, match="outputs"):
        load_json(one_op_graph(op, attrs, index), source="case")


def test_symbol_many_outputs_within_the_bound_still_load() -> None:
    from kvcli.symbol.graph import MAX_OUTPUTS, load_json

    graph = load_json(one_op_graph("SliceChannel", {"num_outputs": "64"}, 63))
    assert graph.num_outputs(1) == 64
    graph = load_json(one_op_graph("MyCustomOp", {}, MAX_OUTPUTS - 1))
    assert graph.num_outputs(1) == MAX_OUTPUTS


# ------------------------------------------------------------------ symbol: malformed visible-output attributes
MALFORMED_OUTPUT_ATTRS = [
    ("RNN", {"state_size": "4", "num_layers": "1", "mode": "lstm", "state_outputs": "2"}, (5, 1, 8)),
    ("SliceChannel", {"num_outputs": "(2, 2)"}, (4, 6)),
    ("BatchNorm", {"output_mean_var": "maybe"}, (1, 3, 8, 8)),
]


@pytest.mark.parametrize("op,attrs,shape", MALFORMED_OUTPUT_ATTRS)
def test_summary_of_malformed_output_attributes(op: str, attrs: dict, shape: tuple, tmp_path: Path) -> None:
    """summarize() asked the op table how many outputs a node shows and let its AttrError
    (a ValueError, not a KVCliError) escape: a traceback from `kvcli summary`."""
    from kvcli.symbol.graph import load_json
    from kvcli.symbol.shapes import infer_shapes
    from kvcli.symbol.summary import summarize

    try:
        result = infer_shapes(load_json(one_op_graph(op, attrs)), {"data": shape})
        summarize(result).to_dict()
    except KVCliError:
        pass
    path = tmp_path / "model-symbol.json"
    path.write_text(one_op_graph(op, attrs))
    proc = run_kvcli(tmp_path, "summary", str(path), "--json", "--shape", "data=" + ",".join(map(str, shape)))
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    if proc.returncode != 0:
        assert_one_json_error(proc)
    else:
        json.loads(proc.stdout)
