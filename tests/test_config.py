"""The KVCLI_* variables: one table (kvcli.config), one check, the README in step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvcli import config
from kvcli.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_readme_lists_exactly_the_declared_variables() -> None:
    assert config.markdown_table() in (ROOT / "README.md").read_text()


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
