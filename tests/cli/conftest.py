"""Fixtures for the CLI tests: run the real ``kvcli`` binary in a temporary home."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional

import numpy as np
import pytest

from tests.runner import KVCLI, run_kvcli  # noqa: F401 - KVCLI is used by this folder's tests
from tests.runner import kvcli_env as shared_env

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    code: int
    out: str
    err: str

    def array(self) -> np.ndarray:
        """The printed numpy array (all numbers of stdout, as floats)."""
        text = self.out.replace("[", " ").replace("]", " ")
        return np.array([float(x) for x in text.split()])


Runner = Callable[..., Result]


def kvcli_env(home: Path, **extra: str) -> dict[str, str]:
    return shared_env(home, **extra)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def kv(home: Path) -> Runner:
    """``kv("push", "3", "ones(3)")`` runs the kvcli binary; returns code, stdout, stderr."""

    def run(*args: str, input: Optional[bytes] = None, env: Optional[dict[str, str]] = None, timeout: float = 60) -> Result:
        proc = run_kvcli(*args, home=home, env=env, timeout=timeout, input=input)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run


class Parsed(NamedTuple):
    """What the parser hands the implementations for one command line (:func:`parse`)."""

    code: int
    #: the table's Command (None when the line is refused)
    command: Any
    options: Any
    values: dict[str, Any]


@pytest.fixture
def parse(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Parsed]:
    """``parse("pull", "3", "-d", "2")`` runs the real parser (:func:`kvcli.cli.app.run_line`)
    with the implementations replaced: the exit code, the table command that would run (None
    when the line is refused), its global options and its values. Errors are printed as the
    CLI prints them."""
    from kvcli.cli import build, output
    from kvcli.cli.app import run_line

    monkeypatch.setenv("NO_COLOR", "1")  # errors as plain text, in a console made for this test
    monkeypatch.setattr(output, "_stderr_console", None)
    seen: list[tuple[Any, Any, dict[str, Any]]] = []
    monkeypatch.setattr(build, "dispatch", lambda command, options, values: seen.append((command, options, values)))

    def run(*argv: str) -> Parsed:
        seen.clear()
        code = run_line(list(argv))
        return Parsed(code, *seen[-1]) if seen else Parsed(code, None, None, {})

    return run
