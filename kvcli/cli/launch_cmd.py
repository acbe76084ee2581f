"""``kvcli launch -n W [--servers S] -- python train.py``: run a distributed job on Ray.

MXNet's ``tools/launch.py`` for kvcli: starts S key servers and W copies of the command,
each with ``KVCLI_RANK`` / ``KVCLI_NUM_WORKERS`` / ``KVCLI_GROUP`` / ``KVCLI_RAY_ADDRESS``
set, so ``kvcli.create("dist_sync")`` in the script joins the job. Exits with the first
non-zero exit code of the workers (0 when all succeed). Its options are declared in
:mod:`kvcli.cli.table` (the ``launch`` entry).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence


def run_launch(
    options: Any, command: Sequence[str], num_workers: int, servers: int = 1,
    address: Optional[str] = None, timeout: Optional[float] = None,
) -> None:
    """Run ``command`` as ``num_workers`` ranks; exits with the first failing rank's code."""
    import os

    from kvcli.cli import output
    from kvcli.store.launch import launch

    # One line per worker line: Ray would otherwise fold identical lines from several ranks.
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    # the workers print straight to the terminal, so a live spinner would garble their lines:
    # say what is starting (Ray's first start takes long) and let their output follow
    if not getattr(options, "json", False):
        output.note(f"kvcli launch: starting {output.plural(servers, 'key server')} and "
                    f"{output.plural(num_workers, 'worker')} on Ray (the ranks join as they start)")
    codes = launch(list(command), num_workers, num_servers=servers, address=address, timeout=timeout)
    failed = [(rank, code) for rank, code in enumerate(codes) if code != 0]
    for rank, code in failed:
        output.print_error(f"kvcli launch: rank {rank} exited with code {code}")
    if failed:
        code = failed[0][1]
        raise SystemExit(code if code > 0 else 128 - code)  # killed by signal N: 128+N, as a shell says


def register(app: Any) -> None:
    """Add the ``launch`` command (from the table) to typer ``app``."""
    from kvcli.cli import table
    from kvcli.cli.build import add_command

    command = table.find("launch")
    assert command is not None
    add_command(app, command)
