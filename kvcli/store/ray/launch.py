"""Start a distributed job: W workers and S servers on Ray (MXNet's ``tools/launch.py``).

:func:`launch` starts the group's servers and coordinator, then one Ray actor per worker
rank. Each worker actor either calls a Python function or runs a command (``python
train.py``) as a child process, with the ``KVCLI_*`` variables set so that
``kvcli.create("dist_sync")`` inside it joins the group with the right rank. The launcher
watches the workers: when one dies or exits, the others' waits for it fail at once with a
:class:`~kvcli.errors.DistributedError` instead of running into their timeout.

Commands run in the launcher's working directory on whichever node Ray places the worker;
on a multi-node cluster the script (and kvcli) must be present on every node.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any, Callable, Sequence

from kvcli import config
from kvcli.errors import DistributedError, StoreError
from kvcli.store.ray import store as dist


class WorkerProcess:
    """One worker rank, run as a Ray actor (so Ray places and supervises it)."""

    def __init__(self, rank: int, env: dict[str, str]) -> None:
        self.rank = rank
        self.env = env
        os.environ.update(env)  # kvcli.create() in this process reads them

    def __repr__(self) -> str:  # Ray prefixes the worker's output with this
        return f"rank {self.rank}"

    def run_function(self, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """Call ``function(*args)`` in this worker and return its result."""
        return function(*args)

    def run_command(self, command: list[str], cwd: str | None, stdout_to_stderr: bool = False) -> int:
        """Run ``command`` as a child process; its output goes to the launcher's terminal
        (its stdout to the launcher's stderr with ``stdout_to_stderr``)."""
        env = {**os.environ, **self.env}
        out = 2 if stdout_to_stderr else None  # this actor's stderr, which Ray forwards to the launcher's
        try:
            return subprocess.run(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                  check=False).returncode
        except OSError as error:
            raise DistributedError(f"rank {self.rank}: cannot run {command[0]!r}: {error}") from None


def check_command(command: Sequence[str], cwd: str) -> None:
    """Refuse a command whose program, or whose Python script, does not exist here, before
    anything starts (a worker would say so only after Ray and the group had started)."""
    program = command[0]
    if os.sep in program:
        path = os.path.join(cwd, program)
        found = os.path.isfile(path) and os.access(path, os.X_OK)
    else:
        found = shutil.which(program) is not None
    if not found:
        raise StoreError(f"cannot run {program!r}: no such program" + ("" if os.sep in program else " on PATH"))
    if not re.fullmatch(r"python[0-9.]*", os.path.basename(program)):
        return
    script = _python_script(command[1:])
    if script is not None and not os.path.isfile(os.path.join(cwd, script)):
        raise StoreError(f"{program}: no script {script!r} in {cwd}")


def _python_script(words: Sequence[str]) -> str | None:
    """The script a ``python`` command line runs (None for ``-c``, ``-m`` or stdin)."""
    words = list(words)
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-c", "-m", "-") or word.startswith(("-c", "-m")):
            return None
        if word in ("-W", "-X"):  # options whose value is the next word
            index += 2
            continue
        if word == "--":
            return words[index + 1] if index + 1 < len(words) else None
        if not word.startswith("-"):
            return word
        index += 1
    return None


def launch(
    target: Callable[..., Any] | Sequence[str],
    num_workers: int,
    *,
    num_servers: int = 1,
    args: tuple[Any, ...] = (),
    address: str | None = None,
    timeout: float | None = None,
    server_restarts: int = dist.DEFAULT_SERVER_RESTARTS,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    return_exceptions: bool = False,
    server_resources: dict[str, float] | Sequence[dict[str, float]] | None = None,
    worker_resources: dict[str, float] | Sequence[dict[str, float]] | None = None,
    stdout_to_stderr: bool = False,
) -> list[Any]:
    """Run ``target`` on ``num_workers`` ranks against ``num_servers`` servers; wait for all.

    Args:
        target: a function (called as ``target(*args)`` in each worker; it must be
            importable or picklable by Ray) or a command line (``["python", "train.py"]``).
        num_workers: W, the number of worker ranks.
        num_servers: S, the number of server actors.
        address: the Ray cluster (default ``KVCLI_RAY_ADDRESS``, else the current
            connection, else a new local instance).
        timeout: seconds the workers wait for each other (``KVCLI_DIST_TIMEOUT``).
        server_restarts: how often Ray may restart a server actor (see :mod:`kvcli.store.ray`).
        env: extra environment variables for every worker.
        cwd: working directory of commands (default: this process's).
        return_exceptions: for functions, put a failed rank's exception in the result list
            instead of raising.
        server_resources: Ray custom resources the servers need (places them on the nodes
            started with ``ray start --resources='{"NAME": 1}'``); a list: one per server.
        worker_resources: the same for the workers: one dict for every rank, or one per rank.
        stdout_to_stderr: for commands, send their standard output to the launcher's stderr
            (``kvcli --json launch`` keeps its stdout for its one JSON line).

    Returns:
        Per rank, in rank order: the function's result, or the command's exit code.

    Raises:
        DistributedError: a worker function failed (unless ``return_exceptions``).
    """
    if num_workers < 1:
        raise StoreError(f"launch needs at least 1 worker, got {num_workers}")
    is_command = not callable(target)
    if is_command:
        command = [str(part) for part in target]  # type: ignore[union-attr]
        if not command:
            raise StoreError("launch needs a command to run, e.g. kvcli launch -n 2 -- python train.py")
        check_command(command, cwd or os.getcwd())
    if worker_resources is None or isinstance(worker_resources, dict):
        per_rank = [worker_resources] * num_workers
    else:
        per_rank = list(worker_resources)
        if len(per_rank) != num_workers:
            raise StoreError(f"worker_resources lists {len(per_rank)} ranks but num_workers is {num_workers}")
    ray = dist.connect(address, "launch")
    wait = float(timeout) if timeout is not None else config.get(config.DIST_TIMEOUT)
    group = dist.start_group(
        num_workers, num_servers, server_restarts=server_restarts, timeout=wait, server_resources=server_resources
    )
    shared = {
        dist.ENV_ADDRESS: dist.cluster_address(ray),
        dist.ENV_GROUP: group.id,
        dist.ENV_NUM_WORKERS: str(num_workers),
        dist.ENV_NUM_SERVERS: str(num_servers),
        dist.ENV_TIMEOUT: str(wait),
        **(env or {}),
    }
    worker_class = ray.remote(WorkerProcess)
    workers = []
    try:
        refs: dict[Any, int] = {}
        for rank in range(num_workers):
            resources = per_rank[rank]
            placement = {"resources": dict(resources)} if resources else {}
            worker = worker_class.options(num_cpus=0, max_restarts=0, **placement).remote(
                rank, {**shared, dist.ENV_RANK: str(rank)}
            )
            workers.append(worker)
            if is_command:
                refs[worker.run_command.remote(command, cwd or os.getcwd(), stdout_to_stderr)] = rank
            else:
                refs[worker.run_function.remote(target, tuple(args))] = rank
        results: list[Any] = [None] * num_workers
        failures: dict[int, BaseException] = {}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            rank = refs[done[0]]
            try:
                results[rank] = ray.get(done[0])
                reason = (
                    f"exited with code {results[rank]}" if is_command else "has finished"
                )
            except Exception as error:  # noqa: BLE001 - reported per rank below
                failures[rank] = _unwrap(error, rank)
                results[rank] = failures[rank]
                reason = f"failed ({type(failures[rank]).__name__}: {_first_line(failures[rank])})"
            group.mark_gone(rank, reason)
    finally:
        for worker in workers:
            ray.kill(worker, no_restart=True)
        group.stop(ray)
    if failures and not return_exceptions:
        summary = "; ".join(
            f"rank {r}: {type(e).__name__}: {_first_line(e)}" for r, e in sorted(failures.items())
        )
        raise DistributedError(f"{len(failures)} of {num_workers} workers failed: {summary}") from failures[
            min(failures)
        ]
    return results


def _unwrap(error: BaseException, rank: int) -> BaseException:
    """The worker's own exception out of Ray's wrapper; a dead process as DistributedError."""
    import ray

    if isinstance(error, ray.exceptions.RayTaskError):
        cause = getattr(error, "cause", None)
        if isinstance(cause, BaseException):
            return cause
    if isinstance(error, ray.exceptions.RayActorError):
        return DistributedError(f"rank {rank}'s worker process died: {_first_line(error)}")
    return error


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


__all__ = ["WorkerProcess", "check_command", "launch"]
