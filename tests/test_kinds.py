"""kvcli's numpy-free dtype table and ``.npy`` header writer agree with numpy: the same
item sizes and descrs, every byte order numpy spells read as numpy reads it, and files
numpy loads as the arrays written (random dtypes and shapes)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from kvcli.arrays import kinds, npyio
from kvcli.errors import NpyError


@pytest.mark.parametrize("name", kinds.DTYPES)
def test_each_dtype_is_numpys(name: str) -> None:
    dtype = kinds.BY_NAME[name]
    assert dtype.itemsize == np.dtype(name).itemsize
    assert dtype.little == np.dtype(name).newbyteorder("<").str
    assert str(dtype) == name == np.dtype(dtype.little).name


@pytest.mark.parametrize("name", kinds.DTYPES)
@pytest.mark.parametrize("order", "<>=|")
def test_a_descr_reads_as_numpy_reads_it(name: str, order: str) -> None:
    descr = order + kinds.BY_NAME[name].code
    try:
        numpys = np.dtype(descr)
    except TypeError:  # numpy refuses '|' on a multi-byte type: a file spelling it is numpy's to judge
        assert kinds.from_descr(descr) is None
        return
    found = kinds.from_descr(descr)
    if order == "|" and numpys.itemsize > 1:
        assert found is None
        return
    assert found is not None
    assert found[0].name == numpys.name
    assert found[1] == (numpys.byteorder == ">" or (numpys.byteorder == "=" and not np.little_endian))


@pytest.mark.parametrize("descr", ["float32", "f4", "<U3", "|O", "<c8", [("a", "<f4")], 4, None])
def test_other_descrs_are_left_to_numpy(descr: object) -> None:
    assert kinds.from_descr(descr) is None


@pytest.mark.parametrize("seed", range(5))
def test_written_files_load_in_numpy_as_written(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for i in range(40):
        name = str(rng.choice(kinds.DTYPES))
        shape = tuple(int(n) for n in rng.integers(0 if i % 7 == 0 else 1, 9, size=int(rng.integers(0, 6))))
        order = str(rng.choice(["<", ">"])) if np.dtype(name).itemsize > 1 else "|"
        value = (rng.random(shape) * 100).astype(np.dtype(name).newbyteorder(order))
        path = tmp_path / f"{i}.npy"
        npyio.write_file(path, value)
        raw = path.read_bytes()
        header = npyio.read_header(io.BytesIO(raw))
        assert header.offset % npyio.HEADER_ALIGN == 0 and raw[header.offset - 1:header.offset] == b"\n"
        loaded = np.load(path, allow_pickle=False)
        assert loaded.dtype == value.dtype and loaded.shape == value.shape
        assert np.array_equal(loaded, value)
        back = npyio.read_array(path)
        assert back.dtype.name == name and back.dtype.isnative and np.array_equal(back, value)


def test_a_body_is_written_with_the_header_numpy_reads(tmp_path: Path) -> None:
    value = np.arange(12, dtype="<i8").reshape(3, 4)
    body = npyio.BytesBody(value.tobytes(), kinds.BY_NAME["int64"], (3, 4))
    npyio.write_file(tmp_path / "b.npy", body)
    npyio.write_file(tmp_path / "a.npy", value)
    assert (tmp_path / "b.npy").read_bytes() == (tmp_path / "a.npy").read_bytes()
    assert np.array_equal(np.load(tmp_path / "b.npy"), value)


@pytest.mark.parametrize("shape", [(3, 4), (0,), ()])
def test_a_file_body_gives_the_files_bytes(tmp_path: Path, shape: tuple[int, ...]) -> None:
    value = np.arange(int(np.prod(shape)), dtype="<f8").reshape(shape) / 3
    npyio.write_file(tmp_path / "v.npy", value)
    body = npyio.file_body(tmp_path / "v.npy", "float64", shape)
    assert body.little_bytes() == value.tobytes()
    assert np.array_equal(body.read(), value)
    with open(tmp_path / "copy.bin", "wb") as handle:
        body.write_to(handle)
    assert (tmp_path / "copy.bin").read_bytes() == value.tobytes()


def test_header_named_dtype_still_read_through_numpy(tmp_path: Path) -> None:
    """A hand-written header spelling ``'float32'`` is read (numpy's rules), a string dtype
    refused with the same line as before."""
    for descr, expected in (("'float32'", "float32"), ("'<U3'", None)):
        text = f"{{'descr': {descr}, 'fortran_order': False, 'shape': (2,), }}".encode()
        raw = b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + b"\x00" * 12
        if expected is None:
            with pytest.raises(NpyError, match="holds dtype <U3, which kvcli does not load"):
                npyio.read_header(io.BytesIO(raw))
        else:
            assert npyio.read_header(io.BytesIO(raw)).kind.name == expected
