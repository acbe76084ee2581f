"""The shared-memory pieces of the dist path, without Ray: a server's arenas with their step
counters, and a worker's :class:`~kvcli.store.ray.shm.Results` watching them."""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import pytest

from kvcli.store.ray import shm as dist_shm
from kvcli.store.ray.shm import Arenas, Mappings, Results


class FakeClock:
    """Stands in for ``time`` in dist_shm: its sleeps advance a virtual clock and are recorded,
    so how long a watch lasts is checked without measuring wall-clock time."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        #: Called after each sleep with the number of sleeps so far (a step applied "meanwhile").
        self.on_sleep: Optional[Callable[[int], None]] = None

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep(len(self.sleeps))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(dist_shm, "time", fake)
    return fake


@pytest.fixture
def arenas():
    held = Arenas()
    yield held
    held.close()


def test_each_value_has_a_zeroed_counter_of_its_own(arenas):
    parts = [arenas.allocate((n,), np.dtype(np.float32)) for n in (3, 1000, 17)]
    for where, value, counter in parts:
        value[...] = 7.0
        assert counter.tolist() == [0, 0]
        assert where.counter >= where.offset + value.nbytes  # after the value, never inside it
    for _, value, counter in parts:
        counter[0] = 5
        assert (value == 7.0).all()  # writing a counter leaves every value alone
    # a worker maps the segment and sees the same bytes
    where, value, counter = parts[1]
    seen = Mappings().view(where)
    assert not seen.flags.writeable and (seen == 7.0).all()


def _results_for(arenas, need_counter=True):
    where, value, counter = arenas.allocate((100,), np.dtype(np.float32))
    value[...] = 1.0
    results = Results(Mappings())
    results.learn("w", 0, where if need_counter else where._replace(counter=-1))
    return results, value, counter


@pytest.mark.skipif(not dist_shm.WATCH_COUNTERS, reason="counters are only watched on x86-64")
def test_a_pull_reads_a_step_its_counter_shows_once(arenas):
    results, value, counter = _results_for(arenas)
    assert results.ready([("w", 0, 1)], workers=1) == {}  # step 1 not applied, one worker: no watch
    counter[0] = 1
    found = results.ready([("w", 0, 1)], workers=1)
    assert list(found) == [("w", 0)] and (found["w", 0] == 1.0).all()
    assert results.ready([("w", 0, 1)], workers=1) == {}  # read once: a later pull asks the server


@pytest.mark.skipif(not dist_shm.WATCH_COUNTERS, reason="counters are only watched on x86-64")
def test_the_watch_ends_when_the_step_is_applied(arenas, clock):
    results, value, counter = _results_for(arenas)

    def apply_on_third_sleep(count: int) -> None:
        if count == 3:
            value[...] = 3.0
            counter[0] = 1

    clock.on_sleep = apply_on_third_sleep
    found = results.ready([("w", 0, 1)], workers=4)  # watches for up to 4 x 3 ms
    assert list(found) == [("w", 0)] and (found["w", 0] == 3.0).all()
    assert len(clock.sleeps) == 3  # it stopped watching as soon as the counter moved


@pytest.mark.skipif(not dist_shm.WATCH_COUNTERS, reason="counters are only watched on x86-64")
def test_the_watch_ends_at_once_on_a_failed_step_and_gives_up_in_time(arenas, clock):
    results, value, counter = _results_for(arenas)
    counter[1] = 1  # the update of step 1 failed: the pull must ask (the server raises)
    assert results.ready([("w", 0, 1)], workers=100) == {}
    assert clock.sleeps == []  # not watched at all
    counter[1] = 0  # not applied, not failed: watched for the budget, then the pull asks
    assert results.ready([("w", 0, 1)], workers=2) == {}
    budget = 2 * dist_shm.WATCH_SECONDS_PER_WORKER
    first, longest = dist_shm.WATCH_POLL_SECONDS
    assert clock.sleeps[0] == first and max(clock.sleeps) == longest  # backs off, up to the longest pause
    assert budget <= sum(clock.sleeps) < budget + longest  # gives up once the budget is spent


def test_an_answer_that_said_applied_is_enough_without_counters(arenas):
    results, value, counter = _results_for(arenas, need_counter=False)
    assert results.ready([("w", 0, 1)], workers=2) == {}  # no counter: nothing to watch
    results.learn("w", 0, results.where("w", 0), applied=1)  # a push's answer: step 1 is applied
    assert list(results.ready([("w", 0, 1)], workers=2)) == [("w", 0)]


def test_a_forgotten_key_is_asked_again(arenas):
    results, value, counter = _results_for(arenas)
    results.learn("w", 0, results.where("w", 0), applied=2)
    results.forget("w")
    assert results.ready([("w", 0, 2)], workers=1) == {}
    with pytest.raises(KeyError):
        results.where("w", 0)
