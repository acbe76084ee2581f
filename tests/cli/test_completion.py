"""Completion: the scripts typer generates for bash, zsh and fish, the answers the kvcli
binary gives to their requests (commands, options, sessions, keys), and the shell's own
completer and argument hints."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from kvcli.cli.shell import Shell, argument_hint, candidates
from kvcli.session import Session

from .conftest import Runner

#: typer's switch to take the shell as the option's value instead of detecting it
EXPLICIT_SHELL = {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}


@pytest.mark.parametrize(("shell", "marker"), [("bash", "complete_bash"), ("zsh", "compdef"), ("fish", "complete_fish")])
def test_show_completion_prints_each_shells_script(kv: Runner, shell: str, marker: str) -> None:
    result = kv("--show-completion", shell, env=EXPLICIT_SHELL)
    assert result.code == 0, result
    assert "_KVCLI_COMPLETE" in result.out and marker in result.out


def test_install_completion_writes_the_script_and_sources_it(kv: Runner, tmp_path: Path) -> None:
    fake_home = tmp_path / "user"
    fake_home.mkdir()
    result = kv("--install-completion", "bash", env={**EXPLICIT_SHELL, "HOME": str(fake_home)})
    assert result.code == 0, result
    script = fake_home / ".bash_completions" / "kvcli.sh"
    assert "_KVCLI_COMPLETE=complete_bash" in script.read_text()
    assert f"source '{script}'" in (fake_home / ".bashrc").read_text()


def bash_complete(kv: Runner, line: str) -> list[str]:
    words = line.split(" ")
    result = kv(env={"_KVCLI_COMPLETE": "complete_bash", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)})
    assert result.code == 0, result
    return result.out.split()


def test_bash_completes_commands_options_sessions_and_keys(kv: Runner) -> None:
    assert kv("init", "fc1.weight,fc1.bias,out", "ones(2)").code == 0
    assert kv("-s", "exp1", "init", "x", "ones(1)").code == 0
    assert bash_complete(kv, "kvcli pu") == ["push", "pull"]
    assert bash_complete(kv, "kvcli pull --dev") == ["--devices"]
    assert bash_complete(kv, "kvcli -s e") == ["exp1"]
    assert bash_complete(kv, "kvcli pull fc1.") == ["fc1.weight", "fc1.bias"]
    assert bash_complete(kv, "kvcli pull fc1.weight,") == ["fc1.weight,fc1.bias", "fc1.weight,out"]
    assert bash_complete(kv, "kvcli -s exp1 pull ") == ["x"]
    assert bash_complete(kv, "kvcli --type dist") == ["dist_sync", "dist_async"]
    assert bash_complete(kv, "kvcli sessions delete e") == ["exp1"]
    assert bash_complete(kv, "kvcli set-updater sg") == ["sgd:", "sgld:"]


def test_bash_offers_every_optimizer_and_never_a_lone_open_spec(kv: Runner) -> None:
    # a lone candidate gets a space after it from bash: `adam:lr= ` was inserted so
    every = bash_complete(kv, "kvcli set-updater ")
    assert {"nag:", "rmsprop:", "adadelta:", "ftrl:", "lamb:", "sgd:", "adam:", "assign", "scale-add:"} <= set(every)
    assert len(every) >= 20
    assert bash_complete(kv, "kvcli set-updater ad") == ["adam:", "adamax:", "adagrad:", "adadelta:"]
    rms = bash_complete(kv, "kvcli set-updater rms")  # one optimizer: its arguments, no space after ':'
    assert "rmsprop:centered=" in rms and len(rms) > 1
    assert bash_complete(kv, "kvcli set-updater adam:l") == ["adam:lr=", "adam:lazy_update="]
    assert bash_complete(kv, "kvcli set-updater adam:lr=0.1,beta1") == ["adam:lr=0.1,beta1=", "adam:lr=0.1,beta1=0.9"]
    assert bash_complete(kv, "kvcli set-updater sc") == ["scale-add:", "scale-add:1"]
    for line in ("kvcli set-updater ", "kvcli set-updater n", "kvcli set-updater rmsprop:c", "kvcli set-updater s"):
        found = bash_complete(kv, line)
        assert len(found) != 1 or not found[0].endswith((":", "=")), (line, found)


def test_zsh_and_fish_answer_too(kv: Runner) -> None:
    assert kv("init", "alpha", "ones(2)").code == 0
    zsh = kv(env={"_KVCLI_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "kvcli pull al"})
    assert zsh.code == 0 and '"alpha"' in zsh.out
    fish = kv(env={"_KVCLI_COMPLETE": "complete_fish", "_TYPER_COMPLETE_ARGS": "kvcli pull --d",
                   "_TYPER_COMPLETE_FISH_ACTION": "get-args"})
    assert fish.code == 0 and fish.out.startswith("--devices")


@pytest.fixture
def shell(home: Path) -> Iterator[Shell]:
    with Session("default", home) as session:
        yield Shell(session)


def test_shell_completes_files_updaters_and_keys(shell: Shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    (work / "models").mkdir(parents=True)
    monkeypatch.chdir(work)
    (work / "w.npy").write_bytes(b"")
    (work / "notes.txt").write_text("")
    (work / "models" / "net.json").write_text("{}")
    assert shell.execute("init w1,w2 'ones(2)'") and shell.last_ok
    assert candidates(shell, ["init", "k"], "@") == ["models/", "w.npy"]  # .npy values and folders
    assert candidates(shell, ["pull", "k", "-o"], "") == ["models/", "notes.txt", "w.npy"]
    assert candidates(shell, ["viz"], "models/") == ["models/net.json"]  # viz's FILE completes files too
    assert candidates(shell, ["set-updater"], "s") == ["sum", "scale-add:", "sgd:", "signum:", "sgld:"]
    assert candidates(shell, ["set-updater"], "adam:lr=0.1,eps") == ["eps=", "eps=1e-08"]  # the last argument
    assert candidates(shell, ["pull"], "w") == ["w1", "w2"]
    assert candidates(shell, ["push"], "w1,") == ["w2"]
    assert candidates(shell, ["push", "w1"], "on") == ["ones("]
    assert candidates(shell, ["reset", "--type"], "d") == ["device", "dist_sync", "dist_async"]
    assert candidates(shell, ["sessions", "delete"], "") == ["default"]
    assert "shell" not in candidates(shell, [], "") and "launch" not in candidates(shell, [], "")
    assert candidates(shell, ["help"], "pu") == ["pull", "push"]


def test_shell_shows_the_arguments_of_the_command_being_typed(shell: Shell) -> None:
    assert argument_hint(shell, "push ") == "push KEY VALUE... [--devices N] [--dtype DTYPE]"
    assert argument_hint(shell, "pull 3") == "pull KEY [--devices N] [--output FILE]"
    assert argument_hint(shell, "sessions delete") == "sessions delete NAME [--yes]"
    assert argument_hint(shell, "shell") == "" and argument_hint(shell, "") == ""
