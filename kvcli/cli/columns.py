"""Tables of the CLI (``show``, ``sessions``): a box table on a wide terminal, plain columns
on a pipe, and one record per row on a terminal too narrow for the columns.

Piped or redirected, rich would draw its box at 80 columns and cut long names with "…";
scripts and ``grep`` get every cell whole instead, in fixed-width columns, as ``summary``
prints them. On a terminal each column is at least as wide as its longest word, so a name
is never cut or folded in the middle; when the columns cannot fit, each row becomes a line
with its first cell and an indented line with the others, wrapped between words.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence


class Column(NamedTuple):
    """A column: its header and whether its cells are numbers (right-aligned)."""

    name: str
    right: bool = False


#: What rich's box adds to the text of a table's columns: "│ " before each, " │" at the end.
BOX_PER_COLUMN = 3


def print_table(console: Any, title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]],
                caption: str = "") -> None:
    """Print ``rows`` (plain text cells, one per column) with ``title`` above and ``caption``
    below, as the console's output allows (see the module docs)."""
    if not console.is_terminal:
        _plain(console.file, title, columns, rows, caption)
        return
    longest = [max([len(word) for cell in [c.name, *(row[i] for row in rows)] for word in cell.split()] or [1])
               for i, c in enumerate(columns)]
    if sum(longest) + BOX_PER_COLUMN * len(columns) + 1 <= console.width:
        _boxed(console, title, columns, rows, caption, longest)
    else:
        _records(console, title, columns, rows, caption)


def _plain(out: Any, title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]], caption: str) -> None:
    widths = [max(len(cell) for cell in [c.name, *(row[i] for row in rows)]) for i, c in enumerate(columns)]
    lines = [title] if title else []
    for cells in ([c.name for c in columns], *rows):
        parts = [cell.rjust(w) if c.right else cell.ljust(w) for cell, w, c in zip(cells, widths, columns)]
        lines.append("  ".join(parts).rstrip())
        if len(lines) == 1 + bool(title):
            lines.append("-" * len(lines[-1]))
    if caption:
        lines.append(caption)
    out.write("".join(line + "\n" for line in lines))
    out.flush()


def _boxed(console: Any, title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]], caption: str,
           longest: Sequence[int]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title) if title else None, caption=Text(caption) if caption else None)
    for column, width in zip(columns, longest):
        table.add_column(column.name, justify="right" if column.right else "left", min_width=width)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)


def _records(console: Any, title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]], caption: str) -> None:
    import textwrap

    from rich.text import Text

    def wrapped(text: str, indent: str = "") -> list[str]:
        # between words only: a word wider than the terminal is left whole for the terminal
        # to wrap (cut into lines of its own, it would no longer copy as one word)
        return textwrap.wrap(text, width=max(console.width - len(indent), 10), initial_indent=indent,
                             subsequent_indent=indent, break_long_words=False, break_on_hyphens=False) or [indent]

    lines = [Text(title, style="bold")] if title else []
    for row in rows:
        lines.append(Text(row[0], style="bold"))
        details = ", ".join(f"{c.name} {cell}" for c, cell in zip(columns[1:], row[1:]))
        lines += [Text(line) for line in wrapped(details, "  ")]
    lines += [Text(line) for line in wrapped(caption)] if caption else []
    for line in lines:
        console.print(line, soft_wrap=True)
