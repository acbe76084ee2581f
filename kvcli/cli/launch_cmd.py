"""``kvcli launch -n W [--servers S] -- python train.py``: run a distributed job on Ray.

MXNet's ``tools/launch.py`` for kvcli: starts S key servers and W copies of the command,
each with ``KVCLI_RANK`` / ``KVCLI_NUM_WORKERS`` / ``KVCLI_GROUP`` / ``KVCLI_RAY_ADDRESS``
set, so ``kvcli.create("dist_sync")`` in the script joins the job. Exits with the first
non-zero exit code of the workers (0 when all succeed). Its options are declared in
:mod:`kvcli.cli.table` (the ``launch`` entry).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

#: MXNet ``tools/launch.py`` options that kvcli's launch has no use for: Ray places the workers.
MXNET_ONLY = {
    "--launcher": "kvcli launch runs its workers on Ray, not over ssh/mpi/sge/yarn",
    "-H": "kvcli launch runs its workers on Ray, not on a host file",
    "--hostfile": "kvcli launch runs its workers on Ray, not on a host file",
    "--sync-dst-dir": "kvcli launch runs the command in this folder on each Ray node",
    "--env": "set the variables in the environment of `kvcli launch`: the workers inherit it",
}
RAY_HINT = ("for several machines start a Ray cluster on them (docs/distributed.md, \"Several machines\") and run "
            "KVCLI_RAY_ADDRESS=auto kvcli launch -n W -- COMMAND")


def usage_error(message: str) -> Any:
    """A usage error of ``launch`` (exit 2, before anything starts)."""
    from kvcli.errors import UsageError

    return UsageError(f"launch: {message}", command="launch")


def check_command_line(command: Sequence[str]) -> None:
    """Refuse, before Ray starts, a worker command that is an option kvcli launch does not
    know (a typo such as ``--server 2``, MXNet's ``--launcher``/``-H``, or ``-s``)."""
    from difflib import get_close_matches

    from kvcli.cli import table

    if not command:
        raise usage_error("no worker command: put it after --, e.g. kvcli launch -n 2 -- python train.py")
    first = command[0]
    if not first.startswith("-"):
        return
    name = first.split("=", 1)[0]
    if name in MXNET_ONLY:
        raise usage_error(f"{name} is an option of MXNet's launch.py: {MXNET_ONLY[name]}; {RAY_HINT}")
    entry = table.find("launch")
    known = [flag for opt in (entry.opts if entry else ()) for flag in opt.flags if flag.startswith("--")]
    close = get_close_matches(name, known, n=1)
    fix = f"did you mean {close[0]}?" if close else "put the worker command after --"
    raise usage_error(f"no option {name!r} ({fix}); options: {', '.join(known)}")


def same_option(value: Any, other: Any, flag: str, other_flag: str) -> Any:
    """The value of a launch option that a global option also gives (``--servers`` and
    ``--num-servers``): either may be typed; two different values are a usage error."""
    if value is not None and other is not None and value != other:
        raise usage_error(f"{flag} {value} and {other_flag} {other} disagree: give one of them")
    return value if value is not None else other


def run_launch(
    options: Any, command: Sequence[str], num_workers: int, servers: Optional[int] = None,
    address: Optional[str] = None, timeout: Optional[float] = None,
) -> None:
    """Run ``command`` as ``num_workers`` ranks; exits with the first failing rank's code.

    The global options ``--num-servers`` and ``--ray-address`` are ``--servers`` and
    ``--address``; the ones launch has no use for are refused before it runs (the table's
    ``refused``)."""
    import os

    from kvcli import config
    from kvcli.cli import output
    from kvcli.store.ray.launch import check_command, launch

    given = dict(getattr(options, "store_options", None) or {})
    servers = same_option(servers, given.get("num_servers"), "--servers", "--num-servers") or 1
    address = same_option(address, given.get("address"), "--address", "--ray-address")
    check_command_line(command)
    # the variables the options stand for, checked before anything starts
    address = address if address is not None else config.get(config.RAY_ADDRESS)
    timeout = timeout if timeout is not None else config.get(config.DIST_TIMEOUT)
    check_command(list(command), os.getcwd())  # before Ray starts, which takes seconds
    as_json = bool(getattr(options, "json", False))
    output.quiet_ray_token_notice()
    # One line per worker line: Ray would otherwise fold identical lines from several ranks.
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    # the workers print straight to the terminal, so a live spinner would garble their lines:
    # say what is starting (Ray's first start takes long) and let their output follow
    if not as_json:
        output.note(f"kvcli launch: starting {output.plural(servers, 'key server')} and "
                    f"{output.plural(num_workers, 'worker')} on Ray (the ranks join as they start)")
    # with --json, stdout is the one JSON line: the workers' output goes to stderr
    codes = launch(list(command), num_workers, num_servers=servers, address=address, timeout=timeout,
                   stdout_to_stderr=as_json)
    failed = [(rank, code) for rank, code in enumerate(codes) if code != 0]
    if as_json:  # the one line of stdout, for scripts
        output.print_json({"num_workers": num_workers, "servers": servers, "exit_codes": list(codes),
                           "failed_ranks": [rank for rank, _ in failed]})
    for rank, code in failed:
        output.print_error(f"kvcli launch: rank {rank} exited with code {code}", as_json=as_json)
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
