"""The ``kvcli`` Typer app: global options, error handling, and the command groups.

Commands live in small modules (``symbol_cmds`` for viz/summary, ``store_cmds`` for the
session commands); each has ``register(app)``. Heavy imports happen inside commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer

from kvcli import __version__
from kvcli.cli import output
from kvcli.errors import KVCliError

app = typer.Typer(
    name="kvcli",
    help="MXNet's KVStore and network visualisation, without MXNet.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


@dataclass
class GlobalOptions:
    """Options given before the subcommand, shared by every command."""

    session: Optional[str] = None
    home: Optional[Path] = None
    json: bool = False


def _print_version(value: bool) -> None:
    if value:
        print(f"kvcli {__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    ctx: typer.Context,
    session: Optional[str] = typer.Option(
        None, "--session", "-s", envvar="KVCLI_SESSION", help="Session name (default: 'default')."
    ),
    home: Optional[Path] = typer.Option(
        None, "--home", envvar="KVCLI_HOME", help="Folder that holds the sessions."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    ctx.obj = GlobalOptions(session=session, home=home, json=json_output)


def global_options(ctx: typer.Context) -> GlobalOptions:
    """The :class:`GlobalOptions` of the running command."""
    root = ctx.find_root()
    return root.obj if isinstance(root.obj, GlobalOptions) else GlobalOptions()


def _register_commands() -> None:
    from kvcli.cli import symbol_cmds

    symbol_cmds.register(app)
    try:
        from kvcli.cli import store_cmds
    except ImportError:  # pragma: no cover - while the store commands are being written
        return
    store_cmds.register(app)


_register_commands()


def main() -> None:
    """Entry point of the ``kvcli`` console script."""
    try:
        app()
    except KVCliError as error:
        output.fail(str(error))
    except KeyboardInterrupt:
        output.fail("interrupted", code=130)
