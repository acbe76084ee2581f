"""Item 3 of issue 15: every input stream is bounded and never hangs; one .npy reader.

``-`` (stdin), ``@file`` and ``@fifo`` are read by :mod:`kvcli.arrays.npyio` within the element cap
of the value language; a header claiming more is refused before the body is read, and a
FIFO or pipe that stays silent is an error after ``KVCLI_STREAM_TIMEOUT`` seconds.
"""

from __future__ import annotations

import importlib
import inspect
import io
import os
import pickle
import threading
from pathlib import Path

import numpy as np
import pytest
from numpy.lib import format as npy

from kvcli.errors import SessionError, ValueLanguageError
from kvcli.values import load_npy, load_npy_file, parse_value


def header_bytes(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    buffer = io.BytesIO()
    npy.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def in_thread(function, timeout: float = 20.0, unblock=None):
    """Run ``function`` in a thread; fail (instead of hanging the suite) if it blocks, after
    ``unblock()`` lets the blocked thread finish."""
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = function()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            box["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    blocked = thread.is_alive()
    if blocked and unblock is not None:
        unblock()
        thread.join(timeout)
    assert not blocked, f"blocked for more than {timeout} s"
    return box


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def test_pipe_with_a_header_claiming_2_to_the_40_elements_is_refused_before_its_body() -> None:
    """A header claiming 2**40 float32 followed by an endless body (was read to MemoryError)."""
    read_fd, write_fd = os.pipe()
    os.write(write_fd, header_bytes((1 << 40,)) + bytes(4096))  # the writer stays open: more would come
    with os.fdopen(read_fd, "rb") as stream:
        try:
            box = in_thread(lambda: load_npy(stream, "standard input"), unblock=lambda: os.close(write_fd))
        finally:
            _close_quietly(write_fd)
    error = box.get("error")
    assert isinstance(error, ValueLanguageError), box
    assert "1,099,511,627,776 elements" in str(error) and "more than the limit" in str(error)


def test_stream_cap_is_kvcli_max_elements(monkeypatch: pytest.MonkeyPatch) -> None:
    data = io.BytesIO()
    np.save(data, np.arange(11, dtype=np.float32))
    monkeypatch.setenv("KVCLI_MAX_ELEMENTS", "10")
    with pytest.raises(ValueLanguageError, match="11 elements .* more than the limit of 10"):
        parse_value("-", stdin=io.BytesIO(data.getvalue()))
    monkeypatch.setenv("KVCLI_MAX_ELEMENTS", "11")
    assert parse_value("-", stdin=io.BytesIO(data.getvalue())).tolist() == list(range(11))


def test_file_over_the_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "w.npy"
    np.save(path, np.ones(100, np.float32))
    monkeypatch.setenv("KVCLI_MAX_ELEMENTS", "99")
    with pytest.raises(ValueLanguageError, match="100 elements"):
        load_npy_file(str(path))


def test_fifo_without_a_writer_times_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``@fifo`` with nobody writing: was a hang in open()."""
    fifo = tmp_path / "in.npy"
    os.mkfifo(fifo)
    monkeypatch.setenv("KVCLI_STREAM_TIMEOUT", "0.3")
    box = in_thread(lambda: load_npy_file(str(fifo)), unblock=lambda: os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)))
    error = box.get("error")
    assert isinstance(error, ValueLanguageError), box
    assert "sent no data for 0.3 s" in str(error) and "KVCLI_STREAM_TIMEOUT" in str(error)


def test_stalled_pipe_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The header arrives, then nothing (the writer stays open): an error, not a hang."""
    monkeypatch.setenv("KVCLI_STREAM_TIMEOUT", "0.3")
    read_fd, write_fd = os.pipe()
    os.write(write_fd, header_bytes((8,)) + bytes(8))
    with os.fdopen(read_fd, "rb") as stream:
        try:
            box = in_thread(lambda: load_npy(stream, "standard input"), unblock=lambda: os.close(write_fd))
        finally:
            _close_quietly(write_fd)
    assert isinstance(box.get("error"), ValueLanguageError) and "sent no data" in str(box["error"]), box


def test_fifo_with_a_writer_is_read_in_full(tmp_path: Path) -> None:
    fifo = tmp_path / "in.npy"
    os.mkfifo(fifo)
    expected = np.arange(300_000, dtype=np.int32).reshape(600, 500)  # bigger than a pipe buffer
    payload = io.BytesIO()
    np.save(payload, expected)

    def write() -> None:
        with open(fifo, "wb") as handle:
            handle.write(payload.getvalue())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    box = in_thread(lambda: load_npy_file(str(fifo)))
    writer.join(5)
    assert np.array_equal(box["value"], expected)


def test_truncated_pipe_is_refused() -> None:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, header_bytes((8,)) + bytes(12))
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as stream:
        with pytest.raises(ValueLanguageError, match="truncated: 12 of 32"):
            load_npy(stream, "standard input")


def test_big_endian_input_is_converted_to_native() -> None:
    data = io.BytesIO()
    np.save(data, np.arange(4, dtype=">i4"))
    array = parse_value("-", stdin=io.BytesIO(data.getvalue()))
    assert array.dtype == np.dtype("int32") and array.dtype.isnative and array.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("payload", [
    pickle.dumps([1, 2, 3]),
    header_bytes((2,), "|O") + pickle.dumps([1, 2]),
    header_bytes((2,), [("a", "<f4")]) + bytes(8),
    header_bytes((2,), "<c8") + bytes(16),
])
def test_one_reader_refuses_the_same_files_everywhere(tmp_path: Path, payload: bytes) -> None:
    """values.load_npy, values.load_npy_file, session.read_npy and session.check_npy are the same
    reader: pickles, objects, structures and complex numbers are refused by all four."""
    from kvcli.session import check_npy, read_npy

    path = tmp_path / ("0" * 32 + ".npy")
    path.write_bytes(payload)
    with pytest.raises(ValueLanguageError):
        load_npy(io.BytesIO(payload), "stdin")
    with pytest.raises(ValueLanguageError):
        load_npy_file(str(path))
    with pytest.raises(SessionError):
        read_npy(path, "float32", (2,))
    with pytest.raises(SessionError):
        check_npy(path, "float32", (2,))


def test_no_module_but_npyio_parses_npy_files() -> None:
    """One source of truth: the value language and the session call kvcli.arrays.npyio, not numpy's loader."""
    import pkgutil

    import kvcli.session as session
    import kvcli.values as values

    modules = [values] + [
        importlib.import_module(f"kvcli.session.{info.name}") for info in pkgutil.iter_modules(session.__path__)
    ]
    assert len(modules) > 5  # the session package's modules, each checked
    for module in modules:
        source = inspect.getsource(module)
        assert "np.load(" not in source and "read_array_header" not in source, module.__name__
