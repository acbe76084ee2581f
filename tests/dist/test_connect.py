"""Which cluster a process joins: only the one it is told to. Ray's own default
(``ray.init()`` with no address) joins whatever ``/tmp/ray/ray_current_cluster`` names — a
`kvcli cluster up` of another home, someone's `ray start`, or a dead cluster that hangs the
command for minutes — so kvcli passes ``"local"`` unless an address is given."""

from __future__ import annotations

import os
from typing import Any

import pytest

from kvcli.store.ray import group as dist_group


class _FakeRay:
    def __init__(self) -> None:
        self.addresses: list[Any] = []

    def is_initialized(self) -> bool:
        return False

    def init(self, address: Any = None, **kwargs: Any) -> None:
        self.addresses.append(address)


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> _FakeRay:
    fake = _FakeRay()
    monkeypatch.setattr(dist_group, "import_ray", lambda kind: fake)
    monkeypatch.delenv("KVCLI_RAY_ADDRESS", raising=False)
    monkeypatch.setattr(dist_group, "_joined", False)
    for name in (dist_group.AUTH_MODE, dist_group.AUTH_TOKEN_PATH, dist_group.AUTH_TOKEN):
        # a fake start still gives this process a token of its own: the real Ray this test
        # process may run (and the commands it starts) keep theirs
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.delenv(name, raising=False)
    return fake


def test_without_an_address_a_new_local_instance_is_started(fake_ray: _FakeRay) -> None:
    dist_group.connect()
    assert fake_ray.addresses == ["local"]
    assert dist_group._joined is False


def test_an_address_from_the_environment_is_joined(fake_ray: _FakeRay, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVCLI_RAY_ADDRESS", "auto")
    dist_group.connect()
    assert fake_ray.addresses == ["auto"]
    assert dist_group._joined is True


def test_an_explicit_address_wins(fake_ray: _FakeRay, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVCLI_RAY_ADDRESS", "auto")
    dist_group.connect("127.0.0.1:6379")
    assert fake_ray.addresses == ["127.0.0.1:6379"]


def test_a_local_instance_runs_the_servers_at_nice_zero(ray_cluster: Any) -> None:
    """Ray runs its workers at nice 15 by default; kvcli starts Ray with 0, or a busy machine
    leaves its servers a few percent of a core (see dist_group.LOCAL_RAY_SYSTEM_CONFIG).
    The session's cluster comes from the same ``ray_init_options`` as ``connect()``'s."""
    import os

    import kvcli

    with kvcli.create("dist_sync") as kv:
        pid = ray_cluster.get(kv.backend._servers[0].pid.remote())
        assert os.getpriority(os.PRIO_PROCESS, pid) == 0


def test_only_a_started_instance_gets_kvcli_settings() -> None:
    assert dist_group.ray_init_options("local")["_system_config"] == {"worker_niceness": 0}
    assert "_system_config" not in dist_group.ray_init_options("auto")  # Ray refuses them when joining


def test_a_failed_start_and_a_failed_join_say_different_things(fake_ray: _FakeRay, monkeypatch: pytest.MonkeyPatch) -> None:
    from kvcli.errors import DistributedError

    def refuse(address: Any = None, **kwargs: Any) -> None:
        raise ConnectionError("nope")

    monkeypatch.setattr(fake_ray, "init", refuse)
    with pytest.raises(DistributedError, match="cannot start a local Ray instance: nope") as started:
        dist_group.connect()
    assert "KVCLI_RAY_ADDRESS" not in str(started.value)  # nothing to unset: none was set
    with pytest.raises(DistributedError, match=r"cannot connect to the Ray cluster at 'auto': nope.*ray start --head"):
        dist_group.connect("auto")
