"""The KVStore over a recording backend (tests/store/fakes.py): what the store checks before
the backend sees anything, what it asks of the backend and in which order, and the updater
contract, all without a process or shared memory."""

from __future__ import annotations

import re

import numpy as np
import pytest

import kvcli
from kvcli.arrays.sparse import RowSparse
from kvcli.errors import (
    ArityError,
    DTypeMismatchError,
    KeyTypeError,
    OutputError,
    RowSparseError,
    ShapeMismatchError,
    StoreClosedError,
    UnknownKeyError,
    UnsupportedError,
    UpdaterError,
)
from kvcli.store.api import KVStore
from kvcli.store.compression import GradientCompression
from kvcli.updaters import Sum, parse_updater

from .fakes import RecordingBackend, recording_store

F32 = np.float32


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array

#: Bad calls on a store holding int keys 1 (float32 (2, 3)), 2 (float32 (4,)) and 3 (a
#: row-sparse (5, 2) table): each must raise its error before the backend sees anything.
BAD_CALLS = [
    ("push of the wrong shape", lambda kv: kv.push(1, np.ones((3, 2), F32)), ShapeMismatchError),
    ("push of the wrong dtype", lambda kv: kv.push(1, np.ones((2, 3), np.float64)), DTypeMismatchError),
    ("a list push whose last key is wrong", lambda kv: kv.push([1, 2], [np.ones((2, 3), F32), np.ones(5, F32)]),
     ShapeMismatchError),
    ("a device list with one wrong value", lambda kv: kv.push(2, [np.ones(4, F32), np.ones(4, np.int32)]),
     DTypeMismatchError),
    ("push to an unknown key", lambda kv: kv.push(9, np.ones(4, F32)), UnknownKeyError),
    ("keys and values that do not pair", lambda kv: kv.push([1, 2], [np.ones((2, 3), F32)]), ArityError),
    ("a str key in an int store", lambda kv: kv.init("w", np.ones(2, F32)), KeyTypeError),
    ("init listing a key twice", lambda kv: kv.init([5, 5], [np.ones(2, F32), np.ones(2, F32)]), ArityError),
    ("pull into an output of the wrong shape", lambda kv: kv.pull(2, out=np.empty(5, F32)), ShapeMismatchError),
    ("pull into a second output of the wrong dtype",
     lambda kv: kv.pull(2, out=[np.empty(4, F32), np.empty(4, np.float64)]), DTypeMismatchError),
    ("pull of a list whose last output is wrong",
     lambda kv: kv.pull([2, 1], out=[np.empty(4, F32), np.empty(3, F32)]), ShapeMismatchError),
    ("pushpull whose output does not fit", lambda kv: kv.pushpull(2, np.ones(4, F32), out=np.empty(3, F32)),
     ShapeMismatchError),
    ("pushpull in place into a read-only array", lambda kv: kv.pushpull(2, _read_only(np.ones(4, F32))), OutputError),
    ("row_sparse_pull of a dense key",
     lambda kv: kv.row_sparse_pull(2, out=RowSparse.zeros((4,), F32), row_ids=[0]), RowSparseError),
    ("row_sparse_pull into a dense output", lambda kv: kv.row_sparse_pull(3, out=np.zeros((5, 2), F32), row_ids=[0]),
     RowSparseError),
    ("row_sparse_pull of a row outside the table",
     lambda kv: kv.row_sparse_pull(3, out=RowSparse.zeros((5, 2), F32), row_ids=[7]), RowSparseError),
    ("broadcast into an output of the wrong shape",
     lambda kv: kv.broadcast(6, np.ones(3, F32), out=np.empty(2, F32)), ShapeMismatchError),
    ("a spec string without a parser", lambda kv: kv.set_updater("sum"), UpdaterError),
    ("an updater that is not callable", lambda kv: kv.set_updater(42), UpdaterError),
    ("compression on a store that has none", lambda kv: kv.set_gradient_compression({"type": "2bit"}),
     UnsupportedError),
]


def _filled(remote: bool = False) -> tuple[KVStore, RecordingBackend]:
    kv, backend = recording_store(remote)
    kv.init([1, 2], [np.arange(6, dtype=F32).reshape(2, 3), np.zeros(4, F32)])
    kv.init(3, RowSparse(np.ones((2, 2), F32), [1, 3], (5, 2)))
    backend.calls.clear()
    return kv, backend


@pytest.mark.parametrize("remote", [False, True], ids=["here", "remote"])
@pytest.mark.parametrize("what, call, error", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_a_bad_call_reaches_no_backend(what: str, call, error, remote: bool) -> None:
    kv, backend = _filled(remote)
    before = {k: (v.copy() if isinstance(v, RowSparse) else v.copy()) for k, v in backend.values.items()}
    with pytest.raises(error):
        call(kv)
    assert backend.calls == [], what
    assert kv.keys() == [1, 2, 3] and backend.values.keys() == before.keys()
    for key, value in before.items():
        held = backend.values[key]
        assert (held.to_dense() if isinstance(held, RowSparse) else held).tolist() == \
            (value.to_dense() if isinstance(value, RowSparse) else value).tolist()


def test_init_hands_over_copies_and_says_whether_it_starts_over() -> None:
    kv, backend = recording_store()
    value = np.ones(3, F32)
    kv.init(["a", "b"], [value, [1.0, 2.0]])
    kv.load("a", value)
    assert backend.calls == [("write", ["a", "b"], True), ("write", ["a"], False)]
    assert backend.values["a"] is not value and backend.values["a"].flags.c_contiguous
    value[:] = 7
    assert kv.pull("a").tolist() == [1.0, 1.0, 1.0]
    assert kv.info("b").shape == (2,) and kv.info("b").dtype == np.float64


def test_a_push_sums_every_key_first_then_applies_them_in_order() -> None:
    kv, backend = recording_store()
    kv.init([1, 2], [np.zeros(2, F32), np.zeros(3, F32)])
    backend.calls.clear()
    kv.push([2, 1], [[np.ones(3, F32), np.ones(3, F32)], np.full(2, 5, F32)])
    assert backend.calls == [("reduce", 2, 2), ("reduce", 1, 1), ("apply", [2, 1], None)]
    assert kv.pull([1, 2])[0].tolist() == [5, 5] and backend.values[2].tolist() == [2, 2, 2]


def test_a_key_pushed_twice_sees_its_first_push_applied_first() -> None:
    kv, backend = recording_store()
    kv.init(1, np.zeros(2, F32))
    kv.set_updater(Sum())
    backend.calls.clear()
    kv.push([1, 1], [np.ones(2, F32), np.full(2, 2, F32)])
    # stored() twice per push: the updater's argument, then the check that it was not replaced
    assert [c[0] for c in backend.calls] == ["reduce", "stored", "stored"] * 2
    assert backend.values[1].tolist() == [3, 3]


def test_the_updater_runs_here_once_per_key_in_order_and_the_backend_assigns_nothing() -> None:
    kv, backend = recording_store()
    kv.init([1, 2, 3], [np.ones(2, F32)] * 3)
    seen = []

    def updater(key, merged, stored):
        seen.append((key, merged.tolist()))
        stored += 2 * merged

    kv.set_updater(updater)
    assert backend.calls[-1] == ("set_updater", updater)
    backend.calls.clear()
    kv.push([3, 1, 2], [[np.ones(2, F32)] * 2, np.ones(2, F32), np.ones(2, F32)])
    assert seen == [(3, [2.0, 2.0]), (1, [1.0, 1.0]), (2, [1.0, 1.0])]
    assert [c[0] for c in backend.calls] == ["reduce"] * 3 + ["stored", "stored"] * 3  # no apply: the updater did it
    assert [backend.values[k].tolist() for k in (1, 2, 3)] == [[3, 3], [3, 3], [5, 5]]


@pytest.mark.parametrize("change, found", [
    (lambda stored: setattr(stored, "shape", (1, 3)), "float32 (1, 3)"),
    (lambda stored: setattr(stored, "dtype", np.int32), "int32 (3,)"),
])
def test_an_updater_that_reshapes_stored_is_refused_and_undone(change, found: str) -> None:
    kv, backend = recording_store()
    kv.init("w", np.arange(3, dtype=F32))
    kv.set_updater(lambda key, merged, stored: change(stored))
    held = backend.values["w"]
    with pytest.raises(UpdaterError, match=re.escape(f"to {found}, not in place as float32 (3,)")):
        kv.push("w", np.ones(3, F32))
    assert backend.values["w"] is held and held.shape == (3,) and held.dtype == F32
    assert held.tolist() == [0, 1, 2]
    assert not any(c[0] == "write" for c in backend.calls[2:])  # undone in place: nothing rewritten


def test_an_updater_that_replaces_stored_is_refused_and_the_stored_array_put_back() -> None:
    kv, backend = recording_store()
    original = np.arange(3, dtype=F32)
    kv.init("w", original)
    held = backend.values["w"]

    def replace(key, merged, stored):
        backend.values[key] = np.zeros(5, np.float64)

    kv.set_updater(replace)
    backend.calls.clear()
    with pytest.raises(UpdaterError, match="and replaced it"):
        kv.push("w", np.ones(3, F32))
    assert backend.calls[-1] == ("write", ["w"], False)
    assert backend.values["w"] is held and kv.pull("w").tolist() == [0, 1, 2]


def test_a_remote_backend_gets_every_push_with_the_compression_and_ships_the_updater() -> None:
    kv, backend = recording_store(remote=True, compression=True)
    kv.init("w", np.zeros(4, F32))
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.set_updater(Sum())
    assert backend.calls[-1][0] == "set_updater" and isinstance(backend.updater, Sum)
    backend.calls.clear()
    kv.push("w", [np.full(4, 0.25, F32), np.full(4, 0.5, F32)])
    (reduce, apply) = backend.calls
    assert reduce == ("reduce", "w", 2)
    assert apply[:2] == ("apply", ["w"]) and isinstance(apply[2], GradientCompression)
    # the worker's sum went uncompressed to the backend (it compresses per server part), and no
    # residual was made here per device
    assert backend.values["w"].tolist() == [0.75] * 4 and kv.compression_residuals("w") == []


def test_values_kept_here_are_compressed_per_device_before_the_sum() -> None:
    kv, backend = recording_store(compression=True)
    kv.init("w", np.zeros(4, F32))
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    backend.calls.clear()
    kv.push("w", [np.full(4, 0.25, F32), np.full(4, 0.5, F32)])
    assert backend.calls == [("reduce", "w", 2), ("apply", ["w"], None)]
    assert backend.values["w"].tolist() == [0.5] * 4  # 0 + 0.5: the first device's 0.25 waits
    assert [r.tolist() for r in kv.compression_residuals("w")] == [[0.25] * 4, [0.0] * 4]


def test_a_remote_backend_runs_the_updater_itself() -> None:
    kv, backend = recording_store(remote=True)
    kv.init("w", np.ones(2, F32))
    kv.set_updater(Sum())
    backend.calls.clear()
    kv.push("w", np.ones(2, F32))
    assert [c[0] for c in backend.calls] == ["reduce", "apply"]  # never stored(): nothing runs here
    assert backend.values["w"].tolist() == [2, 2]


def test_a_pull_of_several_keys_reads_them_at_once_after_checking_every_output() -> None:
    kv, backend = _filled()
    outs = [np.empty(4, F32), np.empty((2, 3), F32)]
    assert kv.pull([2, 1], out=outs) is outs
    assert backend.calls == [("read", [2, 1])]
    assert outs[1].tolist() == [[0, 1, 2], [3, 4, 5]]
    backend.calls.clear()
    copies = kv.pull([1, 3])
    assert backend.calls == [("read", [1, 3])]
    assert copies[0] is not backend.values[1] and isinstance(copies[1], RowSparse)


def test_row_sparse_rules_run_in_the_store_for_values_kept_here() -> None:
    kv, backend = _filled()
    kv.push(3, [RowSparse(np.ones((1, 2), F32), [4], (5, 2)), RowSparse(np.ones((1, 2), F32), [4], (5, 2))])
    assert [c[0] for c in backend.calls] == ["stored"]  # summed by row, never by reduce()
    assert backend.values[3].indices.tolist() == [4] and backend.values[3].data.tolist() == [[2, 2]]
    out = RowSparse.zeros((5, 2), F32)
    kv.row_sparse_pull(3, out=out, row_ids=[4, 0, 4])
    assert backend.calls[-1] == ("read_rows", 3, [[0, 4]])
    assert out.indices.tolist() == [0, 4] and out.data.tolist() == [[0, 0], [2, 2]]


def test_save_optimizer_states_gathers_the_state_first(tmp_path) -> None:
    kv, backend = recording_store(remote=True)
    kv.init("w", np.ones(2, F32))
    optimizer = parse_updater("sgd:lr=0.1,momentum=0.9")
    kv.set_optimizer(optimizer)
    kv.save_optimizer_states(tmp_path / "s.npz")
    assert backend.calls[-1] == ("gather_state", optimizer)
    kv.load_optimizer_states(tmp_path / "s.npz")
    assert backend.calls[-1] == ("set_updater", kv.updater)


def test_delete_barrier_and_close_reach_the_backend_and_a_closed_store_refuses() -> None:
    kv, backend = _filled()
    kv.delete(2)
    kv.barrier()
    kv.close()
    kv.close()
    assert backend.calls == [("forget", 2), ("barrier",), ("close",)] and backend.closed == 1
    for call in (lambda: kv.pull(1), lambda: kv.push(1, np.ones((2, 3), F32)), kv.barrier, lambda: kv.delete(1)):
        with pytest.raises(StoreClosedError):
            call()
    assert backend.calls[-1] == ("close",)


def test_spec_strings_go_through_the_parser_the_store_was_given() -> None:
    parsed = []

    def parse(spec: str):
        parsed.append(spec)
        return parse_updater(spec)

    kv, backend = recording_store(parse_updater=parse)
    kv.init("w", np.ones(2, F32))
    kv.set_updater("scale-add:2")
    kv.set_optimizer("sgd:lr=0.5")
    assert parsed == ["scale-add:2", "sgd:lr=0.5"] and kv.updater_spec == "sgd:lr=0.5"
    kv.set_updater("assign")
    assert kv.updater is None and backend.calls[-1] == ("set_updater", None)


def test_create_composes_the_registered_backend_and_passes_the_parser() -> None:
    with kvcli.create("local_allreduce_cpu") as kv:
        assert type(kv) is KVStore and type(kv.backend).__name__ == "LocalBackend"
        assert kv.type == "local_allreduce_cpu" and (kv.rank, kv.num_workers) == (0, 1)
        kv.init(0, np.ones(2, F32))
        kv.set_updater("sum")  # kvcli.create gave it the optimizer layer's parser
        kv.push(0, np.ones(2, F32))
        assert kv.pull(0).tolist() == [2, 2]
    from kvcli.store import create

    with create("local") as kv:
        with pytest.raises(UpdaterError, match="parse it with kvcli.updaters.parse_updater"):
            kv.set_updater("sum")
    with create("local", parse_updater=parse_updater) as kv:
        kv.set_updater("sum")
        assert isinstance(kv.updater, Sum)
