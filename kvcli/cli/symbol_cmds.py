"""``kvcli viz`` and ``kvcli summary`` (written with the symbol pipeline)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the symbol commands to ``app``."""
