"""The helpers MXNet's ``test_ndarray.py`` imports (``mx.test_utils``, its ``common`` module,
nose), and the import rewriting ``tools/mxnet_unittests.py`` applies to that file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from kvcli.mx import test_utils

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import mxnet_unittests  # noqa: E402  (a script folder, not a package)


def test_assert_raises_call_and_context_manager_forms() -> None:
    test_utils.assert_raises(ValueError, int, "x")
    with test_utils.assert_raises(KeyError):
        {}["missing"]
    with pytest.raises(AssertionError):
        test_utils.assert_raises(ValueError, int, "3")


def test_temporary_directory_is_removed_after_the_block() -> None:
    with test_utils.TemporaryDirectory(prefix="kvcli_t_") as path:
        assert os.path.isdir(path) and os.path.basename(path).startswith("kvcli_t_")
        Path(path, "f").write_text("x")
    assert not os.path.exists(path)


@pytest.mark.parametrize("axis", [0, 2, (0, 2), [1], None])
@pytest.mark.parametrize("keepdims", [False, True])
def test_np_reduce_matches_numpy(axis: object, keepdims: bool) -> None:
    data = np.arange(24.0).reshape(2, 3, 4)
    expected = np.sum(data, axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keepdims)
    np.testing.assert_array_equal(test_utils.np_reduce(data, axis, keepdims, np.sum), expected)


def test_random_shape_sample_and_arrays() -> None:
    np.random.seed(3)
    shapes = [test_utils.rand_shape_nd(3, dim=4) for _ in range(50)]
    assert all(len(s) == 3 and all(1 <= d <= 4 for d in s) for s in shapes)
    assert any(0 in test_utils.rand_shape_nd(4, dim=1, allow_zero_size=True) for _ in range(50))
    sample = test_utils.random_sample([1, 2, 3, 4], 2)
    assert len(sample) == 2 and set(sample) <= {1, 2, 3, 4}
    with pytest.raises(ValueError):
        test_utils.random_sample([1], 2)
    one = test_utils.random_arrays((2, 3))
    pair = test_utils.random_arrays((2,), ())
    assert one.shape == (2, 3) and one.dtype == np.float32
    assert [p.shape for p in pair] == [(2,), ()] and pair[1].dtype == np.float32


def test_rewrite_binds_mxnet_for_a_missing_submodule_and_placeholders_missing_helpers() -> None:
    source = "import mxnet.autograd\nfrom common import with_seed, models\nx = models.mlp2()\n"
    rewritten = mxnet_unittests.rewrite_imports(source).source
    assert "import kvcli.mx as mxnet\n" in rewritten
    assert "from kvcli.mx.test_utils import with_seed\n" in rewritten
    assert "models = _NotInKvcli('common.models')" in rewritten
    namespace: dict[str, object] = {}
    with pytest.raises(NotImplementedError, match="common.models"):
        exec(rewritten, namespace)  # noqa: S102 - our own fixed source
