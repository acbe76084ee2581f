"""Placement helpers of multi-node runs: one server_resources entry per server, and the
link bound bench/dist.py --nodes reports (pure functions: no Ray, no namespaces)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kvcli.errors import StoreError
from kvcli.store.ray.group import _per_server

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.netns import link_bound  # noqa: E402

MIB16 = 16 * 2**20


def test_server_resources_one_dict_for_all_or_one_per_server() -> None:
    assert _per_server(None, 2) == [None, None]
    assert _per_server({"a": 0.01}, 2) == [{"a": 0.01}, {"a": 0.01}]
    assert _per_server([{"node0": 0.01}, {"node1": 0.01}], 2) == [{"node0": 0.01}, {"node1": 0.01}]
    with pytest.raises(StoreError, match="server_resources lists 1 servers but num_servers is 2"):
        _per_server([{"node0": 0.01}], 2)


def test_link_bound_is_the_busiest_link_direction() -> None:
    ten = 10.0  # Gbit/s
    one = MIB16 * 8 / 10e9  # seconds for 16 MiB on one link direction
    # one worker on node 1, the server on node 0: 16 MiB up and 16 MiB back, one each way
    assert link_bound(MIB16, [1], [0], ten) == pytest.approx(one)
    # four workers on node 1: four pushes share its uplink; the result crosses back once
    assert link_bound(MIB16, [1, 1, 1, 1], [0], ten) == pytest.approx(4 * one)
    # workers on nodes 1 and 2: node 0's downlink carries both pushes, its uplink two results
    assert link_bound(MIB16, [1, 2], [0], ten) == pytest.approx(2 * one)
    # the key split over servers on nodes 0 and 1, workers on 1 and 2: node 0's downlink
    # carries half of each push (one 16 MiB), node 1's half of worker 2's push and half of
    # server 0's result (one 16 MiB), node 2's downlink the two halves of the result
    assert link_bound(MIB16, [1, 2], [0, 1], ten) == pytest.approx(one)
    # everything on one node: nothing crosses
    assert link_bound(MIB16, [0, 0], [0], ten) == 0.0


def test_link_bound_with_the_node_local_presum() -> None:
    one = MIB16 * 8 / 10e9
    # four workers on node 1 pre-sum there: one 16 MiB value up, one result back
    assert link_bound(MIB16, [1, 1, 1, 1], [0], 10.0, presum=True) == pytest.approx(one)
    # two workers on each of nodes 1 and 2: node 0's downlink carries one sum per node
    assert link_bound(MIB16, [1, 1, 2, 2], [0], 10.0, presum=True) == pytest.approx(2 * one)
    assert link_bound(MIB16, [1, 1, 2, 2], [0], 10.0) == pytest.approx(4 * one)  # per worker
