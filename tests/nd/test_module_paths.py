"""The module paths MXNet code imports, and the errors it catches."""

from __future__ import annotations

import importlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import kvcli
import kvcli.mx as mx
from kvcli import errors


@pytest.mark.parametrize(
    ("path", "same_as"),
    [
        ("kvcli.mx.kvstore", "kvcli.mx.kvstore"),
        ("kvcli.mx.ndarray", "kvcli.mx.ndarray"),
        ("kvcli.mx.optimizer", "kvcli.mx.optimizer"),
    ],
)
def test_mxnet_module_paths_are_the_kvcli_modules(path: str, same_as: str) -> None:
    assert importlib.import_module(path) is importlib.import_module(same_as)
    assert getattr(mx, path.rsplit(".", 1)[1]) is importlib.import_module(same_as)


@pytest.mark.parametrize(("path", "source"), [("kvcli.mx.symbol", "kvcli.symbol.build"),
                                              ("kvcli.mx.visualization", "kvcli.symbol.viz")])
def test_mx_symbol_and_visualization_give_the_kvcli_functions(path: str, source: str) -> None:
    """Real modules (no sys.modules replacement) whose every public name is the kvcli one."""
    module, real = importlib.import_module(path), importlib.import_module(source)
    assert module is not real and module.__all__ == real.__all__ and len(real.__all__) >= 2
    assert all(getattr(module, name) is getattr(real, name) for name in real.__all__)
    assert getattr(mx, path.rsplit(".", 1)[1]) is module


def test_kv_is_an_attribute_not_a_module_path() -> None:
    """As in MXNet 1.9.1: ``mx.kv`` is ``mx.kvstore``, but ``import mxnet.kv`` fails."""
    assert mx.kv is importlib.import_module("kvcli.mx.kvstore")
    with pytest.raises(ModuleNotFoundError, match="kvcli.mx.kv"):
        importlib.import_module("kvcli.mx.kv")


def test_attribute_aliases() -> None:
    assert mx.kvstore is mx.kv and mx.ndarray is mx.nd and mx.sym is mx.symbol and mx.viz is mx.visualization
    assert mx.kvstore.create is mx.kv.create and mx.kvstore.KVStore is mx.kv.KVStore
    assert mx.nd.random is mx.ndarray.random and mx.random.seed is mx.nd.random.seed
    from kvcli.mx.ndarray import random  # `from mxnet.ndarray import random`

    assert random.uniform is mx.random.uniform
    assert mx.context.cpu is mx.cpu and mx.context.Context is mx.Context
    assert mx.test_utils.assert_almost_equal is importlib.import_module("kvcli.mx.test_utils").assert_almost_equal


def test_every_kvcli_error_is_an_mxnet_error() -> None:
    from kvcli.mx.base import MXNetError

    assert MXNetError is mx.MXNetError and issubclass(MXNetError, RuntimeError)
    # kvcli's internal problems and its "stdout reader left" signal are caught inside kvcli
    internal = {errors.AttrError, errors.NpyError, errors.ManifestProblem, errors.ProtocolError, errors.StdoutClosed}
    classes = [c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, Exception) and c not in internal]
    assert len(classes) > 10 and all(issubclass(c, MXNetError) for c in classes)
    with pytest.raises(MXNetError):
        mx.nd.ones(2) + mx.nd.ones(2, dtype="int32")
    with pytest.raises(MXNetError):
        with kvcli.create("local") as kv:
            kv.pull(99)


def test_context_manager_sets_the_default_per_thread() -> None:
    assert mx.current_context() == mx.cpu(0)
    with mx.gpu(2) as ctx:
        assert ctx == mx.gpu(2) and mx.current_context() == mx.gpu(2)
        assert mx.nd.zeros((1,)).context == mx.gpu(2)
        seen = []
        thread = threading.Thread(target=lambda: seen.append(mx.current_context()))
        thread.start()
        thread.join()
        assert seen == [mx.cpu(0)]  # other threads keep their own default
        with mx.cpu(1):
            assert mx.nd.array([1]).context == mx.cpu(1)
        assert mx.current_context() == mx.gpu(2)
    assert mx.current_context() == mx.cpu(0)


def test_context_fields_and_bad_type() -> None:
    c = mx.Context(mx.gpu(3))
    assert (c.device_type, c.device_id, c.device_typeid, str(c)) == ("gpu", 3, 2, "gpu(3)")
    assert mx.Context("cpu", 1) == mx.cpu(1) and hash(mx.cpu(1)) == hash(mx.Context("cpu", 1))
    with pytest.raises(ValueError, match="unknown device type 'tpu'"):
        mx.Context("tpu")


def test_assert_almost_equal() -> None:
    a = mx.nd.array([1.0, 2.0])
    mx.test_utils.assert_almost_equal(a, np.array([1.0, 2.0 + 1e-6]))
    with pytest.raises(AssertionError, match="exceeds tolerance"):
        mx.test_utils.assert_almost_equal(a, np.array([1.0, 2.1]))
    with pytest.raises(AssertionError, match="are not equal"):
        mx.test_utils.assert_almost_equal(a, np.array([1.0]), use_broadcast=False)
    assert mx.test_utils.same(a, [1, 2]) and mx.test_utils.default_context() == mx.cpu(0)


def test_importing_kvcli_mx_stays_light() -> None:
    code = ("import sys, kvcli.mx; heavy = [m for m in ('kvcli.symbol.build', 'kvcli.mx.ndarray.io', "
            "'kvcli.mx.ndarray.random', 'graphviz', 'ray', 'kvcli.store.device.store') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_rand_ndarray_and_py_str() -> None:
    mx.random.seed(3)
    a = mx.test_utils.rand_ndarray((400, 50))
    assert a.shape == (400, 50) and a.dtype == np.float32
    assert abs(a.asnumpy().mean()) < 0.02 and abs(a.asnumpy().std() - 1) < 0.02  # standard normal, as MXNet
    assert mx.test_utils.rand_ndarray((2,), dtype="float64").dtype == np.float64
    with pytest.raises(errors.KVCliError, match="unknown storage type 'dense'"):
        mx.test_utils.rand_ndarray((2, 2), stype="dense")
    assert mx.base.py_str(b"caf\xc3\xa9") == "café" and mx.base.py_str("x") == "x"


def test_nd_submodules_import_by_dotted_path() -> None:
    code = (
        "import kvcli.mx.ndarray.random as a, kvcli.mx.ndarray.random as b, kvcli.mx.ndarray.random as real\n"
        "from kvcli.mx.ndarray.random import uniform\n"
        "import kvcli.mx as mx\n"
        "print(a is real, b is real, uniform is real.uniform, mx.nd.random is real, real.__spec__.name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "True", "True", "kvcli.mx.ndarray.random"]
    with pytest.raises(ModuleNotFoundError, match="kvcli.mx.ndarray.nothing"):
        importlib.import_module("kvcli.mx.ndarray.nothing")


@pytest.mark.parametrize("first", ["kvcli.mx.ndarray.functions", "kvcli.mx.ndarray", "kvcli.mx",
                                   "kvcli.mx.ndarray.random", "kvcli.mx.ndarray.sparse"])
def test_nd_functions_are_in_nd_whichever_module_is_imported_first(first: str) -> None:
    """The package assembles nd whichever of its modules is imported first: ``nd.sum``, the
    ``a.sum()`` method and ``'sum'`` in ``nd.__all__``."""
    code = (f"import {first}\nimport kvcli.mx.ndarray as nd\n"
            "print(nd.sum(nd.ones((2, 2)), axis=0).asnumpy().tolist(), nd.ones((2,)).exp().shape, "
            "'sum' in nd.__all__, 'take' in nd.__all__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[2.0, 2.0] (2,) True True"
