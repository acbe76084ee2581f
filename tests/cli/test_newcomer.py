"""What cost a new user time (issue 23, item 5): the shell through a real terminal (pexpect),
and the one-shot commands' wording and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import KVCLI, Runner, kvcli_env

pexpect = pytest.importorskip("pexpect", reason="pexpect is in the [test] extra: pip install -e '.[test]'")


def test_tab_completes_a_command_with_its_space_and_exit_n_exits_n(kv: Runner, home: Path) -> None:
    # an xterm, so that what Tab inserted is drawn (a dumb terminal shows only what was typed)
    shell = pexpect.spawn(str(KVCLI), ["shell"], env=kvcli_env(home, TERM="xterm"), encoding="utf-8", timeout=60,
                          dimensions=(40, 200))
    shell.expect("kvcli:default>")
    shell.send("in\t")  # Tab: `init ` with its space (drawn as a step right), so the key gives `init 3`
    shell.expect(r"it(\x1b\[C| )")  # completion runs in the background: wait for it before typing on
    shell.send("3 'ones(2)*4'\r")
    shell.expect("initialised key 3")
    shell.expect("kvcli:default>")
    shell.send("pul\t")
    shell.expect(r"l(\x1b\[C| )")
    shell.send("3\r")
    shell.expect(r"\[4\. 4\.\]")
    shell.expect("kvcli:default>")
    shell.send("clear\r")
    shell.expect(r"\x1b\[2J")
    shell.expect("kvcli:default>")
    shell.send("exit 3\r")
    shell.expect(pexpect.EOF)
    shell.close()
    assert shell.exitstatus == 3
    assert "No such command" not in shell.before and "Traceback" not in shell.before
    assert kv("pull", "3").array().tolist() == [4, 4]


def test_clear_writes_the_terminal_codes_only_to_a_terminal(kv: Runner) -> None:
    result = kv("shell", input=b"clear\nexit 0\n")
    assert result.code == 0 and result.out == "" and result.err == ""


@pytest.mark.parametrize("line, code", [("exit", 0), ("exit 0", 0), ("exit 7", 7), ("quit 255", 255)])
def test_exit_code_of_a_script(kv: Runner, line: str, code: int) -> None:
    assert kv("shell", input=f"{line}\npull nothing\n".encode()).code == code  # nothing after exit runs


def test_a_bad_exit_is_an_error_line(kv: Runner) -> None:
    result = kv("shell", input=b"exit 256\n")
    assert result.code == 1 and "exit takes one number from 0 to 255" in result.err


def test_help_of_an_unknown_command_speaks_the_front_ends_words(kv: Runner) -> None:
    result = kv("help", "nosuch")
    assert result.code == 2
    assert result.err.strip() == "error: no command 'nosuch': see `kvcli help`"
    inside = kv("shell", input=b"help nosuch\n")
    assert "error: no command 'nosuch': see `help`" in inside.err


def test_deleting_a_missing_session_does_not_suggest_creating_it(kv: Runner, home: Path) -> None:
    assert kv("-s", "mine", "init", "k", "ones(1)").code == 0
    result = kv("sessions", "delete", "nosuch", "--yes")
    assert result.code == 1
    assert "session 'nosuch' does not exist" in result.err and "(sessions: mine)" in result.err
    assert "nothing was deleted" in result.err and "init" not in result.err


@pytest.mark.parametrize("command", ["init", "push"])
def test_a_misspelt_dtype_is_a_usage_error(kv: Runner, command: str) -> None:
    assert kv("init", "k", "ones(2)").code == 0
    result = kv(command, "k", "ones(2)", "--dtype", "flaot32")
    assert result.code == 2
    assert "--dtype 'flaot32' is not a dtype: did you mean float32?" in result.err
    assert kv("pull", "k", "--json").out.count("float32") == 1  # unchanged


@pytest.mark.parametrize("key", ["-1", "1.5", "1e3", "+2", ".5", "1234567890123456789"])
def test_a_number_that_is_not_an_int_key_is_refused(kv: Runner, home: Path, key: str) -> None:
    result = kv("init", "--", key, "ones(2)")
    assert result.code == 1 and f"key '{key}' is a number but not an int key" in result.err
    assert not (home / "sessions" / "default").exists()


def test_names_with_digits_stay_str_keys(kv: Runner) -> None:
    assert kv("init", "w1,1a,e5,v1.5", "ones(1)").code == 0
    assert sorted(kv("keys").out.split()) == ["1a", "e5", "v1.5", "w1"]


@pytest.mark.parametrize("value", ["-ones(2)", "-1", "-.5"])
def test_a_value_read_as_an_option_says_to_put_double_dash(kv: Runner, value: str) -> None:
    assert kv("init", "k", "ones(2)").code == 0
    result = kv("push", "k", value)
    assert result.code == 2
    assert f"{value!r} is read as an option: put -- before a value that starts with '-'" in result.err
    assert "e.g. `kvcli push k -- " in result.err
    assert kv("push", "k", "--", value if "(" in value else f"full(2,{value})").code == 0  # the advice works


def test_a_misspelt_option_is_still_a_misspelt_option(kv: Runner) -> None:
    result = kv("push", "k", "--devics", "2", "ones(2)")
    assert result.code == 2 and "No such option: --devics" in result.err


def test_store_option_advice_names_a_store_that_takes_it(kv: Runner) -> None:
    assert kv("init", "k", "ones(2)").code == 0  # a local session
    result = kv("--num-devices", "4", "show")
    assert result.code == 1
    assert "run `kvcli reset --type device --num-devices 4`" in result.err
    assert kv("--type", "device", "--num-devices", "4", "reset", "--yes").code == 0  # the advice works


def test_viz_wrong_extension_lists_html(tmp_path: Path) -> None:
    from tests.runner import run_kvcli

    model = Path(__file__).resolve().parents[2] / "sample_graphs" / "mlp.json"
    result = run_kvcli("viz", str(model), "-o", str(tmp_path / "out.jpg"), home=tmp_path)
    assert result.returncode == 1
    assert "unknown output format '.jpg'; use one of .svg, .pdf, .png, .dot, .html" in result.stderr


def test_viz_open_without_a_browser_is_an_error(tmp_path: Path) -> None:
    from tests.runner import run_kvcli

    model = Path(__file__).resolve().parents[2] / "sample_graphs" / "mlp.json"
    import shutil

    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("graphviz's dot is not installed")
    # PATH without any browser, no display: Python's webbrowser finds none
    env = {"PATH": str(Path(KVCLI).parent), "BROWSER": "", "DISPLAY": "", "WAYLAND_DISPLAY": "", "KVCLI_DOT": dot}
    result = run_kvcli("viz", str(model), "--open", home=tmp_path, env=env)
    assert result.returncode == 1 and "no web browser was found to open" in result.stderr
    page = Path(result.stderr.split("to open ")[1].split(":")[0])
    assert page.suffix == ".html" and page.stat().st_size > 0  # the page is there to open by hand
    result = run_kvcli("viz", str(model), "--open", home=tmp_path, env={"BROWSER": "true"})
    assert result.returncode == 0 and "wrote" in result.stdout
