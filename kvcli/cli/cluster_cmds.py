"""``kvcli cluster up | status | down``: the home's background Ray cluster (see
:mod:`kvcli.session.cluster`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Optional

from kvcli.cli import output


def _payload(info: Any, home: Path, **extra: Any) -> dict[str, Any]:
    running = info is not None
    fields = {"address": info.address, "pid": info.pid, "cpus": info.cpus, "started": info.started} if running else {}
    return {"home": str(home), "running": running, **fields, **extra}


def _command(words: str, options: Any) -> str:
    """```kvcli cluster up``` (in the shell ```cluster up```), with the ``--home`` the user typed."""
    from kvcli.cli.commands import home_scope

    return output.command_text(words, "shell" if options.live is not None else "cli", home_scope(options))


def run_up(options: Any, cpus: Optional[int] = None) -> None:
    from kvcli.session import cluster

    home = options.home_path()
    from kvcli.cli.commands import RAY_START_TIME

    with output.status(f"starting a Ray cluster ({RAY_START_TIME})", quiet=options.json):
        info, new = cluster.start(home, cpus)
    if options.json:
        output.print_json(_payload(info, home, started_now=new))
        return
    verb = "started" if new else "already running:"
    output.note(f"{verb} Ray cluster at {info.address} ({output.plural(info.cpus, 'CPU')}, pid {info.pid}); "
                f"dist sessions in {home} join it; stop it with {_command('cluster down', options)}")


def run_status(options: Any) -> None:
    from kvcli.session import cluster

    home = options.home_path()
    info = cluster.status(home)
    if options.json:
        output.print_json(_payload(info, home))
        return
    if info is None:
        output.print_text(f"no Ray cluster is running for {home}: start one with {_command('cluster up', options)}")
        return
    age = int(time.time() - info.started)
    output.print_text(f"Ray cluster at {info.address}: {output.plural(info.cpus, 'CPU')}, pid {info.pid}, "
                      f"up {age // 3600}h{age // 60 % 60:02d}m{age % 60:02d}s")


def run_down(options: Any) -> None:
    from kvcli.session import cluster

    home = options.home_path()
    with output.status("stopping the Ray cluster", quiet=options.json):
        info = cluster.stop(home)
    if options.json:
        output.print_json(_payload(None, home, stopped=info is not None))
        return
    output.note("stopped the Ray cluster" if info else f"no Ray cluster was running for {home}")
