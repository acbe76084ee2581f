"""``Session.load_params`` / ``save_params`` / ``snapshot`` against files MXNet 1.9.1 wrote.

Files in tests/data/mxnet_params_flow/ and tests/data/mxnet_checkpoint/ were written by real
MXNet (tests/data/make_mxnet_params_flow.py, make_mxnet_checkpoint.py): a session loads them
to the same names and bits, saves them back byte for byte, and a training step (SGD with
momentum, two pushes to one weight) saves the very file MXNet's ``save_checkpoint`` wrote
after the same step on its KVStore.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest

from kvcli.arrays import mxparams
from kvcli.errors import KeyTypeError, KVCliError, ParamsFileError, SessionError
from kvcli.session import Session
from kvcli.session.db import load_raw

DATA = Path(__file__).resolve().parents[1] / "data"
FLOW = DATA / "mxnet_params_flow"
CHECKPOINT = DATA / "mxnet_checkpoint" / "small_cnn-0000.params"
MXNET_FILES = [CHECKPOINT, FLOW / "gluon-0000.params", FLOW / "gluon_parameters.params", FLOW / "dtypes.params"]


def _file_arrays(path: Path) -> dict[str, np.ndarray]:
    with mxparams.open_file(path) as params:
        return {name: params.array(entry) for name, entry in params.items()}


def _state(session: Session) -> tuple[object, list[str]]:
    """Everything a failed command must leave as it was: the rows and the data files."""
    data = session.path / "data"
    return load_raw(session.path), sorted(os.listdir(data)) if data.is_dir() else []


@pytest.mark.parametrize("path", MXNET_FILES, ids=lambda p: p.name)
def test_a_file_mxnet_wrote_loads_as_keys_and_saves_back_byte_for_byte(path: Path, tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session:
        done = session.load_params(path)
        arrays = _file_arrays(path)
        assert done.keys == list(arrays) == session.keys() and done.replaced == []
        assert done.nbytes == sum(a.nbytes for a in arrays.values())
        for entry, value in session.snapshot():
            want = arrays[entry.key]
            assert entry.version == 1 and value.dtype == want.dtype and value.shape == want.shape
            assert value.tobytes() == want.tobytes()
        saved = session.save_params(tmp_path / "out.params")
        assert saved.names == list(arrays)
    assert (tmp_path / "out.params").read_bytes() == path.read_bytes()
    assert (tmp_path / "out.params").stat().st_mode & 0o777 == 0o600


def test_big_values_are_files_and_small_ones_rows(tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session:
        session.load_params(FLOW / "dtypes.params")
        rows = {row["key"]: row for row in load_raw(session.path)["keys"]}  # type: ignore[index]
        files = set(os.listdir(session.path / "data"))
    assert {k for k, row in rows.items() if "data" not in row} == {"arg:f32_big", "aux:i64"}
    assert {rows["arg:f32_big"]["file"], rows["aux:i64"]["file"]} == files


def test_the_training_flow_saves_what_mxnet_saved(tmp_path: Path) -> None:
    """load_checkpoint, set_optimizer(SGD(lr, momentum)), two pushes to one weight,
    save_checkpoint: the same bytes as MXNet's KVStore wrote."""
    flow = json.loads((FLOW / "flow.json").read_text())
    with Session("s", tmp_path / "home") as session:
        session.load_params(CHECKPOINT)
        session.set_updater(flow["optimizer"])
        for name in ("grad1.npy", "grad2.npy"):
            session.push([flow["key"]], [np.load(FLOW / name)])
        (pulled,), = session.pull([flow["key"]])
        np.testing.assert_array_equal(pulled, np.array(flow["pulled"], dtype=np.float32))
        session.save_params(tmp_path / "trained-0001.params")
        versions = {entry.key: entry.version for entry in session.entries()}
    assert (tmp_path / "trained-0001.params").read_bytes() == (FLOW / "trained-0001.params").read_bytes()
    assert versions[flow["key"]] == 3 and {v for k, v in versions.items() if k != flow["key"]} == {1}


def test_replacing_keys_asks_and_a_replaced_key_starts_afresh(tmp_path: Path) -> None:
    flow = json.loads((FLOW / "flow.json").read_text())
    grad = np.load(FLOW / "grad1.npy")
    with Session("fresh", tmp_path / "home") as fresh:  # one step from the checkpoint
        fresh.load_params(CHECKPOINT)
        fresh.set_updater(flow["optimizer"])
        fresh.push([flow["key"]], [grad])
        (one_step,), = fresh.pull([flow["key"]])
    with Session("s", tmp_path / "home") as session:
        session.load_params(CHECKPOINT)
        session.set_updater(flow["optimizer"])
        session.push([flow["key"]], [grad])
        session.push([flow["key"]], [grad])  # momentum now holds two steps
        before = _state(session)
        with pytest.raises(SessionError) as caught:
            session.load_params(CHECKPOINT, keys=["arg:fc1_*"])
        assert caught.value.fields["remedy"] == "replace-keys"
        assert caught.value.fields["replaced"] == ["arg:fc1_weight", "arg:fc1_bias"]
        assert "nothing was changed" in str(caught.value) and _state(session) == before
        done = session.load_params(CHECKPOINT, keys=["arg:fc1_*"], replace=True)
        assert done.replaced == done.keys == ["arg:fc1_weight", "arg:fc1_bias"]
        session.push([flow["key"]], [grad])  # its momentum went with the old value
        (again,), = session.pull([flow["key"]])
        versions = {e.key: e.version for e in session.entries()}
    assert again.tobytes() == one_step.tobytes()
    assert versions["arg:fc1_weight"] == 5 and versions["arg:fc1_bias"] == 2 and versions["arg:fc2_weight"] == 1


def test_prefixes_and_a_selection_rename_the_keys(tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session:
        done = session.load_params(FLOW / "gluon-0000.params", strip_prefix=["arg:", "aux:"], prefix="g.",
                                   keys=["arg:conv*", "aux:*"])
        assert done.keys == session.keys() == ["g.conv0_weight", "g.conv0_bias", "g.batchnorm0_running_mean",
                                              "g.batchnorm0_running_var"]
        with pytest.raises(SessionError, match=r"keys 'arg:nothing\*' matches no array of .*gluon-0000.params"):
            session.load_params(FLOW / "gluon-0000.params", keys=["arg:nothing*"])
        assert session.keys() == done.keys


def test_two_names_becoming_one_key_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "twice.params"
    mxparams.save(path, [np.zeros(2, np.float32), np.ones(2, np.float32)], ["arg:w", "aux:w"])
    with Session("s", tmp_path / "home") as session:
        with pytest.raises(KeyTypeError, match="arrays 'arg:w' and 'aux:w' would both be the key 'w'"):
            session.load_params(path, strip_prefix=("arg:", "aux:"))
        assert not session.exists()


def test_save_params_of_chosen_keys_and_int_keys(tmp_path: Path) -> None:
    with Session("ints", tmp_path / "home") as session:
        session.init([3, 10], [np.arange(4, dtype=np.int32), np.full((2, 2), 0.5, np.float16)])
        session.save_params(tmp_path / "ints.params", keys=[10, 3])
    assert list(_file_arrays(tmp_path / "ints.params")) == ["10", "3"]
    assert _file_arrays(tmp_path / "ints.params")["3"].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("value, found", [
    (np.float32(2.0).reshape(()), "is 0-d"),
    (np.arange(3, dtype=np.uint16), "has dtype uint16, which MXNet cannot store"),
])
def test_save_params_refuses_what_mxnet_cannot_read_back(tmp_path: Path, value: np.ndarray, found: str) -> None:
    with Session("s", tmp_path / "home") as session:
        session.init(["ok", "bad"], [np.ones(2, np.float32), value])
        with pytest.raises(ParamsFileError, match=found):
            session.save_params(tmp_path / "out.params")
        session.save_params(tmp_path / "out.params", keys=["ok"])
    assert list(_file_arrays(tmp_path / "out.params")) == ["ok"]


def test_a_params_session_mixes_no_int_keys(tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session:
        session.init([1], [np.ones(2, np.float32)])
        with pytest.raises(KeyTypeError, match="mix int and str keys"):
            session.load_params(CHECKPOINT)
        assert session.keys() == [1]


# ------------------------------------------------------------------------- bad input (item 6)
def _good_session(home: Path) -> Session:
    session = Session("s", home)
    session.load_params(FLOW / "dtypes.params")
    return session


def _hostile(tmp_path: Path) -> list[tuple[str, Path, str]]:
    good = CHECKPOINT.read_bytes()
    flag_at = mxparams.from_bytes(good).entries[0].offset - 4  # the first array's type flag
    cases: list[tuple[str, bytes, str]] = [
        ("empty", b"", "truncated: the file header"),
        ("not params", b"\x93NUMPY" + bytes(40), "not MXNet's 0x112"),
        ("count", struct.pack("<QQQ", 0x112, 0, 1 << 60), "arrays claimed"),
        ("dims", struct.pack("<QQQIii", 0x112, 0, 1, 0xF993FAC9, 0, 3) + struct.pack("<3q", 1 << 40, 1 << 40, 1 << 40)
         + struct.pack("<iii", 1, 0, 0) + bytes(64), "impossible shape"),
        ("values", struct.pack("<QQQIii", 0x112, 0, 1, 0xF993FAC9, 0, 1) + struct.pack("<q", 1 << 40)
         + struct.pack("<iii", 1, 0, 0) + bytes(64), "needs 4398046511104 bytes, 64 left"),
        ("values cut", good[: len(good) // 2], "truncated"),
        ("names cut", good[:-5], "truncated"),
        ("flag", good[:flag_at] + struct.pack("<i", 12) + good[flag_at + 4:], "bfloat16"),
    ]
    out = []
    for name, raw, found in cases:
        path = tmp_path / (name.replace(" ", "_") + ".params")
        path.write_bytes(raw)
        out.append((name, path, found))
    return out


def test_truncated_and_hostile_files_change_nothing(tmp_path: Path) -> None:
    session = _good_session(tmp_path / "home")
    try:
        before = _state(session)
        for _, path, found in _hostile(tmp_path):
            with pytest.raises(ParamsFileError, match=found) as caught:
                session.load_params(path, replace=True)
            assert "\n" not in str(caught.value)
            assert _state(session) == before
    finally:
        session.close()


def test_every_cut_of_a_checkpoint_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    good = CHECKPOINT.read_bytes()
    session = _good_session(tmp_path / "home")
    try:
        before = _state(session)
        for cut in range(0, len(good) - 1, 7):
            path = tmp_path / "cut.params"
            path.write_bytes(good[:cut])
            with pytest.raises(ParamsFileError) as caught:
                session.load_params(path, prefix="x.")
            assert "\n" not in str(caught.value) and "truncated" in str(caught.value)
        assert _state(session) == before
    finally:
        session.close()


@pytest.mark.parametrize("name", ["conv/weight", "a b", "é", "x" * 129, ""])
def test_a_name_that_is_no_key_changes_nothing(tmp_path: Path, name: str) -> None:
    path = tmp_path / "names.params"
    mxparams.save(path, [np.ones(2, np.float32), np.zeros(3, np.float32)], ["arg:fine", name])
    session = _good_session(tmp_path / "home")
    try:
        before = _state(session)
        with pytest.raises(KeyTypeError, match="would be the key .* which is not allowed") as caught:
            session.load_params(path)
        assert caught.value.fields["remedy"] == "rename-params" and _state(session) == before
    finally:
        session.close()


def test_sparse_arrays_and_oversized_arrays_change_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = _good_session(tmp_path / "home")
    try:
        before = _state(session)
        with pytest.raises(ParamsFileError, match="is row_sparse: a session holds dense arrays only"):
            session.load_params(DATA / "mxnet_params_sparse" / "mixed_dict.params")
        monkeypatch.setenv("KVCLI_MAX_ELEMENTS", "1000")
        with pytest.raises(ParamsFileError, match=r"'arg:f32_big' holds 1,200 elements \(40, 30\), more than the "
                                                  r"limit of 1,000 \(set KVCLI_MAX_ELEMENTS"):
            session.load_params(FLOW / "dtypes.params", prefix="again.")
        assert _state(session) == before
    finally:
        session.close()


def test_a_file_that_shrinks_while_it_is_copied_changes_nothing(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "moving.params"
    path.write_bytes((FLOW / "dtypes.params").read_bytes())
    session = _good_session(tmp_path / "home")
    original = mxparams.Body.write_to

    def shrink_first(self: mxparams.Body, handle: object) -> None:
        os.truncate(path, 100)  # another process cuts the file after it was scanned
        original(self, handle)  # type: ignore[arg-type]

    monkeypatch.setattr(mxparams.Body, "write_to", shrink_first)
    try:
        before = _state(session)
        with pytest.raises(ParamsFileError, match="changed while it was read"):
            session.load_params(path, prefix="moving.")
        assert _state(session) == before
    finally:
        session.close()


@pytest.mark.parametrize("kind", ["folder", "fifo", "device", "missing"])
def test_what_is_not_a_file_is_refused_without_waiting(tmp_path: Path, kind: str) -> None:
    target = {"folder": tmp_path, "device": Path("/dev/zero"), "missing": tmp_path / "none.params"}.get(kind)
    if kind == "fifo":
        target = tmp_path / "fifo.params"
        os.mkfifo(target)
    with Session("s", tmp_path / "home") as session:
        with pytest.raises(ParamsFileError, match="cannot read"):
            session.load_params(target)  # type: ignore[arg-type]
        assert not session.exists()


def test_an_error_is_a_kvcli_error_with_one_line(tmp_path: Path) -> None:
    with Session("s", tmp_path / "home") as session, pytest.raises(KVCliError) as caught:
        session.save_params(tmp_path / "no-folder" / "x.params")
    assert "\n" not in str(caught.value)
