"""The ``kvcli`` Typer app: global options, error handling, and the command groups.

Commands live in small modules (``symbol_cmds`` for viz/summary, ``store_cmds`` for the
session commands); each has ``register(app)``. Heavy imports happen inside commands.

Importing this module does not import typer: the app is built on first use of ``app`` (or
:func:`build_app`), and :func:`main` first tries the startup fast path of
:mod:`kvcli.cli.fast`, which runs the plain forms of the hot commands (``pull``, ``push``,
``init``, ``keys``) without typer and hands everything else to the typer app.
"""

# No ``from __future__ import annotations`` here: the typer callback is defined inside
# build_app(), and typer reads its annotations (typer.Context, Optional[...]) at that time.

import os
import sys
from pathlib import Path
from typing import Any, Optional

from kvcli import __version__
from kvcli.cli import output
from kvcli.cli.commands import GlobalOptions
from kvcli.errors import KVCliError

APP_HELP = "MXNet's KVStore and network visualisation, without MXNet."

_app: Any = None


def global_options(ctx: Any) -> GlobalOptions:
    """The :class:`GlobalOptions` of the running command (``ctx``: its typer Context)."""
    root = ctx.find_root()
    return root.obj if isinstance(root.obj, GlobalOptions) else GlobalOptions()


def _print_version(value: bool) -> None:
    if value:
        print(f"kvcli {__version__}")
        import typer

        raise typer.Exit()


def build_app() -> Any:
    """The typer app with every command (built once)."""
    global _app
    if _app is not None:
        return _app
    import typer

    app = typer.Typer(
        name="kvcli",
        help=APP_HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode="rich",
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def _global_options(
        ctx: typer.Context,
        session: Optional[str] = typer.Option(
            None, "--session", "-s", envvar="KVCLI_SESSION", help="Session name (default: 'default')."
        ),
        home: Optional[Path] = typer.Option(None, "--home", envvar="KVCLI_HOME", help="Folder that holds the sessions."),
        json_output: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
        store_type: Optional[str] = typer.Option(
            None,
            "--type",
            "-t",
            help="Store type of a new session: local, device, dist_sync or dist_async "
            "(remembered; change it with `kvcli reset --type ...`).",
        ),
        num_devices: Optional[int] = typer.Option(
            None, "--num-devices", min=1, max=64, help="Device processes of a 'device' store."
        ),
        ray_address: Optional[str] = typer.Option(
            None, "--ray-address", help="Ray cluster of a dist_sync/dist_async store (e.g. auto)."
        ),
        num_servers: Optional[int] = typer.Option(
            None, "--num-servers", min=1, help="Server actors of a dist_sync/dist_async store."
        ),
        version: bool = typer.Option(
            False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ) -> None:
        if isinstance(ctx.obj, GlobalOptions) and ctx.obj.live is not None:
            # in the shell, only a --session/--home typed on the line leaves its session
            session = session if _from_command_line(ctx, "session") else None
            home = home if _from_command_line(ctx, "home") else None
        ctx.obj = make_global_options(
            ctx.obj, session, home, json_output, store_type, num_devices, ray_address, num_servers
        )

    from kvcli.cli import symbol_cmds

    symbol_cmds.register(app)
    from kvcli.cli import store_cmds

    store_cmds.register(app)
    try:
        from kvcli.cli import launch_cmd  # `kvcli launch` (distributed jobs)
    except ImportError:  # pragma: no cover - not written yet
        launch_cmd = None
    if launch_cmd is not None:
        launch_cmd.register(app)
    _app = app
    return app


def _from_command_line(ctx: Any, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return getattr(source, "name", "") == "COMMANDLINE"


def make_global_options(
    prior: Any,
    session: Optional[str],
    home: Optional[Path],
    json_output: bool,
    store_type: Optional[str],
    num_devices: Optional[int],
    ray_address: Optional[str],
    num_servers: Optional[int],
) -> GlobalOptions:
    """GlobalOptions from the parsed global flags; keeps the shell's open session."""
    prior = prior if isinstance(prior, GlobalOptions) else None
    options = {"num_devices": num_devices, "address": ray_address, "num_servers": num_servers}
    return GlobalOptions(
        session=session,
        home=home,
        json=json_output or bool(prior and prior.json),
        store_type=store_type,
        store_options={k: v for k, v in options.items() if v is not None},
        live=prior.live if prior else None,
    )


def __getattr__(name: str) -> Any:
    if name == "app":
        return build_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Entry point of the ``kvcli`` console script."""
    # The CLI's array work is elementwise (no BLAS); starting OpenBLAS's thread pool would
    # cost more than the rest of a one-shot command. A value set by the user wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        from kvcli.cli import fast

        if not fast.run(sys.argv[1:]):
            build_app()()
    except KVCliError as error:
        output.fail(str(error))
    except KeyboardInterrupt:
        output.fail("interrupted", code=130)
