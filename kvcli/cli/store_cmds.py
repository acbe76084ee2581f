"""The session commands of the typer app: init, push, pull, set-updater, keys, show, delete,
reset, export, import, sessions, shell.

Each is a thin wrapper: typer parses the arguments, :mod:`kvcli.cli.commands` does the
work. The ``kvcli shell`` runs these same commands against a session it keeps open.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from kvcli.cli import commands
from kvcli.cli.app import global_options

VALUE_HELP = (
    "An expression like 'ones(3,3)*8', 'zeros(2,2)', 'full((2,2),0.5)', 'arange(9).reshape(3,3)', "
    "'[[1,2],[3,4]]' (float32 unless dtype=int32/... is given, as in MXNet), '@file.npy', or '-' "
    "for a .npy on stdin. Quote it for the shell; put -- before a value that starts with '-'."
)
KEYS_HELP = "A key (3, fc1.weight) or a comma-separated list of keys (5,7,9)."
DEVICES_HELP = "Push the value from N devices (N copies, summed first)."


def init_cmd(
    ctx: typer.Context,
    keys: str = typer.Argument(..., metavar="KEY", help=KEYS_HELP),
    values: List[str] = typer.Argument(..., metavar="VALUE...", help=VALUE_HELP + " One for all keys, or one per key."),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="Convert the value to this dtype (float32, int32, ...)."),
) -> None:
    """Initialise KEY with VALUE; an existing key is re-initialised (reset to VALUE).

    [bold]Examples:[/]  kvcli init 3 'ones(3,3)*2'  ·  kvcli init 5,7,9 'ones(2,2)'  ·  kvcli init w @w.npy
    """
    commands.run_init(global_options(ctx), keys, values, dtype)


def push_cmd(
    ctx: typer.Context,
    keys: str = typer.Argument(..., metavar="KEY", help=KEYS_HELP),
    values: List[str] = typer.Argument(..., metavar="VALUE...", help=VALUE_HELP + " Several values = one per device."),
    devices: Optional[int] = typer.Option(None, "--devices", "-d", min=1, max=1024, help=DEVICES_HELP),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="Convert the values to this dtype."),
) -> None:
    """Push VALUE to KEY: the updater (default: assign) combines it with the stored value.

    Several values, or one value with --devices N, are a push from several devices: they are summed first, as in MXNet. Values are built in the key's dtype.

    [bold]Examples:[/]  kvcli push 3 'ones(3,3)*8'  ·  kvcli push 3 'ones(3,3)' --devices 4  ·  kvcli push 10,11,12 'ones(2,2)' -d 2
    """
    commands.run_push(global_options(ctx), keys, values, devices, dtype)


def pull_cmd(
    ctx: typer.Context,
    keys: str = typer.Argument(..., metavar="KEY", help=KEYS_HELP),
    devices: int = typer.Option(1, "--devices", "-d", min=1, max=1024, help="Pull into N devices (N copies)."),
    json_output: bool = typer.Option(False, "--json", help='Print {"key","shape","dtype","value"} as JSON.'),
    out: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the value to this .npy file instead."),
) -> None:
    """Print the value of KEY as numpy prints it (or as JSON, or into a .npy file).

    [bold]Examples:[/]  kvcli pull 3  ·  kvcli pull 3 --json  ·  kvcli pull 3 -o w.npy  ·  kvcli pull 11 --devices 2
    """
    commands.run_pull(global_options(ctx), keys, devices, json_output, out)


def set_updater_cmd(
    ctx: typer.Context,
    spec: str = typer.Argument(
        ..., metavar="SPEC", help="assign, sum, scale-add:K, sgd:lr=0.1,momentum=0.9, adam:lr=0.001, python:FILE.py:FUNC"
    ),
) -> None:
    """Choose how a push changes the stored value; the session remembers it.

    assign (default): stored = pushed  ·  sum: stored += pushed  ·  scale-add:K: stored += K*pushed  ·  sgd:lr=..,momentum=..,wd=.. and adam:lr=..,beta1=..,beta2=..,eps=.. (MXNet's optimizers; their state is saved in the session)  ·  python:FILE.py:FUNC calls FUNC(key, input, stored).

    [bold]Example:[/]  kvcli set-updater scale-add:2
    """
    commands.run_set_updater(global_options(ctx), spec)


def set_compression_cmd(
    ctx: typer.Context,
    spec: str = typer.Argument(..., metavar="SPEC", help="2bit, 2bit:threshold=0.5, or none"),
) -> None:
    """Compress pushed gradients with MXNet's 2-bit scheme (device and dist stores); the session remembers it.

    [bold]Example:[/]  kvcli set-compression 2bit:threshold=0.5
    """
    commands.run_set_compression(global_options(ctx), spec)


def keys_cmd(ctx: typer.Context) -> None:
    """List the session's keys, one a line (--json: a list).

    [bold]Example:[/]  kvcli keys
    """
    commands.run_keys(global_options(ctx))


def show_cmd(ctx: typer.Context) -> None:
    """Show the session: store type, updater, and each key's shape, dtype, version and size.

    [bold]Example:[/]  kvcli --session exp1 show
    """
    commands.run_show(global_options(ctx))


def delete_cmd(ctx: typer.Context, keys: str = typer.Argument(..., metavar="KEY", help=KEYS_HELP)) -> None:
    """Delete KEY (and its optimizer state) from the session.

    [bold]Example:[/]  kvcli delete 3
    """
    commands.run_delete(global_options(ctx), keys)


def reset_cmd(
    ctx: typer.Context,
    store_type: Optional[str] = typer.Option(None, "--type", "-t", help="New store type: local, device, dist_sync, dist_async."),
    num_devices: Optional[int] = typer.Option(None, "--num-devices", min=1, max=64, help="Devices of a 'device' store."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster of a dist store."),
    num_servers: Optional[int] = typer.Option(None, "--num-servers", min=1, help="Servers of a dist store."),
) -> None:
    """Delete every key, the updater and its state; also repairs a damaged session.

    The store type stays unless --type is given.

    [bold]Examples:[/]  kvcli reset  ·  kvcli reset --type device --num-devices 4
    """
    options = {"num_devices": num_devices, "address": ray_address, "num_servers": num_servers}
    commands.run_reset(global_options(ctx), store_type, options)


def export_cmd(ctx: typer.Context, folder: Path = typer.Argument(..., metavar="DIR", help="A new or empty folder.")) -> None:
    """Copy the session (keys, updater, optimizer state) into DIR.

    [bold]Example:[/]  kvcli export backup/  &&  kvcli --session copy import backup/
    """
    commands.run_export(global_options(ctx), folder)


def import_cmd(
    ctx: typer.Context, folder: Path = typer.Argument(..., metavar="DIR", help="A folder written by kvcli export.")
) -> None:
    """Replace the session's keys and updater by those exported in DIR (all checked first).

    [bold]Example:[/]  kvcli --session restored import backup/
    """
    commands.run_import(global_options(ctx), folder)


def sessions_cmd(ctx: typer.Context) -> None:
    """List the sessions in the home folder.

    [bold]Example:[/]  kvcli --home ./kv sessions
    """
    commands.run_sessions(global_options(ctx))


def shell_cmd(ctx: typer.Context) -> None:
    """Start an interactive shell on the session (tab completion, history, Ctrl-D exits).

    The shell keeps the store running (device workers stay up) and commits after every command, so other terminals see each change. Commands are the ones above, without "kvcli".

    [bold]Example:[/]  kvcli --session exp1 shell
    """
    commands.run_shell(global_options(ctx))


COMMANDS = {
    "init": init_cmd,
    "push": push_cmd,
    "pull": pull_cmd,
    "set-updater": set_updater_cmd,
    "set-compression": set_compression_cmd,
    "keys": keys_cmd,
    "show": show_cmd,
    "delete": delete_cmd,
    "reset": reset_cmd,
    "export": export_cmd,
    "import": import_cmd,
    "sessions": sessions_cmd,
    "shell": shell_cmd,
}


def register(app: typer.Typer) -> None:
    """Add the session commands to ``app``."""
    for name, function in COMMANDS.items():
        app.command(name)(function)
