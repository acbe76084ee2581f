"""The shared-memory pieces of the dist path, without Ray: a server's arenas with their step
counters, and a worker's :class:`~kvcli.store.dist_shm.Results` watching them."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from kvcli.store import dist_shm
from kvcli.store.dist_shm import Arenas, Mappings, Results


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
def test_the_watch_ends_when_the_step_is_applied(arenas):
    results, value, counter = _results_for(arenas)

    def apply_soon() -> None:
        time.sleep(0.002)
        value[...] = 3.0
        counter[0] = 1

    threading.Thread(target=apply_soon).start()
    found = results.ready([("w", 0, 1)], workers=4)  # watches for up to 4 x 3 ms
    assert list(found) == [("w", 0)] and (found["w", 0] == 3.0).all()


@pytest.mark.skipif(not dist_shm.WATCH_COUNTERS, reason="counters are only watched on x86-64")
def test_the_watch_ends_at_once_on_a_failed_step_and_gives_up_in_time(arenas):
    results, value, counter = _results_for(arenas)
    counter[1] = 1  # the update of step 1 failed: the pull must ask (the server raises)
    start = time.monotonic()
    assert results.ready([("w", 0, 1)], workers=100) == {}
    assert time.monotonic() - start < 0.05
    counter[1] = 0  # not applied, not failed: watched for the budget, then the pull asks
    start = time.monotonic()
    assert results.ready([("w", 0, 1)], workers=2) == {}
    waited = time.monotonic() - start
    assert 2 * dist_shm.WATCH_SECONDS_PER_WORKER <= waited < 0.5


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
