"""A one-shot pull reads the committed values without starting a store (no device
processes, no Ray): the values a store would be loaded with, as independent copies."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kvcli.session import Session


def test_pull_without_a_live_store_starts_none_and_returns_the_committed_values(tmp_path: Path) -> None:
    big = np.arange(300_000, dtype=np.float32)  # a value file (memory-mapped when read)
    with Session("s", tmp_path, store_type="device", store_options={"num_devices": 2}) as session:
        session.init(["small", "big"], [np.full(3, 7, np.int32), big])
        session.push(["small"], [[np.ones(3, np.int32), np.ones(3, np.int32)]])
    with Session("s", tmp_path) as session:
        small, pulled_big = session.pull(["small", "big"], devices=2)
        assert session.store is None  # nothing was started to read them
    assert [a.tolist() for a in small] == [[2, 2, 2], [2, 2, 2]] and small[0].dtype == np.int32
    assert all(np.array_equal(a, big) and a.dtype == np.float32 for a in pulled_big)
    # independent, writable copies: writing one changes neither the other nor the session
    small[0][:] = 99
    pulled_big[0][:] = -1
    assert small[1].tolist() == [2, 2, 2] and np.array_equal(pulled_big[1], big)
    with Session("s", tmp_path) as session:
        assert session.pull(["small"])[0][0].tolist() == [2, 2, 2]
        assert np.array_equal(session.pull(["big"])[0][0], big)


def test_pull_in_an_open_session_reads_its_live_store(tmp_path: Path) -> None:
    with Session("s", tmp_path, store_type="local") as session:
        session.init(["w"], [np.zeros(2, np.float32)])
        session.set_updater("sgd:lr=0.5")
        session.push(["w"], [np.ones(2, np.float32)])
        assert session.store is not None
        assert session.pull(["w"])[0][0].tolist() == [-0.5, -0.5]
