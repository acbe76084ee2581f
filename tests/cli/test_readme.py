"""Every ``bash`` and ``python`` code block of README.md runs as written, in a fresh home and
an empty folder, so the README cannot drift from the program.

A block that cannot run here is marked in README.md by an HTML comment on the line before
it (invisible on GitHub), and is skipped with that reason:

- ``<!-- readme-test: skip REASON -->``: never run here (``make test`` would run itself);
- ``<!-- readme-test: dist REASON -->``: needs Ray; run by ``tests/dist/test_launch_cli.py``;
- ``<!-- readme-test: files NAME=REPO_PATH ... -->``: run, with these repository files copied
  in under the names the block uses.

A reader runs the blocks in the clone: every file a block writes must be one the clone's
``.gitignore`` ignores, and every file a block names must be in the clone.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.runner import kvcli_env

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
BLOCK = re.compile(r"(?:<!-- readme-test: (?P<mark>[^>]*?) -->\n)?```(?P<lang>bash|python)\n(?P<body>.*?)^```",
                   re.S | re.M)


@dataclass(frozen=True)
class Block:
    line: int
    lang: str
    body: str
    mark: str

    @property
    def kind(self) -> str:
        return self.mark.split(" ", 1)[0] if self.mark else ""

    @property
    def reason(self) -> str:
        return self.mark.split(" ", 1)[1] if " " in self.mark else ""


def readme_blocks(text: str | None = None) -> list[Block]:
    """The ``bash`` and ``python`` blocks of README.md, with their marks."""
    text = README.read_text(encoding="utf-8") if text is None else text
    return [Block(text.count("\n", 0, m.start("lang")) + 1, m["lang"], m["body"], m["mark"] or "")
            for m in BLOCK.finditer(text)]


def run_block(block: Block, folder: Path, home: Path, env_extra: dict[str, str] | None = None,
              timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run ``block`` in ``folder`` (its working directory) with ``home`` as KVCLI_HOME."""
    for pair in block.reason.split() if block.kind == "files" else ():
        name, _, source = pair.partition("=")
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / source, folder / name)
    env = kvcli_env(home, **(env_extra or {}))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # kvcli and python of this venv
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    command = ["bash", "-e", "-o", "pipefail", "-c", block.body] if block.lang == "bash" else [sys.executable, "-c", block.body]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


BLOCKS = readme_blocks()


def test_the_readme_has_blocks_and_every_mark_is_known() -> None:
    assert len(BLOCKS) >= 8
    assert {b.kind for b in BLOCKS} <= {"", "skip", "dist", "files"}
    assert all(b.reason for b in BLOCKS if b.kind), "a mark says why"


def test_a_mark_is_read() -> None:
    text = "x\n<!-- readme-test: skip it needs a GPU -->\n```bash\nfalse\n```\n```python\nprint(1)\n```\n"
    first, second = readme_blocks(text)
    assert (first.kind, first.reason, first.line, first.body) == ("skip", "it needs a GPU", 3, "false\n")
    assert (second.kind, second.lang) == ("", "python")


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.lang}-line{b.line}" for b in BLOCKS])
def test_readme_block_runs(block: Block, tmp_path: Path) -> None:
    if block.kind in ("skip", "dist"):
        pytest.skip(f"README.md line {block.line}: {block.reason}")
    folder, home = tmp_path / "cwd", tmp_path / "home"
    folder.mkdir()
    home.mkdir()
    # BROWSER=true: `viz --open` hands its page to a browser that exists and returns at once
    result = run_block(block, folder, home, {"BROWSER": "true"})
    assert result.returncode == 0, f"README.md line {block.line}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr


def _written(folder: Path, before: set[str]) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and
                  str(p.relative_to(folder)) not in before)


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.kind in ("", "files")],
                         ids=[f"{b.lang}-line{b.line}" for b in BLOCKS if b.kind in ("", "files")])
def test_what_a_block_writes_in_the_clone_is_ignored_by_git(block: Block, tmp_path: Path) -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git clone")
    folder, home = tmp_path / "cwd", tmp_path / "home"
    folder.mkdir()
    home.mkdir()
    copied = {pair.partition("=")[0] for pair in block.reason.split()} if block.kind == "files" else set()
    assert run_block(block, folder, home, {"BROWSER": "true"}).returncode == 0
    written = _written(folder, copied)
    ignored = subprocess.run(["git", "-C", str(REPO), "check-ignore", "--no-index", "--stdin"], input="\n".join(written),
                             capture_output=True, text=True).stdout.split()
    assert sorted(set(written) - set(ignored)) == [], f"README.md line {block.line} leaves these in the clone"


def test_the_files_the_blocks_name_are_in_the_clone() -> None:
    for block in BLOCKS:
        for pair in block.reason.split() if block.kind == "files" else ():
            name, _, source = pair.partition("=")
            assert name == source and (REPO / source).is_file(), f"README.md line {block.line}: {name}"
    named = re.findall(r"(?:examples|sample_graphs|tests/data)/[\w./-]+\.\w+", README.read_text(encoding="utf-8"))
    assert named and [path for path in named if not (REPO / path).exists()] == []


def test_the_readme_says_how_to_reach_kvcli_before_its_first_command(tmp_path: Path) -> None:
    """After `make demo`, a reader's next block runs `kvcli`: the text between says how."""
    venv_bin = Path(sys.executable).parent
    if venv_bin != REPO / ".venv" / "bin":
        pytest.skip("the tests do not run in the clone's .venv")
    text = README.read_text(encoding="utf-8")
    first_kvcli = next(b for b in BLOCKS if b.kind != "skip" and re.search(r"^kvcli |import kvcli", b.body, re.M))
    before = "\n".join(text.splitlines()[:first_kvcli.line])
    activate = re.findall(r"`([^`]*\.venv/bin/activate[^`]*)`", before)
    assert activate, "the README never says how to reach the kvcli that make demo installed"
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != venv_bin)
    found = subprocess.run(["bash", "--norc", "-c", f"{activate[0]} && command -v kvcli"], cwd=REPO,
                           env={**os.environ, "PATH": path}, capture_output=True, text=True)
    assert found.returncode == 0 and Path(found.stdout.strip()) == venv_bin / "kvcli", found
