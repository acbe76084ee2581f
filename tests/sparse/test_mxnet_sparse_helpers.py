"""What MXNet's sparse tests and tutorials need around the arrays: the helpers MXNet's
``test_sparse_ndarray.py`` takes from ``from mxnet.test_utils import *`` and ``common``, and
the notebook-style runner of ``tools/mxnet_sparse_tutorials.py``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx import test_utils

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import mxnet_sparse_tutorials  # noqa: E402  (a script folder, not a package)


def test_star_import_gives_what_mxnet_tests_take_from_it() -> None:
    names: dict[str, Any] = {}
    exec("from kvcli.mx.test_utils import *", names)  # noqa: S102 - the import MXNet's test files make
    assert names["mx"] is mx and names["np"] is np and names["Context"] is mx.Context
    assert names["os"].path.join("a", "b") == "a/b"
    assert names["default_dtype"]() is np.float32


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_rand_sparse_ndarray_returns_the_array_and_its_parts(stype: str) -> None:
    np.random.seed(3)
    array, parts = test_utils.rand_sparse_ndarray((40, 7), stype, density=0.25, dtype=np.float64)
    dense = array.asnumpy()
    assert array.stype == stype and array.dtype == np.float64 and dense.shape == (40, 7)
    assert ((dense >= 0) & (dense < 1)).all()  # uniform in [0, 1), as MXNet's
    if stype == "csr":
        assert np.count_nonzero(dense) == int(40 * 7 * 0.25)  # exactly that many positions, as scipy's rand
        indptr, indices, data = (p.asnumpy() for p in parts)
        assert indptr.tolist() == array.indptr.asnumpy().tolist() and len(indices) == len(data) == 70
    else:
        values, rows = parts
        assert rows.tolist() == array.indices.asnumpy().tolist() and values.shape == (len(rows), 7)
        assert 0 < len(rows) < 40
    filled, _ = test_utils.rand_sparse_ndarray((5, 4), stype, density=1, data_init=2.5)
    assert set(np.unique(filled.asnumpy())) == {2.5}


def test_rand_sparse_ndarray_refuses_what_kvcli_does_not_generate() -> None:
    with pytest.raises(mx.base.MXNetError, match="powerlaw"):
        test_utils.rand_sparse_ndarray((4, 4), "csr", 0.5, distribution="powerlaw")
    with pytest.raises(mx.base.MXNetError, match="shuffle_csr_indices"):  # kvcli refuses unsorted columns
        test_utils.rand_sparse_ndarray((4, 4), "csr", 0.5, shuffle_csr_indices=True)


def test_random_seed_seeds_the_block_and_moves_on_after_it() -> None:
    with test_utils.random_seed(7):
        first = (np.random.rand(), mx.nd.random.uniform(shape=(2,)).asnumpy().tolist())
    with test_utils.random_seed(7):
        again = (np.random.rand(), mx.nd.random.uniform(shape=(2,)).asnumpy().tolist())
    assert first == again
    np.random.seed(1)
    with test_utils.random_seed(7):
        pass
    after = np.random.rand()
    np.random.seed(1)
    expected_next_seed = np.random.randint(0, np.iinfo(np.int32).max)  # drawn before the block, as MXNet's
    np.random.seed(expected_next_seed)
    assert after == np.random.rand()


def test_rand_shapes_are_within_their_bounds() -> None:
    np.random.seed(0)
    shapes = [test_utils.rand_shape_2d(3, 4) for _ in range(50)] + [test_utils.rand_shape_3d(2, 2, 2)[:2]]
    assert all(1 <= a <= 3 and 1 <= b <= 4 for a, b in shapes[:-1])
    assert {a for a, _ in shapes[:-1]} == {1, 2, 3}


def test_tutorial_blocks_run_as_notebook_cells() -> None:
    markdown = "text\n```python\nx = 2\nx * 3\n```\nmore\n```python\nprint('p')\n1 / 0\n```\n```python\nx\n```\n"
    blocks = mxnet_sparse_tutorials.python_blocks(markdown)
    assert blocks == ["x = 2\nx * 3\n", "print('p')\n1 / 0\n", "x\n"]
    namespace: dict[str, Any] = {}
    results = [mxnet_sparse_tutorials.run_block(b, namespace) for b in blocks]
    assert results[0] == {"output": "6\n", "error": None}  # the last expression is the cell's output
    assert results[1]["output"] == "p\nZeroDivisionError: division by zero\n"  # a failing cell, then the next
    assert results[2]["output"] == "2\n"  # one namespace for the whole tutorial


def test_tutorial_outputs_compare_line_by_line_without_addresses() -> None:
    report = mxnet_sparse_tutorials.compare(
        "t.md", ["a", "b"],
        [{"output": "same\n<f at 0x7f00aa11>\nx\n"}, {"output": "1\n"}],
        [{"output": "same\n<f at 0x5500bb22>\ny\n"}, {"output": "1\n"}])
    assert [b.equal_lines for b in report.blocks] == [2, 1]
    assert [b.same for b in report.blocks] == [False, True]


def test_nd_slice_of_a_dense_array_is_numpys_selection() -> None:
    values = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    a = mx.nd.array(values)
    np.testing.assert_array_equal(mx.nd.slice(a, begin=(1, -3), end=(None, 4)).asnumpy(), values[1:, -3:4])
    np.testing.assert_array_equal(a.slice(begin=(0,), end=(4,), step=(2,)).asnumpy(), values[0:4:2])
    csr = a.tostype("csr")
    assert csr.slice(begin=(1, 1), end=(3, 3)).stype == "csr"
    with pytest.raises(mx.base.MXNetError, match="select nothing"):  # MXNet makes no empty csr array
        csr[4:]
