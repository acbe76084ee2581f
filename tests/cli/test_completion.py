"""Completion: the scripts typer generates for bash, zsh and fish, the answers the kvcli
binary gives to their requests (commands, options, sessions, keys), and the shell's own
completer and argument hints."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from kvcli.cli.shell import Shell, argument_hint, candidates
from kvcli.session import Session

from tests.runner import kvcli_env

from .conftest import KVCLI, Runner

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
    assert argument_hint(shell, "pull 3") == "pull KEY [--devices N] [--output FILE] [--yes]"
    assert argument_hint(shell, "sessions delete") == "sessions delete NAME [--yes]"
    assert argument_hint(shell, "shell") == "" and argument_hint(shell, "") == ""


# ---------------------------------------------------------------------- as the shells really send it
def _script(kv: Runner, shell: str, folder: Path) -> Path:
    """The completion script ``kvcli --show-completion SHELL`` prints (what users install)."""
    result = kv("--show-completion", shell, env=EXPLICIT_SHELL)
    assert result.code == 0, result
    path = folder / f"kvcli-completion.{shell}"
    path.write_text(result.out)
    return path


def _shell_env(home: Path) -> dict[str, str]:
    env = kvcli_env(home)
    env["PATH"] = f"{KVCLI.parent}:{env['PATH']}"
    return env


#: (line, COMP_WORDS, COMP_CWORD) as bash 5.2 sets them for a line typed up to the cursor:
#: it splits words at COMP_WORDBREAKS (":" and "=" among them), and a line ending at a break
#: names the break as the current word (recorded with `complete -F` and a function that
#: prints them; test_bash_in_a_terminal types the first lines for real)
BASH_SENDS = [
    ("kvcli set-updater adam:", ["kvcli", "set-updater", "adam", ":"], 3),
    ("kvcli set-updater adam:l", ["kvcli", "set-updater", "adam", ":", "l"], 4),
    ("kvcli set-updater adam:lr=0.1,be", ["kvcli", "set-updater", "adam", ":", "lr", "=", "0.1,be"], 6),
    ("kvcli --type=d", ["kvcli", "--type", "=", "d"], 3),
    ("kvcli --type=", ["kvcli", "--type", "="], 2),
    ("kvcli set-updater 'adam:l", ["kvcli", "set-updater", "'adam:l"], 2),
    ("kvcli -s ex", ["kvcli", "-s", "ex"], 2),
]


def _bash_function(script: Path, home: Path, words: list[str], cword: int, line: str) -> list[str]:
    """COMPREPLY of the installed completion function, called with the variables bash sets."""
    program = (f"source {shlex.quote(str(script))}\n"
               "function=$(complete -p kvcli | sed -E 's/.* -F ([^ ]+) .*/\\1/')\n"
               f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); COMP_CWORD={cword}\n"
               f"COMP_LINE={shlex.quote(line)}; COMP_POINT={len(line)}\n"
               '"$function" kvcli "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"\n'
               'printf "%s\\n" "${COMPREPLY[@]}"\n')
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True,
                          env=_shell_env(home), timeout=60)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.split("\n") if line]


def test_bash_completes_specs_and_option_values_from_the_words_bash_sends(kv: Runner, home: Path) -> None:
    assert kv("-s", "exp1", "init", "x", "ones(1)").code == 0
    script = _script(kv, "bash", home.parent)
    answers = {line: _bash_function(script, home, words, cword, line) for line, words, cword in BASH_SENDS}
    # each answer replaces what readline completes: the text after the last ':' or '='
    assert answers["kvcli set-updater adam:"][:3] == ["lr=", "beta1=", "beta2="]
    assert answers["kvcli set-updater adam:l"] == ["lr=", "lazy_update="]
    assert answers["kvcli set-updater adam:lr=0.1,be"] == ["0.1,beta1=", "0.1,beta2=", "0.1,begin_num_update="]
    assert answers["kvcli --type=d"] == ["device", "dist_sync", "dist_async"]
    assert answers["kvcli --type="] == ["local", "device", "dist_sync", "dist_async"]
    assert answers["kvcli set-updater 'adam:l"] == ["adam:lr=", "adam:lazy_update="]  # quoted: one word
    assert answers["kvcli -s ex"] == ["exp1"]


class Terminal:
    """A shell in a tmux window: type, press Tab, read the screen."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.name = f"kvcli-completion-{id(self)}"
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", "200", "-y", "50", "-c", str(cwd),
                        *(f"-e{k}={v}" for k, v in env.items() if k in ("PATH", "KVCLI_HOME", "PYTHONPYCACHEPREFIX",
                                                                        "NO_COLOR", "HOME")),
                        shlex.join(command)], check=True, env=env)

    def screen(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True).stdout

    def wait_for(self, text: str, seconds: float = 30) -> str:
        deadline = time.monotonic() + seconds
        while True:
            screen = self.screen()
            if text in screen or time.monotonic() > deadline:
                return screen
            time.sleep(0.2)

    def complete(self, line: str, expect: str) -> str:
        """Type ``line``, press Tab (each shell here lists several answers at once), give the
        screen once ``expect`` shows; then clear the line."""
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", line], check=True)
        subprocess.run(["tmux", "send-keys", "-t", self.name, "Tab"], check=True)
        screen = self.wait_for(expect)
        subprocess.run(["tmux", "send-keys", "-t", self.name, "C-c"], check=True)
        subprocess.run(["tmux", "send-keys", "-t", self.name, "clear", "Enter"], check=True)
        time.sleep(0.5)
        return screen

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False)


@pytest.fixture
def terminal_setup(kv: Runner, home: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    for tool in ("tmux",):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("")  # what a shell lists when it falls back to files
    return work, _shell_env(home)


def _bash(script: Path, folder: Path) -> list[str]:
    rc = folder / "bashrc"  # show-all-if-ambiguous: one Tab lists the answers, as a second would
    rc.write_text(f"PS1='$ '\nbind 'set show-all-if-ambiguous on'\nsource {shlex.quote(str(script))}\n")
    return ["bash", "--noprofile", "--rcfile", str(rc), "-i"]


def _zsh(script: Path, folder: Path) -> list[str]:
    zdot = folder / "zdot"
    zdot.mkdir()
    (zdot / ".zshrc").write_text(  # nolistambiguous: one Tab lists the answers
        f"PS1='%% '\nsetopt nolistambiguous\nautoload -Uz compinit && compinit -u\nsource {shlex.quote(str(script))}\n")
    return ["env", f"ZDOTDIR={zdot}", "zsh", "-i"]


def _fish(script: Path, folder: Path) -> list[str]:
    rc = folder / "rc.fish"
    rc.write_text(f"function fish_prompt; echo '> '; end\nsource {shlex.quote(str(script))}\n")
    return ["fish", "--no-config", "-C", f"source {rc}"]


#: shell, how to start it, its prompt, then (line typed, what the screen must show once
#: Tab answered). bash replaces the text after the last ':' or '=' (its words); zsh and fish
#: the whole word (fish may cut the front of a long entry: "…ype=dist_sync"). A file name on
#: the screen means the shell fell back to files; fish, though, shows a file of its own as a
#: grey suggestion after a ':' whatever kvcli answers, so it is not checked there.
TERMINALS = [
    ("bash", _bash, "$", [("kvcli set-updater adam:", ["lr=", "beta1="]),
                          ("kvcli set-updater adam:lr=0.1,bet", ["0.1,beta1=", "0.1,beta2="]),
                          ("kvcli --type=dist", ["dist_sync", "dist_async"])]),
    ("zsh", _zsh, "%", [("kvcli set-updater adam:", ["adam:lr=", "adam:beta1="]),
                        ("kvcli --type=dist", ["--type=dist_sync", "--type=dist_async"])]),
    ("fish", _fish, ">", [("kvcli set-updater adam:", ["adam:lr=", "adam:beta1="]),
                          ("kvcli --type=dist", ["=dist_sync", "=dist_async"])]),
]


@pytest.mark.parametrize("name, start, prompt, cases", TERMINALS, ids=[t[0] for t in TERMINALS])
def test_completion_in_a_terminal(kv: Runner, home: Path, terminal_setup: tuple[Path, dict[str, str]], name: str,
                                  start: object, prompt: str, cases: list[tuple[str, list[str]]]) -> None:
    if shutil.which(name) is None:
        pytest.skip(f"{name} is not installed")
    work, env = terminal_setup
    command = start(_script(kv, name, home.parent), home.parent)  # type: ignore[operator]
    shell = Terminal(command, work, env)
    try:
        shell.wait_for(prompt)  # tmux drops the space after it
        for line, shown in cases:
            screen = shell.complete(line, shown[-1])
            assert all(text in screen for text in shown), (line, screen)
            assert name == "fish" or "notes.txt" not in screen, (line, screen)
    finally:
        shell.close()
