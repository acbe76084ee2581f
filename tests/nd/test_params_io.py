"""``nd.save`` / ``nd.load`` in MXNet's ``.params`` format, both directions, without pickle.

Files in tests/data/mxnet_params/ were written by real MXNet 1.9.1's ``nd.save``
(tests/data/make_mxnet_nd_reference.py); kvcli must read them to the same names and values,
and write the very same bytes for the same arrays.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli.mx as mx
from kvcli.mx.ndarray import io as ndarray_io
from kvcli.mx import nd
from kvcli.errors import ParamsFileError

from .conftest import PARAMS, load_reference

REF = load_reference()


def _expected(desc: dict[str, Any]) -> np.ndarray:
    values = [float(v) if isinstance(v, str) else v for v in desc["values"]]
    return np.array(values, dtype=desc["dtype"]).reshape(desc["shape"])


def _check(got: nd.NDArray, desc: dict[str, Any]) -> None:
    assert isinstance(got, nd.NDArray)
    np.testing.assert_array_equal(got.asnumpy(), _expected(desc))
    assert got.asnumpy().dtype == np.dtype(desc["dtype"]) and got.shape == tuple(desc["shape"])


@pytest.mark.parametrize("name", sorted(REF["params"]))
def test_files_written_by_mxnet_load_with_equal_names_and_values(name: str) -> None:
    desc = REF["params"][name]
    loaded = nd.load(str(PARAMS / name))
    if desc["kind"] == "dict":
        assert isinstance(loaded, dict) and list(loaded) == desc["order"]
        for key, array in loaded.items():
            _check(array, desc["arrays"][key])
    else:
        assert isinstance(loaded, list) and len(loaded) == len(desc["arrays"])
        for array, want in zip(loaded, desc["arrays"]):
            _check(array, want)
    contexts = [str(a.context) for a in (loaded.values() if isinstance(loaded, dict) else loaded)]
    assert contexts == desc.get("contexts", contexts)  # MXNet loads cpu(i) arrays onto cpu(0)


def _rebuild(name: str) -> Any:
    """The arrays the generator saved for ``name``, rebuilt in kvcli from MXNet's read-back."""
    desc = REF["params"][name]
    if desc["kind"] == "dict":
        return {k: nd.array(_expected(d), dtype=d["dtype"]) for k, d in desc["arrays"].items()}
    return [nd.array(_expected(d), dtype=d["dtype"]) for d in desc["arrays"]]


@pytest.mark.parametrize("name", [n for n in sorted(REF["params"]) if n not in ("np_shape_v3.params", "on_cpu3.params")])
def test_kvcli_writes_the_bytes_mxnet_writes(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    nd.save(str(out), _rebuild(name))
    assert out.read_bytes() == (PARAMS / name).read_bytes()


def test_context_is_written_as_mxnet_does(tmp_path: Path) -> None:
    nd.save(str(tmp_path / "c.params"), [nd.array([1.0, 2.0], ctx=mx.cpu(3))])
    assert (tmp_path / "c.params").read_bytes() == (PARAMS / "on_cpu3.params").read_bytes()


def test_single_array_and_round_trip_of_every_dtype(tmp_path: Path) -> None:
    arrays = {str(d): nd.array(np.arange(6).reshape(2, 3) % 2, dtype=d) for d in ndarray_io.FLAG_OF_DTYPE}
    nd.save(tmp_path / "all.params", arrays)
    back = nd.load(str(tmp_path / "all.params"))
    assert list(back) == list(arrays)
    for key, array in arrays.items():
        assert back[key].dtype == array.dtype
        np.testing.assert_array_equal(back[key].asnumpy(), array.asnumpy())
    nd.save(str(tmp_path / "one.params"), nd.ones((2,)))
    assert [a.tolist() for a in nd.load(str(tmp_path / "one.params"))] == [[1.0, 1.0]]


def test_gpu_arrays_come_back_on_their_gpu(tmp_path: Path) -> None:
    nd.save(str(tmp_path / "g.params"), {"w": nd.ones((2,), ctx=mx.gpu(1))})
    assert nd.load(str(tmp_path / "g.params"))["w"].context == mx.gpu(1)


def test_loaded_arrays_are_writable_copies() -> None:
    loaded = nd.load(str(PARAMS / "list.params"))
    loaded[0][:] = 5
    assert loaded[0].tolist() == [5.0, 5.0]


def test_load_frombuffer_equals_load() -> None:
    raw = (PARAMS / "dict_mixed.params").read_bytes()
    a, b = nd.load_frombuffer(raw), nd.load(str(PARAMS / "dict_mixed.params"))
    assert list(a) == list(b) and all(np.array_equal(a[k].asnumpy(), b[k].asnumpy()) for k in a)


def _legacy_file(array_records: list[bytes]) -> bytes:
    return struct.pack("<QQQ", 0x112, 0, len(array_records)) + b"".join(array_records) + struct.pack("<Q", 0)


def test_old_formats_v1_and_first_are_read() -> None:
    values = np.array([[1.5, -2.0]], np.float32)
    body = struct.pack("<iii", 1, 0, 0) + values.tobytes()
    v1 = struct.pack("<Ii2q", 0xF993FAC8, 2, 1, 2) + body
    first = struct.pack("<I2I", 2, 1, 2) + body  # magic = ndim, u32 dims
    for record in (v1, first):
        (got,) = ndarray_io.loads(_legacy_file([record]))
        np.testing.assert_array_equal(got.asnumpy(), values)


# ------------------------------------------------------------------ damaged input
GOOD = (PARAMS / "dict_mixed.params").read_bytes()


@pytest.mark.parametrize("cut", [0, 4, 8, 20, 30, 60, len(GOOD) - 1])
def test_truncated_files_are_one_clear_error(cut: int) -> None:
    with pytest.raises(ParamsFileError, match="truncated"):
        ndarray_io.loads(GOOD[:cut], "w.params")


@pytest.mark.parametrize(
    ("patch", "match"),
    [
        ((0, struct.pack("<Q", 0x113)), "header is 0x113"),
        ((16, struct.pack("<Q", 10**15)), "1000000000000000 arrays claimed"),
        ((28, struct.pack("<i", 9)), "has unknown storage type 9"),
        ((28, struct.pack("<i", 1)), "array 0 has an unknown device"),
        ((32, struct.pack("<i", 2**30)), "claims 1073741824 dimensions"),
        ((36, struct.pack("<q", 2**40)), "truncated"),  # a huge dimension: refused before allocating
        ((36, struct.pack("<q", -5)), "negative dimension"),
        ((52, struct.pack("<i", 4)), "unknown device"),
        ((60, struct.pack("<i", 12)), "type flag 12"),
    ],
)
def test_damaged_fields_are_named(patch: tuple[int, bytes], match: str) -> None:
    offset, raw = patch
    damaged = GOOD[:offset] + raw + GOOD[offset + len(raw):]
    with pytest.raises(ParamsFileError, match=match):
        ndarray_io.loads(damaged, "w.params")


def test_name_count_must_match_and_names_must_be_utf8() -> None:
    raw = (PARAMS / "unicode_names.params").read_bytes()
    names_at = len(raw) - (8 + 8 + len("größe".encode()) + 8)  # count, then 2 x (length, bytes)
    assert raw[names_at:names_at + 8] == struct.pack("<Q", 2)
    with pytest.raises(ParamsFileError, match="3 names for 2 arrays"):
        ndarray_io.loads(raw[:names_at] + struct.pack("<Q", 3) + raw[names_at + 8:])
    bad = raw.replace("größe".encode(), b"gr\xff\xfee" + b"x")
    with pytest.raises(ParamsFileError, match="not UTF-8"):
        ndarray_io.loads(bad)


def test_missing_file_and_not_a_params_file(tmp_path: Path) -> None:
    with pytest.raises(ParamsFileError, match="cannot read"):
        nd.load(str(tmp_path / "nope.params"))
    (tmp_path / "p.pkl").write_bytes(b"\x80\x04K\x01.")  # a pickle is not accepted
    with pytest.raises(ParamsFileError, match="truncated|header"):
        nd.load(str(tmp_path / "p.pkl"))


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({1: nd.ones(1)}, "names must be str"),
        ([nd.ones(1), "x"], "array 1 is a str"),
        (nd.array(np.array(2.0)), "0-d"),
        ([nd.ones(2).astype("uint16")], "dtype uint16"),
        (42, "not a int"),
    ],
)
def test_unsavable_data_is_refused_and_no_file_is_written(data: Any, match: str, tmp_path: Path) -> None:
    with pytest.raises(ParamsFileError, match=match):
        nd.save(str(tmp_path / "x.params"), data)
    assert list(tmp_path.iterdir()) == []


def test_save_gives_a_plain_files_permissions_and_replaces_whole(tmp_path: Path) -> None:
    """nd.save writes as open() would (0666 less the umask), through a temporary file: a
    save that fails leaves the old file and no temporary one."""
    import os

    path = tmp_path / "w.params"
    old = os.umask(0o022)
    try:
        nd.save(str(path), {"w": nd.ones(3)})
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644
    with pytest.raises(ParamsFileError):
        nd.save(str(path), {"w": nd.array([]), "bad": object()})  # refused before the file is touched
    assert nd.load(str(path))["w"].asnumpy().tolist() == [1, 1, 1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.params"]
