"""Issue 20, low items: hostile files are one-line errors, never a traceback or a hang.

A manifest whose ``spare`` is another key's file (the next push of the first key wrote over
the second's value), ``.npy`` headers with an empty dimension beside huge ones (numpy's
"array is too big"), ``@/proc/self/mem`` (an OSError), and ``nd.load`` of ``/dev/zero``
(read forever) or of an array with more than 64 dimensions (numpy's ValueError).
"""

from __future__ import annotations

import os
import struct
import subprocess
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import kvcli.mx.ndarray as nd
from kvcli.errors import SessionError, ValueLanguageError, ParamsFileError
from kvcli.session import Session
from kvcli.values import parse_value
from tests.session.legacy import read_manifest, write_legacy
from tests.cli.conftest import KVCLI, kvcli_env
from tests.optim.statefiles import npy_header


def two_keys(tmp_path: Path) -> Session:
    with Session("s", tmp_path / "home") as session:
        session.init(["a", "b"], [np.ones(3, np.float32), np.full(3, 2, np.float32)])
        session.set_updater("sgd:momentum=0.9")
        session.push(["a"], [np.ones(3, np.float32)])
    return session


def edit(session: Session, change: Callable[[dict[str, Any]], None]) -> None:
    data = read_manifest(session.path)
    change(data)
    write_legacy(session.path, data)


def _spare_is_other_value(data: dict[str, Any]) -> None:
    data["keys"][0]["spare"] = data["keys"][1]["file"]


def _two_keys_one_file(data: dict[str, Any]) -> None:
    data["keys"][1]["file"] = data["keys"][0]["file"]


def _residual_is_state(data: dict[str, Any]) -> None:
    data["keys"][0]["residual"] = data["optimizer_state"]


def _spare_is_own_value(data: dict[str, Any]) -> None:
    data["keys"][0]["spare"] = data["keys"][0]["file"]


@pytest.mark.parametrize("change", [_spare_is_other_value, _two_keys_one_file, _residual_is_state, _spare_is_own_value],
                         ids=lambda c: c.__name__.strip("_"))
def test_no_two_places_of_a_manifest_share_a_file(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    session = two_keys(tmp_path)
    edit(session, change)
    files = {path.name: path.read_bytes() for path in (session.path / "data").iterdir()}
    with Session("s", tmp_path / "home") as again:
        with pytest.raises(SessionError, match="each file has one use") as caught:
            again.push(["a"], [np.ones(3, np.float32)])
        assert "\n" not in str(caught.value)
    assert {path.name: path.read_bytes() for path in (session.path / "data").iterdir()} == files


def test_import_refuses_a_manifest_whose_files_cross(tmp_path: Path) -> None:
    session = two_keys(tmp_path)
    session.export(tmp_path / "export")
    data = read_manifest(tmp_path / "export")
    data["keys"][0]["spare"] = data["keys"][1]["file"]
    write_legacy(tmp_path / "export", data)
    with Session("t", tmp_path / "home") as target:
        with pytest.raises(SessionError, match="each file has one use"):
            target.import_(tmp_path / "export")
        assert not target.exists()


@pytest.mark.parametrize("name", ["../../escape.npy", "/etc/passwd", "data/" + "0" * 32 + ".npy", "0" * 32 + ".npy/.."])
def test_no_file_name_escapes_the_session_folder(tmp_path: Path, name: str) -> None:
    session = two_keys(tmp_path)
    edit(session, lambda data: data["keys"][0].update(spare=name))
    with Session("s", tmp_path / "home") as again:
        with pytest.raises(SessionError, match="not a session file name"):
            again.keys()


# ---------------------------------------------------------------------- .npy headers
@pytest.mark.parametrize("shape", [(0, 1 << 62, 1 << 62), (1 << 40, 0, 1 << 40), (0, 1 << 61)])
def test_npy_header_with_an_empty_dimension_beside_huge_ones(tmp_path: Path, shape: tuple[int, ...]) -> None:
    path = tmp_path / "zero.npy"
    path.write_bytes(npy_header(shape))
    with pytest.raises(ValueLanguageError, match="impossible shape") as caught:
        parse_value(f"@{path}")
    assert "\n" not in str(caught.value)


def test_npy_header_with_an_empty_dimension_that_fits_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "empty.npy"
    np.save(path, np.zeros((0, 1 << 20), np.float32))
    assert parse_value(f"@{path}").shape == (0, 1 << 20)


def test_session_file_with_an_impossible_header_is_corrupted_not_a_traceback(tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session:
        session.init(["k"], [np.zeros((2, 2048), np.float32)])  # a value file (a small value has none)
    entry = read_manifest(session.path)["keys"][0]
    (session.path / "data" / entry["file"]).write_bytes(npy_header((0, 1 << 62, 1 << 62), "<f4"))
    with Session("s", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="impossible shape"):
            session.pull(["k"])


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux's /proc")
def test_at_proc_self_mem_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueLanguageError, match="cannot be read"):
        parse_value("@/proc/self/mem")
    done = subprocess.run([str(KVCLI), "init", "k", "@/proc/self/mem"], env=kvcli_env(tmp_path / "home"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "cannot be read" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------- nd.load
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.timeout(60)
def test_nd_load_of_a_device_is_refused_without_reading(device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    with pytest.raises(ParamsFileError, match="not a regular file"):
        nd.load(device)


@pytest.mark.timeout(60)
def test_nd_load_of_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ParamsFileError, match="not a regular file"):
        nd.load(fifo)


def _params(ndim: int, dims: list[int]) -> bytes:
    head = struct.pack("<QQQ", 0x112, 0, 1) + struct.pack("<Iii", 0xF993FAC9, 0, ndim)
    return head + struct.pack(f"<{len(dims)}q", *dims) + struct.pack("<iii", 1, 0, 0) + struct.pack("<Q", 0)


@pytest.mark.parametrize(("blob", "message"), [
    (_params(65, [1] * 65), "claims 65 dimensions"),
    (_params(3, [0, 1 << 62, 1 << 62]), "impossible shape"),
])
def test_nd_load_of_impossible_shapes_is_a_params_error(tmp_path: Path, blob: bytes, message: str) -> None:
    path = tmp_path / "bad.params"
    path.write_bytes(blob)
    with pytest.raises(ParamsFileError, match=message) as caught:
        nd.load(str(path))
    assert "\n" not in str(caught.value)


def test_nd_load_keeps_64_dimensions() -> None:
    from kvcli.mx.ndarray import io as ndarray_io

    loaded = ndarray_io.loads(_params(64, [1] * 64)[:-8] + bytes(4) + struct.pack("<Q", 0))
    assert loaded[0].shape == (1,) * 64


# ---------------------------------------------------------------------- compression residuals
@pytest.mark.parametrize("bomb", [True, False], ids=["zip-bomb", "npy-not-npz"])
def test_residual_files_are_bounded_by_their_key(tmp_path: Path, bomb: bool) -> None:
    """A session's residual .npz is unpacked only up to its key's size (it was np.load)."""
    import zipfile

    from tests.optim.statefiles import npy_bytes

    with Session("c", tmp_path, store_type="device", store_options={"num_devices": 2}) as session:
        session.init(["w"], [np.zeros(4, np.float32)])
        session.set_compression("2bit:threshold=0.5")
        session.push(["w"], [[np.full(4, 0.3, np.float32)] * 2])
        before = session.pull(["w"])[0][0]
    residual = session.path / "data" / read_manifest(session.path)["keys"][0]["residual"]
    residual.unlink()
    if bomb:
        with zipfile.ZipFile(residual, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("arr_0.npy", npy_bytes(np.zeros(4 << 20, np.float32)))
    else:
        residual.write_bytes(npy_bytes(np.zeros(4, np.float32)))
    with Session("c", tmp_path) as session:
        with pytest.raises(SessionError, match="refused before unpacking" if bomb else "is not a .npz archive"):
            session.push(["w"], [[np.full(4, 0.3, np.float32)] * 2])
        assert session.pull(["w"])[0][0].tolist() == before.tolist()
