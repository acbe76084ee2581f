"""The ``.params`` codec of the values layer (:mod:`kvcli.arrays.mxparams`) on every file
MXNet 1.9.1 wrote for the tests: scanned without reading values, read to the same bits,
written back byte for byte, and copied into ``.npy`` files without holding arrays."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest

from kvcli.arrays import mxparams, npyio
from kvcli.arrays.csr import CSRParts
from kvcli.arrays.sparse import RowSparse
from kvcli.errors import ParamsFileError

DATA = Path(__file__).resolve().parents[1] / "data"
FILES = sorted([*DATA.glob("mxnet_params/*.params"), *DATA.glob("mxnet_params_sparse/*.params"),
                *DATA.glob("mxnet_params_flow/*.params"), *DATA.glob("mxnet_checkpoint/*.params")])


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_file_mxnet_wrote_is_written_back_byte_for_byte(path: Path) -> None:
    raw = path.read_bytes()
    with mxparams.open_file(path) as params:
        values = [params.value(entry) for entry in params.entries]
        devices = [entry.device for entry in params.entries]
        names = params.names
    in_memory = mxparams.from_bytes(raw, str(path))
    assert [e._replace(offset=0) for e in in_memory.entries] == [e._replace(offset=0) for e in params.entries]
    if path.name == "np_shape_v3.params":  # MXNet wrote it with numpy shape semantics on
        pytest.skip("a v3 record: kvcli writes v2, as MXNet does by default")
    out = io.BytesIO()
    mxparams.dump(out, values, names, devices)
    assert out.getvalue() == raw[:in_memory.end]


def test_values_are_numpy_row_sparse_and_csr() -> None:
    with mxparams.open_file(DATA / "mxnet_params_sparse" / "mixed_dict.params") as params:
        kinds = {name: type(params.value(entry)) for name, entry in params.items()}
    assert set(kinds.values()) == {np.ndarray, RowSparse, CSRParts}


@pytest.mark.parametrize("chunk", [1000, npyio.COPY_CHUNK], ids=["in pieces", "whole"])
def test_a_body_is_copied_into_a_npy_file_bit_for_bit(tmp_path: Path, chunk: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(npyio, "COPY_CHUNK", chunk)
    path = DATA / "mxnet_params_flow" / "dtypes.params"
    with mxparams.open_file(path) as params:
        for name, entry in params.items():
            target = tmp_path / f"{entry.number}.npy"
            npyio.write_file(target, params.body(entry))
            got = np.load(target, allow_pickle=False)
            want = params.array(entry)
            assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes(), name


def test_scanning_reads_headers_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 40 MB file is scanned by reading its headers and names, not its values."""
    path = tmp_path / "big.params"
    mxparams.save(path, [np.zeros((1000, 1000), np.float32)] * 10, [f"arg:w{i}" for i in range(10)])
    read: list[int] = []
    original = mxparams.Reader.read_at

    def counting(self: mxparams.Reader, offset: int, size: int, what: str, into: object = None) -> object:
        read.append(size)
        return original(self, offset, size, what, into)  # type: ignore[arg-type]

    monkeypatch.setattr(mxparams.Reader, "read_at", counting)
    with mxparams.open_file(path) as params:
        assert len(params.entries) == 10 and params.names == [f"arg:w{i}" for i in range(10)]
    assert sum(read) < 12 * mxparams.WINDOW


def test_writing_refuses_before_the_first_byte(tmp_path: Path) -> None:
    path = tmp_path / "x.params"
    path.write_bytes(b"old")
    with pytest.raises(ParamsFileError, match="'b' has dtype uint16, which MXNet cannot store"):
        mxparams.save(path, [np.ones(2, np.float32), np.ones(2, np.uint16)], ["a", "b"])
    with pytest.raises(ParamsFileError, match="is 0-d"):
        mxparams.save(path, [np.array(1, np.float32)], ["a"])
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["x.params"]
