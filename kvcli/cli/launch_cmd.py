"""``kvcli launch -n W [--servers S] -- python train.py``: run a distributed job on Ray.

MXNet's ``tools/launch.py`` for kvcli: starts S key servers and W copies of the command,
each with ``KVCLI_RANK`` / ``KVCLI_NUM_WORKERS`` / ``KVCLI_GROUP`` / ``KVCLI_RAY_ADDRESS``
set, so ``kvcli.create("dist_sync")`` in the script joins the job. Exits with the first
non-zero exit code of the workers (0 when all succeed).
"""

from __future__ import annotations

from typing import List, Optional

import typer


def register(app: typer.Typer) -> None:
    """Add the ``launch`` command to ``app``."""

    @app.command(
        "launch",
        context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
    )
    def launch_command(
        command: List[str] = typer.Argument(
            ..., metavar="-- COMMAND...", help="The worker command, after --, e.g. -- python train.py"
        ),
        num_workers: int = typer.Option(..., "--num-workers", "-n", min=1, help="Number of workers (W)."),
        servers: int = typer.Option(1, "--servers", "-s", min=1, help="Number of key servers (S)."),
        address: Optional[str] = typer.Option(
            None,
            "--address",
            envvar="KVCLI_RAY_ADDRESS",
            help="Ray cluster to use ('auto', 'host:port'); default: start a local one.",
        ),
        timeout: Optional[float] = typer.Option(
            None,
            "--timeout",
            envvar="KVCLI_DIST_TIMEOUT",
            help="Seconds a worker waits for the others before failing (default 60).",
        ),
    ) -> None:
        """Run COMMAND as W workers of a dist_sync/dist_async job, with S key servers."""
        import os

        from kvcli.cli import output
        from kvcli.store.launch import launch

        # One line per worker line: Ray would otherwise fold identical lines from several ranks.
        os.environ.setdefault("RAY_DEDUP_LOGS", "0")
        codes = launch(list(command), num_workers, num_servers=servers, address=address, timeout=timeout)
        failed = [(rank, code) for rank, code in enumerate(codes) if code != 0]
        for rank, code in failed:
            output.stderr_console().print(f"[red]kvcli launch: rank {rank} exited with code {code}[/red]")
        if not failed:
            raise typer.Exit(0)
        code = failed[0][1]
        raise typer.Exit(code if code > 0 else 128 - code)  # killed by signal N: 128+N, as a shell says
