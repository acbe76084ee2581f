"""The on-disk session: persistence, atomic commits, corruption handling, live resync."""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kvcli
from kvcli.errors import KeyTypeError, SessionError, UnknownKeyError
from kvcli.cli.keys import parse_key, parse_keys
from kvcli.session import Session, check_key
from kvcli.session.db import DB
from kvcli.session.names import INLINE_BYTES
from tests.session.legacy import legacy_form, read_manifest, write_legacy


def open_session(home: Path, name: str = "t", **kwargs) -> Session:
    return Session(name, home, **kwargs)


def pull(session: Session, key) -> np.ndarray:
    return session.pull([key])[0][0]


def test_values_persist_between_sessions(tmp_path: Path) -> None:
    with open_session(tmp_path) as s:
        s.init([3], [np.ones((3, 3), np.float32) * 2])
        s.push([3], [np.ones((3, 3), np.float32) * 8])
    with open_session(tmp_path) as s:
        np.testing.assert_array_equal(pull(s, 3), np.full((3, 3), 8, np.float32))
        assert s.entries()[0].version == 2


def test_updater_persists(tmp_path: Path) -> None:
    with open_session(tmp_path) as s:
        s.init([3], [np.full(2, 4, np.float32)])
        assert s.set_updater("scale-add:2") == "scale-add:2"
    with open_session(tmp_path) as s:
        s.push([3], [np.ones(2, np.float32)])
    with open_session(tmp_path) as s:
        assert pull(s, 3).tolist() == [6.0, 6.0]
        assert s.describe()["updater"] == "scale-add:2"


@pytest.mark.parametrize("spec", ["sgd:lr=0.1,momentum=0.9", "adam:lr=0.01"])
def test_optimizer_state_persists_like_one_long_store(tmp_path: Path, spec: str) -> None:
    grads = [np.full(4, g, np.float32) for g in (1.0, -0.5, 2.0, 0.25)]
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(4, np.float32))
        kv.set_updater(spec)
        for grad in grads:
            kv.push("w", grad)
        expected = kv.pull("w")
    with open_session(tmp_path) as s:
        s.init(["w"], [np.ones(4, np.float32)])
        s.set_updater(spec)
    for grad in grads:  # one process per push, as with one-shot commands
        with open_session(tmp_path) as s:
            s.push(["w"], [grad])
    with open_session(tmp_path) as s:
        np.testing.assert_array_equal(pull(s, "w"), expected)
        assert s.describe()["optimizer_state"] is True


def test_init_resets_optimizer_state_of_that_key(tmp_path: Path) -> None:
    spec = "sgd:lr=0.1,momentum=0.9"
    with open_session(tmp_path) as s:
        s.init(["a", "b"], [np.ones(2, np.float32), np.ones(2, np.float32)])
        s.set_updater(spec)
        s.push(["a", "b"], [np.ones(2, np.float32), np.ones(2, np.float32)])
    with open_session(tmp_path) as s:
        s.init(["a"], [np.ones(2, np.float32)])
        s.push(["a", "b"], [np.ones(2, np.float32), np.ones(2, np.float32)])
        a, b = pull(s, "a"), pull(s, "b")
    with kvcli.create("local") as kv:  # a: fresh momentum; b: second step
        kv.init(["a", "b"], [np.ones(2, np.float32)] * 2)
        kv.set_updater(spec)
        kv.push(["a", "b"], [np.ones(2, np.float32)] * 2)
        kv.init("a", np.ones(2, np.float32))
        kv.push(["a", "b"], [np.ones(2, np.float32)] * 2)
        np.testing.assert_array_equal(a, kv.pull("a"))
        np.testing.assert_array_equal(b, kv.pull("b"))


def test_store_type_persists_and_cannot_change_silently(tmp_path: Path) -> None:
    with open_session(tmp_path, store_type="device", store_options={"num_devices": 2}) as s:
        s.init([1], [np.ones(2, np.float32)])
        s.push([1], [[np.ones(2, np.float32)] * 2])
        assert s.store.type == "device"
    with open_session(tmp_path) as s:
        assert s.describe()["store"] == {"type": "device", "options": {"num_devices": 2}}
        assert pull(s, 1).tolist() == [2.0, 2.0]
    with pytest.raises(SessionError, match=r"Session.reset\('local'\)"):
        with open_session(tmp_path, store_type="local") as s:
            s.keys()
    with pytest.raises(SessionError, match="num_devices=2"):
        with open_session(tmp_path, store_type="device", store_options={"num_devices": 3}) as s:
            s.keys()
    with open_session(tmp_path) as s:
        s.reset("local")
        assert s.describe()["store"]["type"] == "local" and s.keys() == []


def test_only_touched_keys_are_loaded(tmp_path: Path) -> None:
    with open_session(tmp_path) as s:
        s.init(["big", "small"], [np.zeros(1000, np.float32), np.ones(2, np.float32)])
    with open_session(tmp_path) as s:
        s.push(["small"], [np.full(2, 5, np.float32)])  # assign: written straight to its file, no store
        assert s.store is None
        assert s.pull(["small"])[0][0].tolist() == [5.0, 5.0]  # the committed value: still no store
        s.push(["small"], [[np.ones(2, np.float32)] * 2])  # two devices: summed in the store
        assert s.store.keys() == ["small"]
        assert s.pull(["small"])[0][0].tolist() == [2.0, 2.0]


BIG = INLINE_BYTES // 4 + 1  # float32 elements of a value just too big for its row


def test_push_writes_only_changed_files(tmp_path: Path) -> None:
    with open_session(tmp_path) as s:
        s.init(["a", "b"], [np.zeros(BIG, np.float32), np.ones(BIG, np.float32)])
        before = {e.key: e.file for e in s.entries()}
        s.push(["a"], [np.full(BIG, 2, np.float32)])
        after = {e.key: e.file for e in s.entries()}
    assert before["b"] == after["b"] and before["a"] != after["a"]
    files = sorted(os.listdir(tmp_path / "sessions" / "t" / "data"))
    assert files == sorted(after.values())  # the old file of 'a' was removed


def test_small_values_live_in_their_row_and_move_when_they_grow_or_shrink(tmp_path: Path) -> None:
    """Issue 22 item 1: a value of at most INLINE_BYTES is held in its database row (no file);
    one that grows past it moves to a file, one that shrinks moves back, and the old file
    goes once the new row is committed."""
    data = tmp_path / "sessions" / "t" / "data"
    edge = np.arange(INLINE_BYTES, dtype=np.uint8)  # exactly the threshold: inline
    with open_session(tmp_path) as s, open_session(tmp_path) as other:
        s.init(["a", "b"], [np.arange(4, dtype=np.float64), edge])
        assert [e.inline for e in s.entries()] == [True, True] and os.listdir(data) == []
        s.push(["a"], [np.full(4, 2.5)])
        assert other.pull(["a"])[0][0].tolist() == [2.5] * 4 and os.listdir(data) == []
        np.testing.assert_array_equal(other.pull(["b"])[0][0], edge)
        s.init(["a"], [np.arange(BIG, dtype=np.float32)])  # grows: a file
        entry = s.entries()[0]
        assert not entry.inline and os.listdir(data) == [entry.file]
        np.testing.assert_array_equal(other.pull(["a"])[0][0], np.arange(BIG, dtype=np.float32))
        s.init(["a"], [np.array([[7, 8]], np.int16)])  # shrinks: back in the row, the file removed
        assert s.entries()[0].inline and os.listdir(data) == []
        assert other.pull(["a"])[0][0].tolist() == [[7, 8]]
    with open_session(tmp_path) as fresh:  # a new process reads the rows
        assert fresh.pull(["a"])[0][0].dtype == np.int16
        assert fresh.pull(["a"])[0][0].tolist() == [[7, 8]]
        np.testing.assert_array_equal(fresh.pull(["b"])[0][0], edge)


def test_key_kinds_do_not_mix(tmp_path: Path) -> None:
    with open_session(tmp_path) as s:
        s.init([3], [np.ones(2)])
        with pytest.raises(KeyTypeError, match="mix int and str"):
            s.init(["w"], [np.ones(2)])


def test_unknown_key(tmp_path: Path) -> None:
    with open_session(tmp_path) as s:
        with pytest.raises(UnknownKeyError, match=r"call init\(9, value\) first"):
            s.pull([9])
        assert not s.exists()  # a read does not create the session


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/b", "x\x00y", "k" * 10_000, "", " ", "a b", "ü", -1, 1.5, True])
def test_bad_keys_are_refused(tmp_path: Path, bad) -> None:
    with pytest.raises(KeyTypeError):
        check_key(bad) if not isinstance(bad, str) else parse_key(bad)
    with open_session(tmp_path) as s:
        with pytest.raises(KeyTypeError):
            s.init([bad], [np.ones(2)])
    assert not Session("t", tmp_path).exists()


def test_key_parsing() -> None:
    assert parse_keys("5,7,9") == [5, 7, 9]
    assert parse_key("fc1.weight") == "fc1.weight"
    assert parse_key("..") == ".."  # allowed: key names never become paths
    with pytest.raises(KeyTypeError, match="twice"):
        parse_keys("1,1")


@pytest.mark.parametrize("name", ["../x", "a/b", ".hidden", "", "x" * 65, "a\x00"])
def test_bad_session_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(SessionError, match="session name"):
        Session(name, tmp_path)


def test_key_names_never_become_paths(tmp_path: Path) -> None:
    with open_session(tmp_path) as s:
        s.init([".."], [np.ones(BIG)])  # values in files (a small one has none)
        s.init(["...npy"], [np.ones(BIG)])
    names = os.listdir(tmp_path / "sessions" / "t" / "data")
    assert len(names) == 2 and all(len(n) == 36 and n.endswith(".npy") for n in names)


# ---------------------------------------------------------------------- damaged files
def make_session(home: Path) -> Path:
    with open_session(home) as s:
        s.init(["w"], [np.arange(4, dtype=np.float32)])
    return home / "sessions" / "t"


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of the session but the lock and SQLite's working files (the WAL index)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".lock" and not p.name.endswith(("-shm", "-wal"))}


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "wrong-format", "bad-file-name", "newer",
                                    "db-garbage", "db-truncated", "db-bad-file-name"])
def test_damaged_manifest_is_reported_and_kept(tmp_path: Path, damage: str) -> None:
    """A damaged session database, or a damaged old manifest.json (read and checked before
    its migration), is one error naming the file; nothing is changed; reset repairs it."""
    folder = make_session(tmp_path)
    data = legacy_form(folder, read_manifest(folder))  # planted as an old manifest.json below
    text = json.dumps(data)
    manifest = folder / DB
    if damage == "db-garbage":
        manifest.write_bytes(b"\x00\xffnot a database" * 100)
    elif damage == "db-truncated":
        with open_session(tmp_path):
            pass
        manifest.write_bytes(manifest.read_bytes()[:1000])
    elif damage == "db-bad-file-name":
        with sqlite3.connect(manifest) as conn:
            conn.execute("UPDATE keys SET file = '../../../etc/passwd'")
        conn.close()
    elif damage == "garbage":
        manifest = write_legacy(folder, b"\x00\xffnot json")
    elif damage == "truncated":
        manifest = write_legacy(folder, text[: len(text) // 2])
    elif damage == "empty":
        manifest = write_legacy(folder, "")
    elif damage == "wrong-format":
        manifest = write_legacy(folder, {"hello": 1})
    elif damage == "bad-file-name":
        data["keys"][0]["file"] = "../../../etc/passwd"
        manifest = write_legacy(folder, data)
    else:
        data["format_version"] = 99
        manifest = write_legacy(folder, data)
    before = snapshot(folder)
    actions = [lambda s: s.pull(["w"]), lambda s: s.push(["w"], [np.ones(4, np.float32)]), lambda s: s.keys()]
    if damage != "db-bad-file-name":  # a damaged row is found by the commands that read it
        actions.append(lambda s: s.init(["v"], [np.ones(1)]))
    for action in actions:
        with open_session(tmp_path) as s:
            with pytest.raises(SessionError) as info:
                action(s)
        message = str(info.value)
        assert str(manifest) in message
        assert ("Session.reset()" in message) or ("newer kvcli" in message)
        assert snapshot(folder) == before  # nothing overwritten
    with open_session(tmp_path) as s:  # reset repairs it
        s.reset()
        assert s.keys() == []


@pytest.mark.parametrize("damage", ["truncated", "garbage", "pickle", "object-array", "wrong-shape", "missing"])
def test_damaged_value_file_is_reported_and_kept(tmp_path: Path, damage: str) -> None:
    folder = make_session(tmp_path)
    with open_session(tmp_path) as s:  # a value file (a small value is held in its row)
        s.init(["w"], [np.arange(BIG, dtype=np.float32)])
        file = folder / "data" / s.entries()[0].file
    if damage == "truncated":
        file.write_bytes(file.read_bytes()[:-5])
    elif damage == "garbage":
        file.write_bytes(b"garbage" * 10)
    elif damage == "pickle":
        file.write_bytes(pickle.dumps(np.arange(4, dtype=np.float32)))
    elif damage == "object-array":
        file.unlink()
        np.save(file, np.array([1, "x"], dtype=object), allow_pickle=True)
    elif damage == "wrong-shape":
        file.unlink()
        np.save(file, np.arange(5, dtype=np.float32))
    else:
        file.unlink()
    before = snapshot(folder)
    with open_session(tmp_path) as s:
        with pytest.raises(SessionError) as info:
            s.pull(["w"])
        assert str(file) in str(info.value) and "Session.reset()" in str(info.value)
        if damage in ("pickle", "object-array"):
            assert "pickle" in str(info.value) or "object" in str(info.value)
        with pytest.raises(SessionError):
            s.push(["w"], [np.ones(BIG, np.float32)])
    assert snapshot(folder) == before


# ---------------------------------------------------------------------- crashes
CRASH_SCRIPT = """
import sys, numpy as np
from kvcli.session import Session
with Session("t", sys.argv[1]) as s:
    s.push(["w"], [np.full(int(sys.argv[2]), 7, np.float32)])
"""


@pytest.mark.parametrize("size", [4, BIG], ids=["in-row", "file"])
@pytest.mark.parametrize(("point", "expected"), [("after-data", 0.0), ("before-manifest", 0.0), ("after-manifest", 7.0)])
def test_crash_inside_commit_leaves_old_or_new(tmp_path: Path, point: str, expected: float, size: int) -> None:
    with open_session(tmp_path) as s:
        s.init(["w"], [np.zeros(size, np.float32)])
    env = dict(os.environ, KVCLI_TEST_CRASH_POINT=point)
    proc = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, str(tmp_path), str(size)], env=env, capture_output=True)
    assert proc.returncode == -9, proc.stderr
    with open_session(tmp_path) as s:
        assert pull(s, "w").tolist() == [expected] * size
        s.push(["w"], [np.full(size, 1, np.float32)])  # the next commit cleans up leftovers
        assert pull(s, "w").tolist() == [1.0] * size
        referenced = {name for e in s.entries() for name in e.files_row()[:3] if name}
    folder = tmp_path / "sessions" / "t"
    assert set(os.listdir(folder / "data")) == referenced
    assert not list(folder.glob(".session.db.*"))


# ---------------------------------------------------------------------- live sessions
def test_live_session_sees_other_writers(tmp_path: Path) -> None:
    with open_session(tmp_path) as live, open_session(tmp_path) as other:
        live.init(["a"], [np.zeros(2, np.float32)])
        assert pull(live, "a").tolist() == [0, 0]
        other.push(["a"], [np.full(2, 5, np.float32)])
        assert pull(live, "a").tolist() == [5, 5]
        other.set_updater("sum")
        live.push(["a"], [np.ones(2, np.float32)])
        assert pull(other, "a").tolist() == [6, 6]
        other.delete(["a"])
        with pytest.raises(UnknownKeyError):
            pull(live, "a")
        other.reset()
        live.init(["s"], [np.ones(1)])  # str keys after int keys: the live store follows
        assert other.keys() == ["s"]


def test_failed_command_leaves_no_uncommitted_value(tmp_path: Path) -> None:
    def boom(key, merged, stored):
        stored += merged
        raise RuntimeError("user updater failed half-way")

    updater_file = tmp_path / "upd.py"
    updater_file.write_text(
        "def boom(key, merged, stored):\n    stored += merged\n    raise RuntimeError('half-way')\n"
    )
    with open_session(tmp_path) as s:
        s.init(["a"], [np.zeros(2, np.float32)])
        s.set_updater(f"python:{updater_file}:boom")
        with pytest.raises(RuntimeError):
            s.push(["a"], [np.ones(2, np.float32)])
        assert pull(s, "a").tolist() == [0, 0]


def test_export_import_round_trip(tmp_path: Path) -> None:
    with open_session(tmp_path) as s:
        s.init(["w", "b"], [np.arange(3, dtype=np.float32), np.ones(2, np.int32)])
        s.set_updater("adam:lr=0.1")
        s.push(["w"], [np.ones(3, np.float32)])
        s.export(tmp_path / "backup")
        with pytest.raises(SessionError, match="not empty"):
            s.export(tmp_path / "backup")
        expected_next = None
        s.push(["w"], [np.ones(3, np.float32)])
        expected_next = pull(s, "w")
    with open_session(tmp_path, "copy") as c:
        c.import_(tmp_path / "backup")
        assert c.keys() == ["w", "b"] and c.describe()["updater"] == "adam:lr=0.1"
        assert pull(c, "b").dtype == np.int32
        c.push(["w"], [np.ones(3, np.float32)])  # Adam state came along
        np.testing.assert_array_equal(pull(c, "w"), expected_next)


def test_export_of_0d_keys_imports_again(tmp_path: Path) -> None:
    """An export writes a 0-d value as a 0-d .npy (it wrote shape (1,), which import then
    refused against the manifest's (): a session with a scalar could not come back)."""
    with open_session(tmp_path) as s:
        s.init(["step", "t"], [np.array(7, np.int64), np.array(-0.5, np.float32)])
        s.export(tmp_path / "backup")
    assert sorted(np.load(f).shape for f in (tmp_path / "backup" / "data").glob("*.npy")) == [(), ()]
    with open_session(tmp_path, "copy") as c:
        c.import_(tmp_path / "backup")
        assert pull(c, "step").shape == () and int(pull(c, "step")) == 7
        assert pull(c, "t").dtype == np.float32 and float(pull(c, "t")) == -0.5


def test_import_validates_before_changing(tmp_path: Path) -> None:
    with open_session(tmp_path) as s:
        s.init(["w"], [np.ones(2, np.float32)])
        s.export(tmp_path / "backup")
    victim = next((tmp_path / "backup" / "data").glob("*.npy"))
    victim.write_bytes(pickle.dumps([1, 2]))
    with open_session(tmp_path, "other") as o:
        o.init(["keep"], [np.ones(1)])
        with pytest.raises(SessionError, match="pickle"):
            o.import_(tmp_path / "backup")
        assert o.keys() == ["keep"]


def test_big_values_recycle_a_spare_file_and_stay_correct(tmp_path: Path) -> None:
    """A big key keeps its previous file as a spare that the next write overwrites in place;
    a live store never mistakes a reused file name for the value it holds."""
    n = (1 << 20) // 4 + 1  # just over RECYCLE_BYTES of float32
    data = tmp_path / "sessions" / "t" / "data"
    with open_session(tmp_path) as writer, open_session(tmp_path) as reader:
        writer.init(["w"], [np.zeros(n, np.float32)])
        assert reader.pull(["w"])[0][0][0] == 0  # the reader's store now holds version 1
        files = []
        for step in range(1, 5):
            writer.push(["w"], [np.full(n, step, np.float32)])
            entry = writer.entries()[0]
            files.append(entry.file)
            assert sorted(os.listdir(data)) == sorted({entry.file, entry.spare})
            np.testing.assert_array_equal(reader.pull(["w"])[0][0], np.full(n, step, np.float32))
        assert files[0] == files[2] and files[1] == files[3] and files[0] != files[1]
        writer.set_updater("sum")
        writer.push(["w"], [np.ones(n, np.float32)])  # through the store, same recycling
        np.testing.assert_array_equal(reader.pull(["w"])[0][0], np.full(n, 5, np.float32))
        writer.init(["w"], [np.zeros(BIG, np.float32)])  # new shape: fresh file, no spare
        assert writer.entries()[0].spare is None
        assert os.listdir(data) == [writer.entries()[0].file]
        writer.init(["w"], [np.zeros(3, np.float32)])  # small: in the row, no file at all
        assert writer.entries()[0].inline and os.listdir(data) == []


def test_values_in_rows_keep_dtype_shape_and_bytes(tmp_path: Path) -> None:
    """Every dtype a session stores, 0-d and empty values too, reads back exactly from its row."""
    from kvcli.arrays.kinds import DTYPES

    values = {f"k{i}": (np.arange(6) % 2 if dtype == "bool" else np.arange(6) - 2).astype(dtype).reshape(2, 3)
              for i, dtype in enumerate(sorted(DTYPES))}
    values["scalar"], values["empty"] = np.array(7, np.uint64), np.zeros((0, 3), np.float32)
    with open_session(tmp_path) as s:
        s.init(list(values), list(values.values()))
    with open_session(tmp_path) as s:
        assert all(entry.inline for entry in s.entries())
        for key, value in values.items():
            got = s.pull([key])[0][0]
            assert (got.dtype, got.shape, got.tobytes()) == (value.dtype, value.shape, value.tobytes()), key
    assert os.listdir(tmp_path / "sessions" / "t" / "data") == []
