"""docs/commands.md, the command reference, is the command table's (kvcli.cli.docs)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kvcli.cli import table
from kvcli.cli.docs import COMMAND, render

from .conftest import REPO, kvcli_env

REFERENCE = REPO / "docs" / "commands.md"


def test_the_reference_is_written_from_the_table() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render(), f"the command table changed: run {COMMAND}"


def test_the_command_that_writes_it(tmp_path: Path) -> None:
    written = tmp_path / "commands.md"
    done = subprocess.run([sys.executable, "-m", "kvcli.cli.docs", str(written)], env=kvcli_env(tmp_path),
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert written.read_text(encoding="utf-8") == render()


def _commands(commands: tuple[table.Command, ...], words: tuple[str, ...] = ()) -> list[tuple[str, table.Command]]:
    found = []
    for command in commands:
        found.append((" ".join((*words, command.name)), command))
        found += _commands(command.children, (*words, command.name))
    return found


def test_every_command_argument_option_and_example_is_in_it() -> None:
    text = render()
    sections = re.split(r"^## ", text, flags=re.M)
    by_heading = {section.split("\n", 1)[0]: section for section in sections[1:]}
    assert list(by_heading) == ["Global options", *(f"kvcli {words}" for words, _ in _commands(table.commands()))]
    for opt in table.GLOBAL_OPTIONS:
        assert f"- {', '.join(f'`{flag}`' for flag in opt.flags)}" in by_heading["Global options"], opt.long
    for words, command in _commands(table.commands()):
        section = by_heading[f"kvcli {words}"]
        assert section.count("\n- `") >= len(command.args) + len(command.opts), words
        for arg in command.args:
            assert f"- `{arg.metavar}" in section, (words, arg.dest)
        for opt in command.opts:
            assert f"- {', '.join(f'`{flag}`' for flag in opt.flags)}" in section, (words, opt.long)
        assert "```sh\n" + "\n".join(command.examples) + "\n```" in section, words
        assert section.split("\n\n")[1].startswith(f"`kvcli {words}"), words  # the usage line


def test_its_links_lead_to_its_headings() -> None:
    text = render()
    anchors = {"-".join(line[3:].lower().split()) for line in text.splitlines() if line.startswith("## ")}
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert len(links) > len(table.commands()) and set(links) <= anchors


def test_markdown_specials_in_help_read_as_typed() -> None:
    """A glob such as 'stage3_*' or the __shape__ hint is escaped outside code, not inside it."""
    text = render()
    assert r"'stage3\_\*'" in text and r"\_\_shape\_\_" in text and "dist_sync" in text
    assert "`reset --type`" in text

