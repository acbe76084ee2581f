"""``kvcli export DIR`` where DIR cannot be made (issue 35, item 4): one line naming the real
problem, exit 1, nothing left behind, as ``pull -o`` does."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

import pytest

from tests.other_user import as_user, other_uid

from .conftest import Runner


def _one_line_error(result: object, expected: str) -> None:
    code, err = result.code, result.err
    assert code == 1, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("error: ") and expected in err, err


@pytest.mark.parametrize("where, expected", [
    ("afile.txt/out", "afile.txt is a file, not a folder"),
    ("afile.txt/out/deeper", "afile.txt is a file, not a folder"),
    ("afile.txt", "afile.txt is a file, not a folder: choose a new folder"),
    ("/proc/kvcli-export", "cannot create the export folder /proc/kvcli-export: No such file or directory"),
    ("full", "exists and is not empty: choose a new folder"),
])
def test_an_export_folder_that_cannot_be_made_is_one_line(kv: Runner, tmp_path: Path, where: str,
                                                         expected: str) -> None:
    assert kv("init", "w", "ones(3)").code == 0
    (tmp_path / "afile.txt").write_text("notes\n")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    before = sorted(p.name for p in tmp_path.iterdir())
    _one_line_error(kv("export", str(tmp_path / where) if not where.startswith("/") else where), expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "afile.txt").read_text() == "notes\n"


def _warm_up(scratch: Path) -> Callable[[], None]:
    """A first export as root in the child, so that every module the commands import on first
    use is loaded before it becomes the other user (the interpreter's files are under root's
    home, which that user cannot read)."""

    def run() -> None:
        for _ in range(2):  # the second is refused: an error is printed too
            _export_as_user(str(scratch / "home"), str(scratch / "out"), str(scratch / "log"))
        assert (scratch / "out").is_dir()

    return run


def _export_as_user(home: str, folder: str, log: str) -> list:
    """In the child (another user): ``kvcli export FOLDER``, its stderr into ``log``."""
    import contextlib
    import io

    from kvcli.cli.app import main

    os.environ["KVCLI_HOME"], os.environ["NO_COLOR"] = home, "1"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        for args in (["init", "w", "ones(3)"], ["export", folder]):
            try:
                main(args)
            except SystemExit as done:
                code = done.code
    Path(log).write_text(err.getvalue())
    return [code]


def test_an_export_into_a_read_only_folder_is_one_line() -> None:
    """As a user who may not write the folder (root writes anywhere)."""
    uid = other_uid()
    top = Path(tempfile.mkdtemp(prefix="kvcli-export-"))
    try:
        os.chmod(top, 0o755)
        home, readonly, log = top / "home", top / "readonly", top / "log"
        home.mkdir(mode=0o700)
        readonly.mkdir(mode=0o555)
        log.write_text("")
        for path in (home, readonly, log):
            os.chown(path, uid, uid)
        code = as_user(uid, _export_as_user, str(home), str(readonly / "out"), str(log), before=_warm_up(top / "scratch"))
        err = log.read_text()
        assert code == [1] and err.count("\n") == 2 and "Traceback" not in err, err  # init's line, then one
        assert f"error: cannot create the export folder {readonly / 'out'}: Permission denied" in err
        assert list(readonly.iterdir()) == []
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=False)
