"""A checkpoint moves into a session and back as bytes: ``kvcli load-params`` and
``kvcli save-params`` run with numpy unimportable (importing it was a quarter of a load's
time), and what they move is bit for bit what a path through numpy gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kvcli.arrays import mxparams
from kvcli.session import Session

#: Runs the console script's ``main`` with ``import numpy`` failing, as a machine without it.
NO_NUMPY = (
    "import sys; sys.modules['numpy'] = None\n"
    "from kvcli.cli.app import main\n"
    "sys.argv = ['kvcli', *sys.argv[1:]]\n"
    "main()\n"
)


def _kvcli_without_numpy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", NO_NUMPY, *args], capture_output=True, text=True, timeout=120)


def _random_checkpoint(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Arrays of every dtype MXNet saves, small (held in a row) and big (a file), named as
    ``save_checkpoint`` names them."""
    arrays: dict[str, np.ndarray] = {}
    for i in range(24):
        dtype = np.dtype(str(rng.choice(list(mxparams.FLAG_OF_DTYPE))))
        ndim = int(rng.integers(1, 5))
        big = rng.random() < 0.3
        shape = tuple(int(n) for n in rng.integers(1, 40 if big else 6, size=ndim))
        if dtype == np.bool_:
            value = rng.random(shape) < 0.5
        elif dtype.kind == "f":
            value = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4)).astype(dtype)
        else:
            info = np.iinfo(dtype)
            value = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        arrays[f"{'aux' if i % 5 == 0 else 'arg'}:layer{i}_{dtype.name}"] = value
    return arrays


@pytest.mark.parametrize("seed", range(3))
def test_load_and_save_params_run_without_numpy(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    arrays = _random_checkpoint(rng)
    source = tmp_path / "model-0000.params"
    mxparams.save(source, list(arrays.values()), list(arrays))
    home = tmp_path / "home"

    loaded = _kvcli_without_numpy("--home", str(home), "load-params", str(source))
    assert loaded.returncode == 0, loaded.stderr
    assert f"loaded {len(arrays)} keys" in loaded.stderr  # a report, not data: on stderr
    saved = _kvcli_without_numpy("--home", str(home), "save-params", str(tmp_path / "out.params"))
    assert saved.returncode == 0, saved.stderr

    # the same names, dtypes, shapes and bits, in the same order: the same file
    assert (tmp_path / "out.params").read_bytes() == source.read_bytes()
    session = Session("default", home=home)
    values = dict((str(entry.key), value) for entry, value in session.snapshot())
    assert list(values) == list(arrays)
    for name, value in arrays.items():
        assert values[name].dtype == value.dtype and values[name].shape == value.shape
        assert values[name].tobytes() == value.tobytes(), name


def test_a_session_value_pushed_through_numpy_saves_as_numpy_wrote_it(tmp_path: Path) -> None:
    """save-params copies bytes of values kvcli wrote with numpy (a push) as it copies those
    of a load: the file equals mxparams.save of the same arrays."""
    session = Session("default", home=tmp_path / "home")
    small, big = np.arange(6, dtype=np.int64).reshape(2, 3), np.linspace(-1, 1, 40_000, dtype=np.float32)
    session.init(["a", "b"], [small, big])
    session.push(["a", "b"], [small * 3, big[::-1].copy()])  # assign: the pushed value is stored
    saved = _kvcli_without_numpy("--home", str(tmp_path / "home"), "save-params", str(tmp_path / "out.params"))
    assert saved.returncode == 0, saved.stderr
    expected = tmp_path / "expected.params"
    mxparams.save(expected, [small * 3, big[::-1].copy()], ["a", "b"])
    assert (tmp_path / "out.params").read_bytes() == expected.read_bytes()
