"""How a worker takes its place in a job: the group it joins (or, alone or as rank 0 of a
manual launch, starts) and its registration with the group's coordinator, which says how
many workers and servers the job has (see :mod:`kvcli.store.ray` for the variables)."""

from __future__ import annotations

import time
import uuid
from typing import Any, NamedTuple

from kvcli import config
from kvcli.errors import DistributedError
from kvcli.store.ray.calls import COORDINATOR_LOST, call
from kvcli.store.ray.group import DEFAULT_SERVER_RESTARTS, Group, find_group, mode_of, start_group

ENV_GROUP = config.GROUP.name
ENV_NUM_WORKERS = config.NUM_WORKERS.name


class Joined(NamedTuple):
    """A worker's place: its group and the job's sizes, as the coordinator counts them."""

    group: Group
    num_workers: int
    num_servers: int


def join(
    kind: str,
    ray: Any,
    *,
    group: str | None,
    rank: int,
    num_workers: int | None,
    num_servers: int | None,
    server_restarts: int | None,
    member: str | None,
    timeout: float,
) -> Joined:
    """Join group ``group`` as ``rank`` (``member``: a stable id to register with); with no
    group, start a group of this one worker. Options left None come from the ``KVCLI_*``
    variables; a size that differs from the group's is an error (and a group started here
    for it is stopped)."""
    mode = mode_of(kind)
    wanted_workers = num_workers if num_workers is not None else config.get(config.NUM_WORKERS)
    wanted_servers = num_servers if num_servers is not None else config.get(config.NUM_SERVERS)
    restarts = DEFAULT_SERVER_RESTARTS if server_restarts is None else int(server_restarts)
    if group is None:
        if (wanted_workers or 1) != 1 or rank != 0:
            raise DistributedError(
                f"{kind} with {wanted_workers} workers (rank {rank}) needs a group id: "
                f"start the workers with `kvcli launch` or set {ENV_GROUP} to the same value in each"
            )
        found = start_group(1, wanted_servers or 1, mode=mode, server_restarts=restarts, timeout=timeout)
    else:
        found = _find_or_start(group, rank, wanted_workers, wanted_servers or 1, restarts, timeout)
    try:
        joined = call(
            ray,
            found.coordinator.register.remote(rank, member or uuid.uuid4().hex, mode, ray.get_runtime_context().get_node_id()),
            f"joining kvcli group {found.id!r}",
            timeout,
            COORDINATOR_LOST,
        )
        place = Joined(found, int(joined["num_workers"]), int(joined["num_servers"]))
        for name, wanted, actual in (
            ("num_workers", wanted_workers, place.num_workers),
            ("num_servers", num_servers, place.num_servers),
        ):
            if wanted is not None and int(wanted) != actual:
                raise DistributedError(
                    f"{name}={wanted} but kvcli group {found.id!r} has {actual}: "
                    f"leave {name} unset to use the group's"
                )
    except BaseException:
        if found.owned:  # do not leave actors behind for a store that never was
            found.stop(ray)
        raise
    return place


def _find_or_start(group: str, rank: int, num_workers: int | None, num_servers: int, restarts: int, timeout: float) -> Group:
    """Find a launched group; rank 0 starts it when nobody has (a manual launch)."""
    found = find_group(group, timeout)
    if found is not None:
        return found
    if rank == 0:
        if num_workers is None:
            raise DistributedError(
                f"kvcli group {group!r} is not running and {ENV_NUM_WORKERS} is not set: "
                "rank 0 needs it to start the group"
            )
        try:
            return start_group(num_workers, num_servers, group=group, server_restarts=restarts, timeout=timeout)
        except DistributedError:
            found = find_group(group, timeout)  # another process won the race
            if found is None:
                raise
            return found
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.2)
        found = find_group(group, timeout)
        if found is not None:
            return found
    raise DistributedError(
        f"rank {rank}: kvcli group {group!r} did not appear within {timeout:g}s; "
        "start the workers with `kvcli launch`, or start rank 0 too"
    )
