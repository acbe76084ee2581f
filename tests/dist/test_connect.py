"""Which cluster a process joins: only the one it is told to. Ray's own default
(``ray.init()`` with no address) joins whatever ``/tmp/ray/ray_current_cluster`` names — a
`kvcli cluster up` of another home, someone's `ray start`, or a dead cluster that hangs the
command for minutes — so kvcli passes ``"local"`` unless an address is given."""

from __future__ import annotations

from typing import Any

import pytest

from kvcli.store import dist_group


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
