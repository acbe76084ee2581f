"""The KVCLI_* variables: one table (kvcli.config), one check, docs/environment.md in step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvcli import config
from kvcli.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_the_guide_lists_exactly_the_declared_variables() -> None:
    assert config.markdown_table() in (ROOT / "docs" / "environment.md").read_text()


def test_no_module_reads_a_kvcli_variable_behind_the_tables_back() -> None:
    """os.environ access to a KVCLI_* name happens in kvcli/config.py only."""
    pattern = re.compile(r"""environ(\.get)?\(?\[?\s*["']KVCLI_|getenv\(\s*["']KVCLI_""")
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "kvcli").rglob("*.py")
        if path.name != "config.py" and pattern.search(path.read_text())
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("variable", "text", "problem"),
    [
        (config.MAX_ELEMENTS, "abc", "is not a whole number"),
        (config.MAX_ELEMENTS, "0", "is outside 1..4,611,686,018,427,387,904"),
        (config.LOCK_TIMEOUT, "-1", "is outside 0..86,400"),
        (config.STREAM_TIMEOUT, "nan", "is not a finite number"),
        (config.RANK, "1.5", "is not a whole number"),
        (config.SESSION, "a\x01b", "holds control characters"),
    ],
)
def test_bad_values_are_one_error_naming_the_variable(monkeypatch, variable, text, problem) -> None:
    monkeypatch.setenv(variable.name, text)
    with pytest.raises(ConfigError, match=re.escape(f"{variable.name}={text!r} {problem}")) as caught:
        config.get(variable)
    assert caught.value.fields["variable"] == variable.name


def test_values_defaults_and_empty(monkeypatch) -> None:
    monkeypatch.setenv("KVCLI_MAX_ELEMENTS", "1000")
    monkeypatch.setenv("KVCLI_LOCK_TIMEOUT", "")
    monkeypatch.setenv("KVCLI_HOME", "~/x")
    monkeypatch.delenv("KVCLI_DIST_TIMEOUT", raising=False)
    assert config.get(config.MAX_ELEMENTS) == 1000
    assert config.get(config.LOCK_TIMEOUT) == 120.0  # empty is unset
    assert config.get(config.HOME) == str(Path.home() / "x")
    assert config.get(config.DIST_TIMEOUT) == 60.0


def test_the_cli_reports_a_bad_variable_and_changes_nothing(tmp_path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "KVCLI_HOME": str(tmp_path), "KVCLI_MAX_ELEMENTS": "lots"}
    kvcli = Path(sys.executable).with_name("kvcli")
    done = subprocess.run([str(kvcli), "init", "1", "ones(3)"], capture_output=True, text=True, env=env)
    assert done.returncode == 1
    assert "KVCLI_MAX_ELEMENTS='lots' is not a whole number" in done.stderr
    assert not (tmp_path / "sessions" / "default" / "session.db").exists()


@pytest.mark.parametrize(
    ("text", "kind", "low", "high", "value", "problem"),
    [
        ("12", "int", 1, 64, 12, None),
        (" 7 ", "int", None, None, 7, None),
        ("2.5", "float", 0.001, 86400.0, 2.5, None),
        ("abc", "int", 1, 64, None, "is not a whole number"),
        ("1.5", "int", 1, 64, None, "is not a whole number"),
        ("abc", "float", 0, 1, None, "is not a number"),
        ("inf", "float", None, None, None, "is not a finite number"),
        ("65", "int", 1, 64, None, "is outside 1..64"),
        ("0", "float", 0.001, 86400.0, None, "is outside 0.001..86,400"),
        ("0", "int", 1, None, None, "is less than 1"),
        ("9", "int", None, 5, None, "is more than 5"),
    ],
)
def test_one_parser_reads_every_bounded_number(text, kind, low, high, value, problem) -> None:
    from kvcli.errors import BadValueError

    if problem is None:
        assert config.parse_number(text, kind, low, high) == value
        return
    with pytest.raises(BadValueError, match=f"^{re.escape(problem)}$"):
        config.parse_number(text, kind, low, high)


def _kvcli(*args: str, home: Path, **env: str):
    from tests.runner import run_kvcli

    return run_kvcli(*args, home=home, env=env)


@pytest.mark.parametrize("fast", ["", "1"])
def test_a_bad_option_number_is_the_one_parsers_line_on_both_paths(tmp_path, fast: str) -> None:
    done = _kvcli("pull", "k", "-d", "0", home=tmp_path, KVCLI_NO_FAST_PATH=fast)
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["error: Invalid value for '--devices' / '-d': '0' is outside 1..1,024: "
                                        "see `kvcli help pull`"]
    # launch --timeout has KVCLI_DIST_TIMEOUT's bounds (one range for the option and the variable)
    done = _kvcli("launch", "-n", "1", "--timeout", "0", "--", "true", home=tmp_path, KVCLI_NO_FAST_PATH=fast)
    assert done.returncode == 2
    assert "'0' is outside 0.001..86,400" in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("fast", ["", "1"])
def test_a_variable_an_option_stands_for_is_read_by_config_on_both_paths(tmp_path, fast: str) -> None:
    """typer and the fast path never read KVCLI_SESSION themselves: config.get does, so a bad
    value is config's one line (exit 1), not typer's usage error nor a raw session name."""
    done = _kvcli("keys", home=tmp_path, KVCLI_SESSION="a\x01b", KVCLI_NO_FAST_PATH=fast)
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["error: KVCLI_SESSION='a\\x01b' holds control characters: set it to a "
                                        "valid value or unset it"]
    assert not (tmp_path / "sessions").exists()


def test_launch_checks_its_variables_before_it_starts_anything(tmp_path) -> None:
    done = _kvcli("launch", "-n", "1", "--", "true", home=tmp_path, KVCLI_DIST_TIMEOUT="abc")
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["error: KVCLI_DIST_TIMEOUT='abc' is not a number: set it to a valid value "
                                        "(the default is 60.0) or unset it"]


def test_the_typer_app_reads_no_variable_itself() -> None:
    """Options that stand for a KVCLI_* variable leave it to config.get: typer is given no envvar."""
    from kvcli.cli.build import root_command

    def params(command):
        yield from command.params
        for sub in getattr(command, "commands", {}).values():
            yield from params(sub)

    with_envvar = [p.name for p in params(root_command()) if getattr(p, "envvar", None)]
    assert with_envvar == []
