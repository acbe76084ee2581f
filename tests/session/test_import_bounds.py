"""Issue 32 item 4: an import is bounded as a push is. A value over ``KVCLI_MAX_ELEMENTS``
(a 16 KiB export holding a sparse 2 GiB value) is refused before a byte of it is copied;
each file is read once (a file swapped after it was checked never lands); a FIFO or device
in place of a file is refused without waiting; an updater that does not parse is refused;
and no control or bidi character of an export reaches the terminal."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kvcli.errors import SessionError
from kvcli.session import Session
from kvcli.session.names import DATA, MANIFEST
from tests.runner import run_kvcli

pytestmark = pytest.mark.timeout(120)
BIG = 2048  # float32 elements: a value kept in a file (over INLINE_BYTES)


def export(tmp_path: Path, **values: np.ndarray) -> Path:
    with Session("source", tmp_path / "home") as session:
        session.init(list(values), list(values.values()))
        return session.export(tmp_path / "export")


def target(tmp_path: Path) -> dict[str, Any]:
    """The session an import goes into: one key of its own; returns what it holds."""
    with Session("target", tmp_path / "home") as session:
        session.init(["mine"], [np.full(3, 7, np.float32)])
        return {"keys": session.keys(), "files": sorted(os.listdir(session.path / DATA))}


def unchanged(tmp_path: Path, before: dict[str, Any]) -> None:
    with Session("target", tmp_path / "home") as session:
        assert session.keys() == before["keys"] and session.pull(["mine"])[0][0].tolist() == [7, 7, 7]
        assert sorted(os.listdir(session.path / DATA)) == before["files"]  # nothing staged is left


def manifest_of(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / MANIFEST).read_text()))


def value_file(folder: Path, key: str) -> Path:
    entry = next(e for e in manifest_of(folder)["keys"] if e["key"] == key)
    return folder / DATA / entry["file"]


def test_a_sparse_value_over_the_element_limit_is_refused_before_it_is_copied(tmp_path: Path) -> None:
    folder = export(tmp_path, w=np.zeros(4, np.float32))
    data = manifest_of(folder)
    data["keys"][0]["shape"] = [1 << 29]  # 2 GiB of float32 ...
    (folder / MANIFEST).write_text(json.dumps(data))
    path = folder / DATA / data["keys"][0]["file"]
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1 << 29, np.float32)[:0].reshape(0))
    with open(path, "wb") as handle:  # ... in a sparse file: the export takes a few KiB of disk
        np.lib.format.write_array_header_1_0(handle, {**header, "shape": (1 << 29,)})
        handle.truncate(handle.tell() + (1 << 31))
    assert sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file()) < 64 << 10
    before = target(tmp_path)
    with Session("target", tmp_path / "home") as session:
        with pytest.raises(SessionError, match=r"cannot be imported: key 'w' holds 536,870,912 elements \(536870912,\), "
                                               r"more than the limit of 134,217,728 \(set KVCLI_MAX_ELEMENTS"):
            session.import_(folder)
    unchanged(tmp_path, before)
    done = run_kvcli("--session", "target", "import", str(folder), "--yes", home=tmp_path / "home",
                     env={"KVCLI_MAX_ELEMENTS": "1000"})
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "more than the limit of 1,000" in done.stderr


def test_a_value_file_swapped_after_the_check_never_lands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The old import read each file to check it, then opened it again by name to copy it:
    a file swapped in between (here: a pickle) landed unchecked. Now the one file opened is
    the one copied and checked."""
    good = np.arange(BIG, dtype=np.float32)
    folder = export(tmp_path, w=good)
    path = value_file(folder, "w")
    evil = folder / "evil.npy"
    np.save(evil, np.array([{"code": "runs"}], dtype=object), allow_pickle=True)
    real_open = os.open
    opened: list[str] = []

    def swapping_open(name: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        fd = real_open(name, flags, *args, **kwargs)
        if os.fspath(name) == str(path):
            opened.append(str(name))
            if len(opened) == 1:
                os.replace(evil, path)  # right after the first open: an open file keeps the good one
        return fd

    monkeypatch.setattr(os, "open", swapping_open)
    with Session("target", tmp_path / "home") as session:
        session.import_(folder)
        monkeypatch.setattr(os, "open", real_open)
        assert session.pull(["w"])[0][0].tolist() == good.tolist()  # the bytes that were checked
    assert len(opened) == 1  # read once


def test_a_value_file_bigger_than_its_shape_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    folder = export(tmp_path, w=np.arange(BIG, dtype=np.float32))
    with open(value_file(folder, "w"), "ab") as handle:
        handle.truncate(1 << 32)  # 4 GiB, sparse
    before = target(tmp_path)
    started = time.monotonic()
    with Session("target", tmp_path / "home") as session:
        with pytest.raises(SessionError, match=r"cannot be imported: the value of key 'w': cannot copy .* holds "
                                               r"4,294,967,296 bytes, more than the 73,744 it may"):
            session.import_(folder)
    assert time.monotonic() - started < 10
    unchanged(tmp_path, before)


def _fifo_in_place_of(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize("which", ["manifest", "value", "state"])
def test_a_fifo_in_an_export_is_refused_without_waiting(tmp_path: Path, which: str) -> None:
    with Session("source", tmp_path / "home") as session:
        session.init(["w"], [np.ones(BIG, np.float32)])
        session.set_updater("sgd:lr=0.1,momentum=0.9")
        session.push(["w"], [np.ones(BIG, np.float32)])
        folder = session.export(tmp_path / "export")
    data = manifest_of(folder)
    path = {"manifest": folder / MANIFEST, "value": folder / DATA / data["keys"][0]["file"],
            "state": folder / DATA / str(data["optimizer_state"])}[which]
    _fifo_in_place_of(path)
    before = target(tmp_path)
    outcome: dict[str, BaseException] = {}

    def attempt() -> None:
        try:
            with Session("target", tmp_path / "home") as session:
                session.import_(folder)
        except BaseException as error:  # noqa: BLE001 - examined below
            outcome["error"] = error

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():  # the old code waited for a writer for ever: unblock it
        with open(path, "wb"):
            pass
        worker.join(20)
        pytest.fail(f"import waited on the FIFO {which}")
    error = outcome.get("error")
    assert isinstance(error, SessionError) and "not a regular file" in str(error), error
    assert "\n" not in str(error)
    unchanged(tmp_path, before)


@pytest.mark.parametrize("updater, message", [
    ("sgd:lr=banana", r"its updater 'sgd:lr=banana' is not valid"),
    ("teleport:lr=1", r"its updater 'teleport:lr=1' is not valid .*'teleport' is not an updater"),
])
def test_an_updater_that_does_not_parse_is_refused(tmp_path: Path, updater: str, message: str) -> None:
    folder = export(tmp_path, w=np.ones(3, np.float32))
    data = manifest_of(folder)
    data["updater"] = updater
    (folder / MANIFEST).write_text(json.dumps(data))
    before = target(tmp_path)
    with Session("target", tmp_path / "home") as session:
        with pytest.raises(SessionError, match=rf"cannot be imported: {message}.*; nothing was changed"):
            session.import_(folder)
    unchanged(tmp_path, before)


def test_an_adopted_updater_is_the_parsers_spelling(tmp_path: Path) -> None:
    folder = export(tmp_path, w=np.ones(3, np.float32))
    data = manifest_of(folder)
    data["updater"] = "  SGD:lr=0.5 "
    (folder / MANIFEST).write_text(json.dumps(data))
    with Session("target", tmp_path / "home") as session:
        assert session.import_(folder).updater == "sgd:lr=0.5"


RAW = ("\x1b]0;pwned\x07", "\u202e", "\x9b31m", "\x7f")


def test_control_and_bidi_characters_of_an_export_never_reach_the_terminal(tmp_path: Path) -> None:
    folder = export(tmp_path, w=np.ones(3, np.float32))
    data = manifest_of(folder)
    data["updater"] = "python:/tmp/\u202etxt.py\x7f\x9b31m:f"  # dropped, and said so
    (folder / MANIFEST).write_text(json.dumps(data, ensure_ascii=False))
    done = run_kvcli("--session", "target", "import", str(folder), home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "was not adopted" in done.stderr and "\\u202etxt.py\\x7f\\x9b31m" in done.stderr
    assert not any(raw in done.stdout + done.stderr for raw in RAW)
    data["updater"] = "sgd:lr=0.1\u202e"
    (folder / MANIFEST).write_text(json.dumps(data, ensure_ascii=False))
    done = run_kvcli("--session", "target", "import", str(folder), "--yes", home=tmp_path / "home")
    assert done.returncode == 1 and "is not valid" in done.stderr
    assert not any(raw in done.stdout + done.stderr for raw in RAW)
