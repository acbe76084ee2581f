"""Every ``bash`` and ``python`` code block of README.md and of the guide's pages in docs/
runs as written, in a fresh home and an empty folder, so the documentation cannot drift from
the program. (docs/mxnet.md and docs/commands.md are written by programs from kvcli's tables,
and tests of their own keep them equal; their blocks are not run here.)

A block that cannot run here is marked by an HTML comment on the line before it (invisible
on GitHub), and is skipped with that reason:

- ``<!-- readme-test: skip REASON -->``: never run here (``make test`` would run itself);
- ``<!-- readme-test: dist REASON -->``: needs Ray; run by ``tests/dist/test_launch_cli.py``;
- ``<!-- readme-test: files NAME=REPO_PATH ... -->``: run, with these repository files copied
  in under the names the block uses.

A reader runs the blocks in the clone: every file a block writes must be one the clone's
``.gitignore`` ignores, and every file a block names must be in the clone. Every link of
these pages to a file of the clone leads to one that exists, and to a heading it has.
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
#: Pages of docs/ written by programs (``python -m kvcli.mx.docs``, ``python -m kvcli.cli.docs``),
#: whose own tests keep them equal to kvcli's tables: their blocks are examples, not run here.
GENERATED = ("mxnet.md", "commands.md")
BLOCK = re.compile(r"(?:<!-- readme-test: (?P<mark>[^>]*?) -->\n)?```(?P<lang>bash|python)\n(?P<body>.*?)^```",
                   re.S | re.M)


def guide_pages() -> list[Path]:
    """The pages of docs/ that people wrote (the generated ones left out)."""
    return sorted(p for p in (REPO / "docs").glob("*.md") if p.name not in GENERATED)


#: README.md and the guide: every page whose blocks run.
PAGES = [README, *guide_pages()]


@dataclass(frozen=True)
class Block:
    line: int
    lang: str
    body: str
    mark: str
    page: Path = README

    @property
    def kind(self) -> str:
        return self.mark.split(" ", 1)[0] if self.mark else ""

    @property
    def reason(self) -> str:
        return self.mark.split(" ", 1)[1] if " " in self.mark else ""

    @property
    def where(self) -> str:
        """``docs/cli.md line 12``: where a reader finds the block."""
        return f"{self.page.relative_to(REPO)} line {self.line}"


def readme_blocks(text: str | None = None, page: Path = README) -> list[Block]:
    """The ``bash`` and ``python`` blocks of ``page`` (README.md; ``text``: instead of its
    file's text), with their marks."""
    text = page.read_text(encoding="utf-8") if text is None else text
    return [Block(text.count("\n", 0, m.start("lang")) + 1, m["lang"], m["body"], m["mark"] or "", page)
            for m in BLOCK.finditer(text)]


def doc_blocks() -> list[Block]:
    """The blocks of README.md and of every guide page, in that order."""
    return [block for page in PAGES for block in readme_blocks(page=page)]


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


BLOCKS = doc_blocks()
RUN = [b for b in BLOCKS if b.kind in ("", "files")]


def _id(block: Block) -> str:
    return f"{block.page.relative_to(REPO)}:{block.line}-{block.lang}"


def test_the_pages_have_blocks_and_every_mark_is_known() -> None:
    assert len([b for b in BLOCKS if b.page == README]) >= 6
    assert {b.page.name for b in BLOCKS} >= {"README.md", "kvstore.md", "mxnet-layer.md", "cli.md", "viz.md",
                                             "distributed.md"}
    assert {b.kind for b in BLOCKS} <= {"", "skip", "dist", "files"}
    assert all(b.reason for b in BLOCKS if b.kind), "a mark says why"


def test_a_mark_is_read() -> None:
    text = "x\n<!-- readme-test: skip it needs a GPU -->\n```bash\nfalse\n```\n```python\nprint(1)\n```\n"
    first, second = readme_blocks(text)
    assert (first.kind, first.reason, first.line, first.body) == ("skip", "it needs a GPU", 3, "false\n")
    assert (second.kind, second.lang) == ("", "python")


def test_the_generated_pages_are_left_out_and_the_others_read() -> None:
    names = [page.name for page in guide_pages()]
    assert "ARCHITECTURE.md" in names and "kvstore.md" in names
    assert not set(names) & set(GENERATED)


@pytest.mark.parametrize("block", BLOCKS, ids=[_id(b) for b in BLOCKS])
def test_readme_block_runs(block: Block, tmp_path: Path) -> None:
    if block.kind in ("skip", "dist"):
        pytest.skip(f"{block.where}: {block.reason}")
    folder, home = tmp_path / "cwd", tmp_path / "home"
    folder.mkdir()
    home.mkdir()
    # BROWSER=true: `viz --open` hands its page to a browser that exists and returns at once
    result = run_block(block, folder, home, {"BROWSER": "true"})
    assert result.returncode == 0, f"{block.where}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr


def _written(folder: Path, before: set[str]) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and
                  str(p.relative_to(folder)) not in before)


@pytest.mark.parametrize("block", RUN, ids=[_id(b) for b in RUN])
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
    assert sorted(set(written) - set(ignored)) == [], f"{block.where} leaves these in the clone"


def test_the_files_the_blocks_name_are_in_the_clone() -> None:
    for block in BLOCKS:
        for pair in block.reason.split() if block.kind == "files" else ():
            name, _, source = pair.partition("=")
            assert name == source and (REPO / source).is_file(), f"{block.where}: {name}"
    for page in PAGES:
        named = re.findall(r"(?:examples|sample_graphs|tests/data)/[\w./-]+\.\w+", page.read_text(encoding="utf-8"))
        missing = [path for path in named if not (REPO / path).exists()]
        assert missing == [], f"{page.relative_to(REPO)} names files the clone does not have"
    assert re.findall(r"(?:examples|sample_graphs|tests/data)/", README.read_text(encoding="utf-8"))


LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown page: lower case, punctuation but
    ``-`` and ``_`` dropped, spaces as ``-`` (a repeated heading gets ``-1``, ``-2``...)."""
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = 0
        while (f"{slug}-{count}" if count else slug) in found:
            count += 1
        found.add(f"{slug}-{count}" if count else slug)
    return found


def test_anchors_are_github_s() -> None:
    text = "# kvcli\n## Differences from MXNet 1.9.1 in `mx.nd` and `mx.random`\n## Uses\n## Uses\n"
    assert anchors(text) == {"kvcli", "differences-from-mxnet-191-in-mxnd-and-mxrandom", "uses", "uses-1"}


def _generated_and_not_written(target: Path) -> bool:
    """docs/commands.md before its generator (kvcli/cli/docs.py) is in the clone."""
    return target == REPO / "docs" / "commands.md" and not (REPO / "kvcli" / "cli" / "docs.py").exists()


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_link_to_the_clone_leads_somewhere(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    broken = []
    for link in LINK.finditer(text):
        target = link["target"]
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if _generated_and_not_written(file):
            continue
        if not file.exists() or REPO not in file.parents:
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            broken.append(target)
    assert broken == [], f"{page.relative_to(REPO)}: links that lead nowhere"


def test_the_readme_says_how_to_reach_kvcli_before_its_first_command(tmp_path: Path) -> None:
    """After `make demo`, a reader's next block runs `kvcli`: the text between says how."""
    venv_bin = Path(sys.executable).parent
    if venv_bin != REPO / ".venv" / "bin":
        pytest.skip("the tests do not run in the clone's .venv")
    text = README.read_text(encoding="utf-8")
    readme = [b for b in BLOCKS if b.page == README]
    first_kvcli = next(b for b in readme if b.kind != "skip" and re.search(r"^kvcli |import kvcli", b.body, re.M))
    before = "\n".join(text.splitlines()[:first_kvcli.line])
    activate = re.findall(r"`([^`]*\.venv/bin/activate[^`]*)`", before)
    assert activate, "the README never says how to reach the kvcli that make demo installed"
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != venv_bin)
    found = subprocess.run(["bash", "--norc", "-c", f"{activate[0]} && command -v kvcli"], cwd=REPO,
                           env={**os.environ, "PATH": path}, capture_output=True, text=True)
    assert found.returncode == 0 and Path(found.stdout.strip()) == venv_bin / "kvcli", found


def test_the_readme_opens_with_the_two_set_up_commands() -> None:
    """The first block is `make demo` and `make test` (CI runs what the README says)."""
    first = BLOCKS[0]
    assert first.page == README and first.kind == "skip"
    assert [line.split("#")[0].strip() for line in first.body.splitlines()] == ["make demo", "make test"]
