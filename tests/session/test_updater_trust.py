"""Item 6 of issue 15: a ``python:`` updater runs only from a file the user named in this home.

Before, a manifest naming ``python:/some/evil.py:f`` (another user's home, an imported
folder) made the next push run that file; a changed file ran new code silently, and the
file was imported again on every push.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import SessionError
from kvcli.session import Session
from tests.session.legacy import read_manifest, write_legacy

UPDATER = """
import os
MARK = {mark!r}
with open(MARK, "a") as handle:  # one line per time this module is executed
    handle.write("loaded\\n")

def {name}(key, merged, stored):
    stored[:] = stored + {factor} * merged
"""


def write_updater(path: Path, mark: Path, factor: float = 2.0, name: str = "f") -> Path:
    path.write_text(UPDATER.format(mark=str(mark), name=name, factor=factor))
    return path


def loads(mark: Path) -> int:
    return len(mark.read_text().splitlines()) if mark.exists() else 0


def manifest(session: Session) -> dict:
    return read_manifest(session.path)


def test_set_updater_stores_the_absolute_path_and_the_content_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    source = write_updater(work / "upd.py", tmp_path / "mark")
    monkeypatch.chdir(work)
    with Session("s", tmp_path / "home") as session:
        spec = session.set_updater("python:upd.py:f")  # relative: resolved here, now
        assert spec == f"python:{source.resolve()}:f"
        trust = manifest(session)["updater_trust"]
        assert trust["path"] == str(source.resolve())
        assert trust["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
        session.init(["k"], [np.ones(3, np.float32)])
    # another directory with another upd.py changes nothing
    other = tmp_path / "other"
    other.mkdir()
    write_updater(other / "upd.py", tmp_path / "other-mark", factor=100.0)
    monkeypatch.chdir(other)
    with Session("s", tmp_path / "home") as session:
        session.push(["k"], [np.ones(3, np.float32)])
        assert session.pull(["k"])[0][0].tolist() == [3, 3, 3]
    assert not (tmp_path / "other-mark").exists()


def test_module_is_loaded_once_per_process(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    source = write_updater(tmp_path / "once.py", mark)
    home = tmp_path / "home"
    with Session("s", home) as session:
        session.init(["k"], [np.zeros(2, np.float32)])
        session.set_updater(f"python:{source}:f")
        for _ in range(3):
            session.push(["k"], [np.ones(2, np.float32)])
    for _ in range(2):  # new Session objects (as one-shot commands in one process are)
        with Session("s", home) as session:
            session.push(["k"], [np.ones(2, np.float32)])
    assert session.pull(["k"])[0][0].tolist() == [10, 10]
    assert loads(mark) == 1


def test_changed_file_is_refused_until_set_updater_again(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    source = write_updater(tmp_path / "upd.py", mark)
    with Session("s", tmp_path / "home") as session:
        session.init(["k"], [np.zeros(2, np.float32)])
        session.set_updater(f"python:{source}:f")
    write_updater(source, mark, factor=50.0)  # edited afterwards
    with Session("s", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="changed since the updater was set") as caught:
            session.push(["k"], [np.ones(2, np.float32)])
        assert "\n" not in str(caught.value)
        assert session.pull(["k"])[0][0].tolist() == [0, 0]
        assert "refused" in session.describe()["warnings"][0]
        session.set_updater(f"python:{source}:f")  # the user looks at it and trusts it again
        session.push(["k"], [np.ones(2, np.float32)])
        assert session.pull(["k"])[0][0].tolist() == [50, 50]


def test_foreign_manifest_naming_code_is_refused_and_the_code_never_runs(tmp_path: Path) -> None:
    """Someone else's home: the manifest names evil.py with its true hash but cannot make
    the MAC, which needs this user's key."""
    mark = tmp_path / "evil-ran"
    evil = write_updater(tmp_path / "evil.py", mark)
    with Session("s", tmp_path / "home") as session:
        session.init(["k"], [np.zeros(2, np.float32)])
    data = manifest(session)
    data["updater"] = f"python:{evil}:f"
    digest = hashlib.sha256(evil.read_bytes()).hexdigest()
    data["updater_trust"] = {"path": str(evil), "sha256": digest, "mac": "0" * 64}
    write_legacy(session.path, data)
    with Session("s", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="not set by this user in this home"):
            session.push(["k"], [np.ones(2, np.float32)])
        del data["updater_trust"]  # an old or hand-made manifest without a record
        write_legacy(session.path, data)
        with pytest.raises(SessionError, match="was not set with set-updater in this home"):
            session.push(["k"], [np.ones(2, np.float32)])
        warning = session.describe()["warnings"][0]
        assert str(evil) in warning and "refused" in warning
    assert not mark.exists()


def test_a_home_copied_elsewhere_must_trust_again(tmp_path: Path) -> None:
    import shutil

    source = write_updater(tmp_path / "upd.py", tmp_path / "mark")
    with Session("s", tmp_path / "home") as session:
        session.init(["k"], [np.zeros(2, np.float32)])
        session.set_updater(f"python:{source}:f")
    shutil.copytree(tmp_path / "home", tmp_path / "copy")
    with Session("s", tmp_path / "copy") as session:
        with pytest.raises(SessionError, match="not set by this user in this home"):
            session.push(["k"], [np.ones(2, np.float32)])


def test_import_never_adopts_code_and_says_so(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    source = write_updater(tmp_path / "upd.py", mark)
    with Session("a", tmp_path / "home") as session:
        session.init(["k"], [np.zeros(2, np.float32)])
        session.set_updater(f"python:{source}:f")
        session.export(tmp_path / "export")
    with Session("b", tmp_path / "home") as session:
        imported = session.import_(tmp_path / "export")
        assert imported.updater == "assign"
        assert "was not adopted" in session.notices[0] and str(source) in session.notices[0]
        session.push(["k"], [np.full(2, 7, np.float32)])
        assert session.pull(["k"])[0][0].tolist() == [7, 7]
        assert manifest(session)["updater_trust"] is None


def test_show_warns_when_a_session_carries_python_code(tmp_path: Path) -> None:
    source = write_updater(tmp_path / "upd.py", tmp_path / "mark")
    with Session("s", tmp_path / "home") as session:
        session.init(["k"], [np.zeros(2, np.float32)])
        assert session.describe()["warnings"] == []
        session.set_updater(f"python:{source}:f")
        warnings = session.describe()["warnings"]
        assert len(warnings) == 1 and str(source) in warnings[0] and "check that the file is yours" in warnings[0]


def test_trust_key_lives_outside_the_home_and_is_private(tmp_path: Path) -> None:
    from kvcli.session.trust import key_path

    source = write_updater(tmp_path / "upd.py", tmp_path / "mark")
    with Session("s", tmp_path / "home") as session:
        session.set_updater(f"python:{source}:f")
    key = key_path()
    assert key.is_file() and (key.stat().st_mode & 0o777) == 0o600
    assert tmp_path / "home" not in key.parents
    os.chmod(key, 0o644)
    with Session("s", tmp_path / "home") as session:
        with pytest.raises(SessionError, match="not a private file"):
            session.set_updater(f"python:{source}:f")
