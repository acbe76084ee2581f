"""Issue 20: optimizer state files read by the library (``kv.load_optimizer_states``,
``Updater.set_states``) never run code, are bounded before they are unpacked, are checked
whole before the optimizer changes, and cannot make a schedule loop for ages."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kvcli
import kvcli.mx as mx
from kvcli.errors import OptimizerStateError
from kvcli.optim.lr_scheduler import FactorScheduler
from kvcli.optim.state import dumps
from tests.optim.statefiles import bomb_member, read_members, rewrite, write_evil, write_members

GRAD = np.array([1.0, -2.0, 0.5], np.float32)


def saved(tmp_path: Path, spec: str = "sgd:lr=0.1,momentum=0.9", name: str = "opt.npz") -> Path:
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(3, np.float32))
        kv.set_updater(spec)
        kv.push("w", GRAD)
        kv.save_optimizer_states(tmp_path / name, dump_optimizer=True)
    return tmp_path / name


def test_load_optimizer_states_never_runs_code_the_file_names(tmp_path: Path) -> None:
    path = saved(tmp_path)
    evil, mark = write_evil(tmp_path)
    rewrite(path, lambda meta, _: meta.update(spec=f"python:{evil}:Opt", updater="opt"))
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(3, np.float32))
        kv.set_updater("nag:momentum=0.5")
        kv.push("w", GRAD)
        before = kv.updater.state_dict()
        with pytest.raises(OptimizerStateError, match="names Python code") as caught:
            kv.load_optimizer_states(path)
        assert "\n" not in str(caught.value)
        assert kv.updater_spec == "nag:momentum=0.5"
        assert kv.updater.state_dict()["counts"] == before["counts"]
    assert not mark.exists()


def test_updater_set_states_never_runs_code_the_bytes_name(tmp_path: Path) -> None:
    path = saved(tmp_path)
    evil, mark = write_evil(tmp_path)
    rewrite(path, lambda meta, _: meta.update(spec=f"python:{evil}:f"))
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))
    with pytest.raises(OptimizerStateError, match="names Python code"):
        updater.set_states(path.read_bytes())
    assert updater.optimizer.spec == "sgd:momentum=0.9"
    assert not mark.exists()


def test_state_of_a_python_updater_loads_into_the_one_the_user_set(tmp_path: Path) -> None:
    """The spec a python updater's own file carries is accepted for that same updater (set by
    the user, so trusted as set_updater is), and never parsed to make one."""
    source = tmp_path / "mine.py"
    source.write_text("import kvcli.mx as mx\n\nclass Mine(mx.optimizer.SGD):\n    pass\n")
    spec = f"python:{source}:Mine"
    path = saved(tmp_path, spec)
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(3, np.float32))
        with pytest.raises(OptimizerStateError, match="names Python code"):
            kv.load_optimizer_states(path)  # no updater set: the file cannot bring it
        kv.set_updater(spec)
        kv.load_optimizer_states(path)
        assert kv.updater.counts == {"w": 1}


def test_a_file_with_a_builtin_spec_still_brings_its_optimizer(tmp_path: Path) -> None:
    """MXNet's dump_optimizer: kvcli's own optimizers are data, not code, and are adopted."""
    path = saved(tmp_path, "adam:lr=0.01")
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(3, np.float32))
        kv.load_optimizer_states(path)
        assert kv.updater_spec == "adam:lr=0.01" and kv.updater.counts == {"w": 1}


def test_state_that_does_not_fit_the_stores_keys_is_refused_at_load(tmp_path: Path) -> None:
    """The old code accepted it, then failed every push of the key."""
    path = saved(tmp_path)
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(4, np.float32))
        kv.set_updater("sgd:lr=0.1,momentum=0.9")
        with pytest.raises(OptimizerStateError, match=r"has shape \(3,\) but the key's value has shape \(4,\)"):
            kv.load_optimizer_states(path)
        kv.push("w", np.ones(4, np.float32))  # the store carries on, unchanged
        assert kv.updater.counts == {"w": 1}


def test_members_of_unknown_keys_are_bounded_by_max_elements(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = saved(tmp_path)
    meta, members = read_members(path)
    members["state/0/momentum"] = bomb_member(1 << 20)
    write_members(path, meta, members, zipfile.ZIP_DEFLATED)
    monkeypatch.setenv("KVCLI_MAX_ELEMENTS", "1000")
    with kvcli.create("local") as kv:  # no key yet: its shape is unknown
        kv.set_updater("sgd:lr=0.1,momentum=0.9")
        with pytest.raises(OptimizerStateError, match="refused before unpacking"):
            kv.load_optimizer_states(path)


def test_a_failed_load_leaves_the_optimizer_as_it_was(tmp_path: Path) -> None:
    """Nadam's m_schedule "x": the old code replaced the counts, then raised a ValueError."""
    path = saved(tmp_path, "nadam:lr=0.01")
    rewrite(path, lambda meta, _: meta.update(counts=[5], extra={**meta["extra"], "m_schedule": "x"}))
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(3, np.float32))
        kv.set_updater("nadam:lr=0.01")
        kv.push("w", GRAD)
        kv.push("w", GRAD)
        before = kv.updater.state_dict()
        with pytest.raises(OptimizerStateError, match="m_schedule is 'x', not a finite number"):
            kv.load_optimizer_states(path)
        after = kv.updater.state_dict()
        assert after["counts"] == before["counts"] == {"w": 2}
        assert after["extra"] == before["extra"]


@pytest.mark.parametrize("spec", ["sgd:momentum=0.9,schedule=factor:step=1", "sgd:schedule=factor:step=3:factor=0.5"])
@pytest.mark.timeout(60)
def test_a_schedule_far_behind_its_step_count_catches_up_at_once(tmp_path: Path, spec: str) -> None:
    """num_update 2**62 with the schedule's count at 0: the old loop ran 2**62 turns."""
    path = saved(tmp_path, spec)
    rewrite(path, lambda meta, _: meta.update(counts=[1 << 62], extra={**meta["extra"], "num_update": 1 << 62}))
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(3, np.float32))
        kv.load_optimizer_states(path)
        kv.push("w", GRAD)
        schedule = kv.updater.lr_scheduler
        assert schedule.count + schedule.step >= (1 << 62) + 1 > schedule.count


def _looping(step: int, factor: float, stop: float, base_lr: float, calls: list[int]) -> list[tuple[float, int]]:
    """MXNet's FactorScheduler, turn by turn (the reference for the shortcut)."""
    count, lr, out = 0, base_lr, []
    for num_update in calls:
        while num_update > count + step:
            count += step
            lr *= factor
            if lr < stop:
                lr = stop
        out.append((lr, count))
    return out


@pytest.mark.parametrize("factor", [1.0, 0.5, 0.9, 0.0])
@pytest.mark.parametrize("step", [1, 3, 7])
def test_factor_schedule_shortcut_gives_the_looped_numbers(factor: float, step: int) -> None:
    rng = np.random.default_rng(step)
    calls = sorted(int(n) for n in rng.integers(0, 400, 40))
    schedule = FactorScheduler(step=step, factor=factor, stop_factor_lr=1e-3, base_lr=0.1)
    got = []
    for num_update in calls:
        got.append((schedule(num_update), schedule.count))
    assert got == _looping(step, factor, 1e-3, 0.1, calls)


@pytest.mark.parametrize(("extra", "message"), [
    ({"lr_scheduler": {"cur_step_ind": 9}}, "cur_step_ind is 9, more than its 2 steps"),
    ({"lr_scheduler": {"base_lr": 10**400}}, "base_lr is a 401-digit number, not a finite number"),
    ({"lr_scheduler": {"count": True}}, "count is True"),
    ({"lr_scheduler": "fast"}, "schedule's state is a str"),
    ({"num_update": 2.5}, "num_update is 2.5"),
    ({"device_counts": {"current": 0, "devices": [[0, [["str", "w", 10**400]]]]}}, "a 401-digit number"),
    ({"device_counts": {"current": -1, "devices": [[0, [["str", "w", 1]]]]}}, "device id .* is -1"),
    ({"device_counts": {"current": 0, "devices": [[0, [["code", "w", 1]]]]}}, "not \\[kind, key, count\\]"),
    ({"device_counts": {"current": 0, "devices": "all"}}, "not a table with a 'devices' list"),
])
def test_schedule_positions_are_checked(tmp_path: Path, extra: dict[str, Any], message: str) -> None:
    spec = "sgd:schedule=multifactor:step=2/4"
    path = saved(tmp_path, spec)
    rewrite(path, lambda meta, _: meta["extra"].update(extra))
    with kvcli.create("local") as kv:
        kv.set_updater(spec)
        with pytest.raises(OptimizerStateError, match=message):
            kv.load_optimizer_states(path)


@pytest.mark.parametrize("entry", [
    ["str", "w", 1, [[1.0, 2.0]], "float32"],  # another shape than the key's (3,)
    ["str", "w", 1, [1.0, "x", 2.0], "float32"],
    ["str", "w", -3, 0, "int64"],
    ["str", "w", 1, [1.0, 2.0, 3.0], "object"],
    ["int", "w", 1, 0, "int64"],
    "cumgrad",
])
def test_lbsgd_accumulated_gradients_are_checked(tmp_path: Path, entry: Any) -> None:
    spec = "lbsgd:lr=0.1,momentum=0.5,batch_scale=2"
    path = saved(tmp_path, spec)
    rewrite(path, lambda meta, _: meta["extra"].update(cumgrads=[entry]))
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(3, np.float32))
        kv.set_updater(spec)
        with pytest.raises(OptimizerStateError, match="LBSGD's accumulat"):
            kv.load_optimizer_states(path)


# ---------------------------------------------------------------------- fuzzing

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
FUZZ_EXAMPLES = int(os.environ.get("KVCLI_TEST_FUZZ_EXAMPLES", "80"))
_FIELDS = ["format", "updater", "spec", "keys", "counts", "extra", "extra.num_update", "extra.cumgrads",
           "extra.lr_scheduler", "extra.lr_scheduler.base_lr", "extra.lr_scheduler.count"]
_SPEC = "lbsgd:lr=0.1,momentum=0.5,batch_scale=2,schedule=factor:step=2"


def _base_state() -> bytes:
    with kvcli.create("local") as kv:
        kv.init(["w", "v"], [np.ones(3, np.float32), np.ones((2, 2), np.float32)])
        kv.set_updater(_SPEC)
        kv.push("w", GRAD)
        updater = kv.updater  # the bytes Updater.get_states(dump_optimizer=True) gives
        return dumps(updater.state_dict(), updater.name, updater.spec)


_BASE = _base_state()


def _load(blob: bytes) -> None:
    """Load ``blob`` the way a session does; only OptimizerStateError may come out, and a
    failed load leaves the optimizer's counts as they were."""
    from kvcli.optim.spec import parse_updater
    from kvcli.optim.state import read_state

    updater = parse_updater(_SPEC)
    try:
        target, saved = read_state(blob, updater, shapes={"w": (3,), "v": (2, 2)}, all_keys=True, adopt_spec=False)
        target.load_state_dict(saved.as_state(), {"w": (3,), "v": (2, 2)})
    except OptimizerStateError as error:
        assert "\n" not in str(error)
        assert updater.counts == {}


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(_FIELDS), value=_JSON)
def test_fuzzed_state_meta_is_loaded_or_refused_in_one_line(field: str, value: Any) -> None:
    import io
    import json as json_

    with zipfile.ZipFile(io.BytesIO(_BASE)) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    meta = json_.loads(np.load(io.BytesIO(members["__meta__.npy"])).tobytes().decode())
    *path, last = field.split(".")
    place = meta
    for part in path:
        place = place[part]
    place[last] = value
    from tests.optim.statefiles import npy_bytes

    members["__meta__.npy"] = npy_bytes(np.frombuffer(json_.dumps(meta).encode(), np.uint8))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    _load(out.getvalue())


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flips=st.lists(st.tuples(st.integers(0, len(_BASE) - 1), st.integers(0, 255)), min_size=1, max_size=6),
       cut=st.integers(1, len(_BASE)))
def test_fuzzed_state_bytes_are_loaded_or_refused_in_one_line(flips: list[tuple[int, int]], cut: int) -> None:
    blob = bytearray(_BASE)
    for position, byte in flips:
        blob[position] = byte
    _load(bytes(blob[:cut]) if cut < len(_BASE) // 2 else bytes(blob))


def test_state_file_is_private_and_written_whole(tmp_path: Path) -> None:
    """An optimizer state file is 0600 (it may hold what a model learnt) and replaces the old
    one whole: no temporary file stays beside it."""
    with kvcli.create("local") as kv:
        kv.init("w", np.ones(3, np.float32))
        kv.set_optimizer(mx.optimizer.create("adam", learning_rate=0.1))
        kv.push("w", np.ones(3, np.float32))
        kv.save_optimizer_states(str(tmp_path / "s.npz"))
        kv.save_optimizer_states(str(tmp_path / "s.npz"))
    assert (tmp_path / "s.npz").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["s.npz"]
