"""``kvcli load-params`` / ``save-params`` and ``viz``/``summary --session`` (issue 37): the
README's flow on a checkpoint MXNet 1.9.1 wrote, compared with the file MXNet saved after the
same training step (tests/data/make_mxnet_params_flow.py); replacing keys and files asks; bad
input is one line with nothing changed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kvcli.session.db import load_raw

from .conftest import Runner

DATA = Path(__file__).resolve().parents[1] / "data"
FLOW = DATA / "mxnet_params_flow"
CNN = DATA / "mxnet_checkpoint"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    for name in ("small_cnn-symbol.json", "small_cnn-0000.params"):
        shutil.copy(CNN / name, folder / name)
    for name in ("grad1.npy", "grad2.npy"):
        shutil.copy(FLOW / name, folder / name)
    return folder


def test_the_readme_flow_saves_the_bytes_mxnet_saved(kv: Runner, work: Path) -> None:
    flow = json.loads((FLOW / "flow.json").read_text())
    steps = [
        ("--session", "cnn", "load-params", str(work / "small_cnn-0000.params")),
        ("--session", "cnn", "set-updater", flow["optimizer"]),
        ("--session", "cnn", "push", flow["key"], f"@{work / 'grad1.npy'}"),
        ("--session", "cnn", "push", flow["key"], f"@{work / 'grad2.npy'}"),
        ("--session", "cnn", "save-params", str(work / "small_cnn-0001.params")),
    ]
    for step in steps:
        done = kv(*step)
        assert done.code == 0, (step, done.err)
    assert (work / "small_cnn-0001.params").read_bytes() == (FLOW / "trained-0001.params").read_bytes()
    assert (work / "small_cnn-0001.params").stat().st_mode & 0o777 == 0o600
    summary = kv("summary", str(work / "small_cnn-symbol.json"), "--shape", "data=1,1,8,8", "--session", "cnn", "--json")
    assert summary.code == 0, summary.err
    check = json.loads(summary.out)["params_check"]
    assert check["file"] == "session 'cnn'" and check["matched"] == 10 and check["problems"] == []
    assert check["versions"]["fc1_weight"] == 3 and check["versions"]["fc2_weight"] == 1
    page = kv("viz", str(work / "small_cnn-symbol.json"), "--shape", "data=1,1,8,8", "-s", "cnn",
              "-o", str(work / "cnn.html"))
    assert page.code == 0, page.err
    assert '"versions":{"conv1_weight":1' in (work / "cnn.html").read_text()
    assert "the newest checkpoint" not in page.err  # --session: no checkpoint pickup beside the file


def test_the_messages_say_what_was_done(kv: Runner, work: Path) -> None:
    done = kv("load-params", str(work / "small_cnn-0000.params"), "--keys", "arg:fc*")
    assert done.code == 0 and done.err.strip() == (
        f"loaded 4 keys (1.3 KiB) from {work / 'small_cnn-0000.params'} into session default")
    again = kv("load-params", str(work / "small_cnn-0000.params"), "--keys", "arg:fc1*,arg:conv1_weight", "--json")
    assert again.code == 1 and "pass --yes to confirm" in again.err
    assert "would replace the values of 2 keys of session 'default' (arg:fc1_weight, arg:fc1_bias)" in again.err
    yes = kv("load-params", str(work / "small_cnn-0000.params"), "--keys", "arg:fc1*,arg:conv1_weight", "--json",
             "--yes")
    assert yes.code == 0, yes.err
    assert json.loads(yes.out) == {"session": "default", "file": str(work / "small_cnn-0000.params"),
                                   "keys": ["arg:conv1_weight", "arg:fc1_weight", "arg:fc1_bias"],
                                   "replaced": ["arg:fc1_weight", "arg:fc1_bias"], "bytes": 1328}
    saved = kv("save-params", str(work / "fc.params"), "arg:fc2_bias,arg:fc2_weight", "arg:conv1_weight")
    assert saved.code == 0 and saved.err.strip() == (
        f"saved 3 keys (252 B) of session default to {work / 'fc.params'}")


def test_replacing_a_file_asks_and_keeps_it_without_yes(kv: Runner, work: Path) -> None:
    assert kv("load-params", str(work / "small_cnn-0000.params")).code == 0
    target = work / "out.params"
    target.write_bytes(b"precious")
    refused = kv("save-params", str(target))
    assert refused.code == 1 and len(refused.err.strip().splitlines()) == 1
    assert "exists: save-params replaces it" in refused.err and "--yes" in refused.err
    assert target.read_bytes() == b"precious"
    assert kv("save-params", str(target), "--yes").code == 0
    assert target.read_bytes() == (CNN / "small_cnn-0000.params").read_bytes()


def _state(home: Path) -> tuple[object, list[str]]:
    path = home / "sessions" / "default"
    return load_raw(path), sorted(os.listdir(path / "data"))


@pytest.mark.parametrize("args, found", [
    (["{bad}"], "truncated"),
    (["{names}"], "would be the key 'conv/w', which is not allowed"),
    (["{names}", "--keys", "nothing*"], "--keys 'nothing*' matches no array of"),
    (["{sparse}"], "is row_sparse: a session holds dense arrays only"),
    (["{folder}"], "it is not a regular file"),
])
def test_bad_input_is_one_line_and_changes_nothing(kv: Runner, work: Path, home: Path, args: list[str],
                                                   found: str) -> None:
    from kvcli.arrays import mxparams
    import numpy as np

    assert kv("load-params", str(FLOW / "dtypes.params")).code == 0
    (work / "bad.params").write_bytes((CNN / "small_cnn-0000.params").read_bytes()[:300])
    mxparams.save(work / "names.params", [np.ones(2, np.float32)], ["conv/w"])
    files = {"bad": work / "bad.params", "names": work / "names.params", "folder": work,
             "sparse": DATA / "mxnet_params_sparse" / "mixed_dict.params"}
    before = _state(home)
    done = kv("load-params", *[a.format(**files) for a in args], "--yes")
    assert done.code == 1 and len(done.err.strip().splitlines()) == 1, done.err
    assert found in done.err and done.err.startswith("error: ")
    assert _state(home) == before


def test_a_name_that_is_no_key_says_which_flags_rename_it(kv: Runner, work: Path) -> None:
    from kvcli.arrays import mxparams
    import numpy as np

    mxparams.save(work / "names.params", [np.ones(2, np.float32)], ["model/fc"])
    done = kv("load-params", str(work / "names.params"))
    assert done.code == 1
    assert "rename with --strip-prefix/--prefix, or leave it out with --keys" in done.err
    assert kv("load-params", str(work / "names.params"), "--keys", "").code == 2


def test_session_and_params_together_are_refused(kv: Runner, work: Path) -> None:
    assert kv("load-params", str(work / "small_cnn-0000.params")).code == 0
    done = kv("summary", str(work / "small_cnn-symbol.json"), "--params", str(work / "small_cnn-0000.params"),
              "--session", "default")
    assert done.code == 1 and "--params and --session together" in done.err
    missing = kv("summary", str(work / "small_cnn-symbol.json"), "--session", "nope")
    assert missing.code == 1 and "session 'nope' does not exist" in missing.err
