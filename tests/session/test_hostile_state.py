"""Issue 20, items 1 and 8 and the state-file low items: optimizer state files from elsewhere.

Before: a state file's spec ``python:evil.py:Opt`` was executed by ``import`` (even with the
manifest's updater ``assign``), again on every push of the session, and by
``kv.load_optimizer_states``; a file's spec also replaced the manifest's optimizer settings
while ``show`` named the manifest's. A 2 MB zip bomb was unpacked whole (67 s, 4.2 GB); a
non-zip file was a traceback; counts of 10**400 and wrong-shaped arrays were accepted at
import and failed every push. Now the updater comes from the manifest only, a state file
carries numbers and arrays checked against it, and every member is bounded before it is
unpacked.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kvcli
from kvcli.errors import SessionError
from kvcli.session import Session
from tests.session.legacy import read_manifest, write_legacy
from tests.cli.conftest import KVCLI, kvcli_env
from tests.optim.statefiles import bomb_member, npy_bytes, npy_header, read_members, rewrite, write_evil

SPEC = "sgd:lr=0.1,momentum=0.9"
GRADS = [np.array([1.0, -2.0, 0.5], np.float32), np.array([0.25, 1.0, -1.0], np.float32)]


def exported(tmp_path: Path, spec: str = SPEC) -> tuple[Path, Path]:
    """An export of a session with momentum state after one push: (folder, its state file)."""
    with Session("origin", tmp_path / "home") as session:
        session.init(["w", "v"], [np.ones(3, np.float32), np.zeros((2, 2), np.float32)])
        session.set_updater(spec)
        session.push(["w"], [GRADS[0]])
        session.export(tmp_path / "export")
    return tmp_path / "export", state_file(tmp_path / "export")


def state_file(folder: Path) -> Path:
    return folder / "data" / read_manifest(folder)["optimizer_state"]


def expected_after(grads: list[np.ndarray], spec: str = SPEC) -> np.ndarray:
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(3, np.float32))
        kv.set_updater(spec)
        for grad in grads:
            kv.push("w", grad)
        return kv.pull("w")


def target_session(tmp_path: Path) -> dict[str, Any]:
    """The session an import goes into, with a value of its own; returns its manifest."""
    with Session("target", tmp_path / "home") as session:
        session.init(["mine"], [np.full(2, 7, np.float32)])
        return read_manifest(session.path)


def assert_target_unchanged(tmp_path: Path, before: dict[str, Any]) -> None:
    with Session("target", tmp_path / "home") as session:
        assert read_manifest(session.path) == before
        assert session.pull(["mine"])[0][0].tolist() == [7, 7]


# ---------------------------------------------------------------------- item 1: no code
@pytest.mark.parametrize("updater", [SPEC, "assign"])
def test_import_never_runs_code_a_state_file_names(tmp_path: Path, updater: str) -> None:
    folder, state = exported(tmp_path)
    evil, mark = write_evil(tmp_path)
    rewrite(state, lambda meta, _: meta.update(spec=f"python:{evil}:Opt", updater="opt"))
    manifest = read_manifest(folder)
    manifest["updater"] = updater  # "assign": the old import parsed the state file anyway
    write_legacy(folder, manifest)
    before = target_session(tmp_path)
    with Session("target", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="names Python code") as caught:
            session.import_(folder)
    assert "\n" not in str(caught.value) and "nothing was changed" in str(caught.value)
    assert not mark.exists()
    assert_target_unchanged(tmp_path, before)


def test_a_state_file_naming_code_in_a_session_never_runs_on_push(tmp_path: Path) -> None:
    """The attacker's spec under the manifest's optimizer name: the old code executed it on
    every push; now the file's spec is never parsed and the push is refused."""
    evil, mark = write_evil(tmp_path)
    with Session("s", tmp_path / "home") as session:
        session.init(["w"], [np.ones(3, np.float32)])
        session.set_updater(SPEC)
        session.push(["w"], [GRADS[0]])
        rewrite(state_file(session.path), lambda meta, _: meta.update(spec=f"python:{evil}:Opt"))
    with Session("s", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="names Python code"):
            session.push(["w"], [GRADS[1]])
        np.testing.assert_array_equal(session.pull(["w"])[0][0], expected_after(GRADS[:1]))
    assert not mark.exists()


def test_the_manifest_names_the_optimizer_not_the_state_file(tmp_path: Path) -> None:
    """A state file whose spec says lr=1000: the old code ran lr=1000 while show said 0.1."""
    folder, state = exported(tmp_path)
    rewrite(state, lambda meta, _: meta.update(spec="sgd:lr=1000,momentum=0.9"))
    with Session("target", tmp_path / "home") as session:
        session.import_(folder)
        session.push(["w"], [GRADS[1]])
        assert session.describe()["updater"] == SPEC
        np.testing.assert_array_equal(session.pull(["w"])[0][0], expected_after(GRADS))


def test_an_export_of_a_python_updater_still_imports_without_code_or_state(tmp_path: Path) -> None:
    source = tmp_path / "halver.py"
    source.write_text(
        "import kvcli.mx as mx\n\n"
        "class Halver(mx.optimizer.Optimizer):\n"
        "    state_names = ('velocity',)\n\n"
        "    def create_state(self, index, weight):\n"
        "        return mx.nd.zeros(weight.shape, weight.context)\n\n"
        "    def update(self, index, weight, grad, state):\n"
        "        state[:] = 0.5 * state + grad\n"
        "        weight[:] -= 0.1 * state\n"
    )
    with Session("a", tmp_path / "home") as session:
        session.init(["w"], [np.ones(2, np.float32)])
        session.set_updater(f"python:{source}:Halver")
        session.push(["w"], [np.ones(2, np.float32)])
        session.export(tmp_path / "export")
    with Session("b", tmp_path / "home") as session:
        imported = session.import_(tmp_path / "export")
        assert imported.updater == "assign" and imported.optimizer_state is None
        assert "nor its optimizer state" in session.notices[0]


@pytest.mark.parametrize("spec", [
    "nag:lr=0.1,momentum=0.9,schedule=factor:step=1:factor=0.5",
    "lbsgd:lr=0.1,momentum=0.5,batch_scale=2,warmup_epochs=1,updates_per_epoch=2",
    "nadam:lr=0.01",
    "lars:lr=0.1,momentum=0.9,eta=0.1",
])
def test_existing_exports_still_import_and_resume_exactly(tmp_path: Path, spec: str) -> None:
    folder, _ = exported(tmp_path, spec)
    with Session("target", tmp_path / "home") as session:
        session.import_(folder)
        session.push(["w"], [GRADS[1]])
        np.testing.assert_array_equal(session.pull(["w"])[0][0], expected_after(GRADS, spec))


# ---------------------------------------------------------------------- item 8: zip bombs
def test_zip_bomb_member_is_refused_before_it_is_unpacked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """32 MiB of momentum for a 3-element key, deflated to ~32 KiB: refused from the size
    the archive declares, before one byte is inflated (the old import unpacked it whole)."""
    folder, state = exported(tmp_path)
    meta, members = read_members(state)
    index = [key for _, key in meta["keys"]].index("w")
    members[f"state/{index}/momentum"] = bomb_member(4 << 20)
    from tests.optim.statefiles import write_members

    write_members(state, meta, members, zipfile.ZIP_DEFLATED)
    assert state.stat().st_size < 100_000
    opened: list[str] = []
    real_open = zipfile.ZipFile.open

    def spy(self: zipfile.ZipFile, name: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(name.filename if isinstance(name, zipfile.ZipInfo) else name)
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    before = target_session(tmp_path)
    with Session("target", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="refused before unpacking"):
            session.import_(folder)
    assert f"state/{index}/momentum.npy" not in opened
    assert_target_unchanged(tmp_path, before)


def test_member_whose_header_claims_more_than_its_key_is_refused(tmp_path: Path) -> None:
    """A small member whose .npy header claims 2**40 elements: refused from the header."""
    folder, state = exported(tmp_path)

    def lie(meta: dict[str, Any], members: dict[str, bytes]) -> None:
        index = [key for _, key in meta["keys"]].index("w")
        members[f"state/{index}/momentum"] = npy_header((1 << 40,)) + bytes(24)

    rewrite(state, lie)
    with Session("target", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="'w' holds more than the 3 elements allowed"):
            session.import_(folder)


# ---------------------------------------------------------------------- the low items
def _count(meta: dict[str, Any], _: dict[str, bytes]) -> None:
    meta["counts"][0] = 10**400


def _num_update(meta: dict[str, Any], _: dict[str, bytes]) -> None:
    meta["extra"]["num_update"] = -1


def _wrong_shape(meta: dict[str, Any], members: dict[str, bytes]) -> None:
    index = [key for _, key in meta["keys"]].index("w")
    members[f"state/{index}/momentum"] = npy_bytes(np.zeros(2, np.float32))


def _unknown_key(meta: dict[str, Any], members: dict[str, bytes]) -> None:
    meta["keys"].append(["str", "ghost"])
    meta["counts"].append(1)


def _integer_state(meta: dict[str, Any], members: dict[str, bytes]) -> None:
    index = [key for _, key in meta["keys"]].index("w")
    members[f"state/{index}/momentum"] = npy_bytes(np.zeros(3, np.int64))


def _nan_rate(meta: dict[str, Any], _: dict[str, bytes]) -> None:
    meta["extra"]["lr_scheduler"] = {"base_lr": float("nan")}


BAD_STATES = [
    (_count, "a 401-digit number, not a whole number from 0 to 2\\*\\*62"),
    (_num_update, "num_update is -1"),
    (_wrong_shape, r"has shape \(2,\) but the key's value has shape \(3,\)"),
    (_unknown_key, "key 'ghost', which the manifest does not list"),
    (_integer_state, "has dtype int64; sgd keeps float arrays"),
    (_nan_rate, "base_lr is nan, not a finite number"),
]


@pytest.mark.parametrize(("change", "message"), BAD_STATES, ids=[c.__name__.strip("_") for c, _ in BAD_STATES])
def test_bad_state_is_refused_at_import_with_nothing_changed(tmp_path: Path, change: Any, message: str) -> None:
    spec = SPEC + ",schedule=factor:step=5" if change is _nan_rate else SPEC
    folder, state = exported(tmp_path, spec)
    rewrite(state, change)
    before = target_session(tmp_path)
    with Session("target", tmp_path / "home") as session:
        with pytest.raises(SessionError, match=message) as caught:
            session.import_(folder)
    assert "\n" not in str(caught.value)
    assert_target_unchanged(tmp_path, before)


@pytest.mark.parametrize(("change", "message"), BAD_STATES[:3], ids=["count", "num_update", "wrong_shape"])
def test_bad_state_in_a_session_refuses_the_push_and_changes_nothing(tmp_path: Path, change: Any, message: str) -> None:
    with Session("s", tmp_path / "home") as session:
        session.init(["w"], [np.ones(3, np.float32)])
        session.set_updater(SPEC)
        session.push(["w"], [GRADS[0]])
        rewrite(state_file(session.path), change)
        committed = read_manifest(session.path)
    with Session("s", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="is corrupted"):
            session.push(["w"], [GRADS[1]])
        assert read_manifest(session.path) == committed
        np.testing.assert_array_equal(session.pull(["w"])[0][0], expected_after(GRADS[:1]))


@pytest.mark.parametrize("content", [npy_bytes(np.zeros(3, np.float32)), b"", b"PK\x03\x04 not really a zip"])
def test_a_state_file_that_is_not_a_zip_archive_is_one_line(tmp_path: Path, content: bytes) -> None:
    """A .npy in place of the .npz was an AttributeError traceback at import."""
    folder, state = exported(tmp_path)
    state.write_bytes(content)
    before = target_session(tmp_path)
    with Session("target", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="is not an optimizer state file written by kvcli") as caught:
            session.import_(folder)
    assert "\n" not in str(caught.value)
    assert_target_unchanged(tmp_path, before)


def test_kvcli_import_of_a_hostile_state_file_is_one_line_exit_1(tmp_path: Path) -> None:
    folder, state = exported(tmp_path)
    evil, mark = write_evil(tmp_path)
    rewrite(state, lambda meta, _: meta.update(spec=f"python:{evil}:Opt"))
    done = subprocess.run([str(KVCLI), "import", str(folder)], env=kvcli_env(tmp_path / "cli-home"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "names Python code" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not mark.exists()
