"""Calls to kvcli's Ray actors, and Ray's failures as kvcli errors."""

from __future__ import annotations

import pickle
from typing import Any

from kvcli import config
from kvcli.errors import DistributedError, KVCliError
from kvcli.store.ray.server import PACKED_METHODS, WAIT_GROUP, WAITING_METHODS

ENV_TIMEOUT = config.DIST_TIMEOUT.name

#: What a dead server means for the job (Ray restarts it, empty).
SERVER_LOST = "a server restarted by Ray has lost its values: call init(...) again on every worker"
#: What a dead coordinator means. It is not restarted: a new one would not know which ranks
#: had joined or reached which barrier, and guessing could let a barrier pass too early.
COORDINATOR_LOST = (
    "the group's coordinator is gone and is not restarted (it alone knew which ranks joined "
    "and where each barrier stood): stop every worker and launch the job again"
)
#: What a dead node aggregator means (it lives as long as the group's coordinator).
AGGREGATOR_LOST = (
    "this node's aggregator (kvcli.store.ray.aggregate) is gone with the group's coordinator "
    "or its node: stop every worker and launch the job again"
)
#: Extra seconds a worker waits for a server's answer beyond the server's own timeout, so
#: the server's message (naming the missing ranks) arrives before the worker gives up.
ANSWER_GRACE = 15.0


def call(ray: Any, ref: Any, what: str, timeout: float, lost: str = SERVER_LOST) -> Any:
    """``ray.get(ref)`` (one ObjectRef or a list), waiting ``timeout`` seconds beyond the
    actors' own, with Ray's failures as kvcli errors; ``lost`` says what a dead actor means
    for the job."""
    try:
        return ray.get(ref, timeout=timeout + ANSWER_GRACE)
    except ray.exceptions.RayTaskError as error:
        cause = getattr(error, "cause", None)
        if isinstance(cause, KVCliError):
            raise cause from None  # the server's own message, as the local store says it
        if isinstance(cause, Exception):
            raise cause from None  # a user updater's exception, as it would be raised locally
        raise DistributedError(f"{what} failed: {error}") from None
    except ray.exceptions.GetTimeoutError:
        raise DistributedError(
            f"{what}: no answer after {timeout + ANSWER_GRACE:g}s (the actor hangs or the "
            f"cluster is overloaded); raise timeout=... or {ENV_TIMEOUT}"
        ) from None
    except ray.exceptions.RayActorError as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DistributedError(
            f"{what}: the actor died or is restarting ({type(error).__name__}: {reason}); {lost}"
        ) from None


def invoke(actor: Any, method: str, *args: Any) -> Any:
    """``actor.method.remote(*args)`` for a key server: a call that may wait for other workers
    in the servers' :data:`WAIT_GROUP`, and through the server's ``packed`` when no
    argument holds an ObjectRef (see :meth:`KeyServer.packed`; read its answer with
    :func:`unpacked`)."""
    # of the packed methods, only push_many's items can carry a reference (``[ref]``)
    refs = method == "push_many" and any(isinstance(item[2], list) for item in args[1])
    packed = method in PACKED_METHODS and not refs
    target = actor.packed if packed else getattr(actor, method)
    if method in WAITING_METHODS:
        target = target.options(concurrency_group=WAIT_GROUP)
    if packed:
        return target.remote(method, pickle.dumps(args, protocol=pickle.HIGHEST_PROTOCOL))
    return target.remote(*args)


def unpacked(answer: Any) -> Any:
    """A server's answer, unpickled when :meth:`KeyServer.packed` sent it as bytes (no
    answer of a server method is bytes otherwise)."""
    return pickle.loads(answer) if isinstance(answer, bytes) else answer
