"""Spec strings of every optimizer, the set-updater help list, state files, and exact
resumption across sessions and one-shot ``kvcli`` commands."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import kvcli
from kvcli.errors import OptimizerStateError, UpdaterError
from kvcli.optim.params import COMMON_PARAMS
from kvcli.optim.spec import builtin_optimizers, params_of, parse_updater, spec_help
from kvcli.session import Session
from tests.cli.conftest import KVCLI, kvcli_env

#: A non-default value for every argument kind (bool flips, words from the choices).
def _other(p) -> str:
    if p.kind == "bool":
        return "false" if p.default else "true"
    if p.kind == "str":
        return next(c for c in p.choices if c != p.default)
    if p.kind == "int":
        return "2" if p.spec != "begin_num_update" else "1"
    if p.kind == "optional":
        return "0.5"
    return "0.25" if p.default != 0.25 else "0.5"


@pytest.mark.parametrize("name", sorted(builtin_optimizers()))
def test_every_argument_round_trips_through_a_spec_string(name: str) -> None:
    cls = builtin_optimizers()[name]
    args = ",".join(f"{p.spec}={_other(p)}" for p in params_of(cls))
    opt = parse_updater(f"{name}:{args},schedule=factor:step=4:factor=0.5")
    again = parse_updater(opt.spec)
    assert again.spec == opt.spec and type(again) is cls
    for p in params_of(cls):
        assert getattr(again, p.attribute) == getattr(opt, p.attribute) != p.default, p.spec
    assert opt.lr_scheduler.step == 4 and opt.lr_scheduler.base_lr == opt.lr == 0.25


def test_help_lists_every_optimizer_and_argument() -> None:
    text = spec_help()
    for name, cls in builtin_optimizers().items():
        if name != "ccsgd":
            assert f"  ·  {name} " in text
        for p in cls.spec_params:
            assert f"{p.spec}=" in text
    for p in COMMON_PARAMS:
        assert f"{p.spec}=" in text
    assert "schedule=" in text and "cosine:max_update=N" in text


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nadm:lr=0.1", "'nadm' is not an updater or optimizer"),
        ("nag:lr=0.1,speed=2", "nag has no parameter 'speed'"),
        ("nag:lr=-0.1", "lr must not be negative"),
        ("rmsprop:centered=maybe", "centered must be true or false"),
        ("lbsgd:warmup_strategy=cubic", "warmup_strategy must be one of linear"),
        ("lbsgd:batch_scale=1.5", "batch_scale must be a whole number"),
        ("sgd:schedule=factor:speed=1", "factor has no argument 'speed'"),
        ("adam:lr=0.1,schedule=poly", "poly needs max_update=N"),
    ],
)
def test_bad_specs_name_the_problem_and_change_nothing(spec: str, message: str) -> None:
    with kvcli.create("local") as kv:
        kv.set_updater("nag:momentum=0.5")
        with pytest.raises(UpdaterError, match=message):
            kv.set_updater(spec)
        assert kv.updater_spec == "nag:momentum=0.5"


def test_state_file_of_another_optimizer_is_refused(tmp_path: Path) -> None:
    with kvcli.create("local") as kv:
        kv.init(0, np.ones(3, np.float32))
        kv.set_optimizer("nag:momentum=0.9")
        kv.push(0, np.ones(3, np.float32))
        kv.save_optimizer_states(tmp_path / "nag.npz")
        kv.set_optimizer("rmsprop:centered=true")
        kv.push(0, np.ones(3, np.float32))
        before = kv.updater.state_dict()
        with pytest.raises(OptimizerStateError, match="holds nag state but the updater is rmsprop"):
            kv.load_optimizer_states(tmp_path / "nag.npz")
        kv.set_optimizer("nag")  # same optimizer, other settings: no momentum array expected
        with pytest.raises(OptimizerStateError, match=r"holds \['momentum'\] but nag keeps no arrays"):
            kv.load_optimizer_states(tmp_path / "nag.npz")
        assert kv.updater_spec == "nag" and before["counts"] == {0: 1}


RESUME_SPECS = [
    "nag:lr=0.1,momentum=0.9,schedule=factor:step=2:factor=0.5",
    "nadam:lr=0.01,wd=0.01",  # Nadam's m_schedule is optimizer-wide
    "lbsgd:lr=0.1,momentum=0.5,batch_scale=2,warmup_epochs=1,updates_per_epoch=2",  # accumulates
    "lars:lr=0.1,momentum=0.9,eta=0.1,schedule=cosine:max_update=5:final_lr=0.01:warmup_steps=2",
    "adam:lr=0.01,multi_precision=true",
]
GRADS = [np.linspace(-1, 1, 4).astype(np.float32) * s for s in (1.0, -0.5, 2.0, 0.25, -1.5)]


def in_process(spec: str, dtype: str = "float32") -> dict[str, np.ndarray]:
    with kvcli.create("local") as kv:
        kv.init(["a", "b"], [np.ones(4, dtype), np.full(4, 2, dtype)])
        kv.set_updater(spec)
        for i, grad in enumerate(GRADS):
            kv.push("a" if i % 2 == 0 else "b", grad.astype(dtype))
        return {k: kv.pull(k) for k in ("a", "b")}


@pytest.mark.parametrize("spec", RESUME_SPECS)
def test_sessions_resume_exactly(tmp_path: Path, spec: str) -> None:
    dtype = "float16" if "multi_precision" in spec else "float32"
    expected = in_process(spec, dtype)
    with Session("t", tmp_path) as s:
        s.init(["a", "b"], [np.ones(4, dtype), np.full(4, 2, dtype)])
        s.set_updater(spec)
    for i, grad in enumerate(GRADS):  # a new session object per push, as one-shot commands
        with Session("t", tmp_path) as s:
            s.push(["a" if i % 2 == 0 else "b"], [grad.astype(dtype)])
    with Session("t", tmp_path) as s:
        for key in ("a", "b"):
            np.testing.assert_array_equal(s.pull([key])[0][0], expected[key])
        assert s.describe()["updater"] == parse_updater(spec).spec


def test_real_kvcli_binary_resumes_nag_with_a_schedule(tmp_path: Path) -> None:
    spec = RESUME_SPECS[0]
    env = kvcli_env(tmp_path)

    def kv(*args: str) -> str:
        done = subprocess.run([str(KVCLI), *args], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    kv("init", "w", "ones(4)")
    kv("set-updater", spec)
    with kvcli.create("local") as store:
        store.init("w", np.ones(4, np.float32))
        store.set_updater(spec)
        for grad in GRADS[:3]:
            store.push("w", grad)
        expected = store.pull("w")
    for grad in GRADS[:3]:
        kv("push", "w", json.dumps(grad.tolist()))
    got = np.array(json.loads(kv("pull", "w", "--json"))["value"], np.float32)
    np.testing.assert_array_equal(got, expected)
    assert "nag:lr=0.1,momentum=0.9,schedule=factor:step=2:factor=0.5" in kv("show")


def test_set_updater_help_lists_every_optimizer(tmp_path: Path) -> None:
    done = subprocess.run([str(KVCLI), "set-updater", "--help"], env=kvcli_env(tmp_path), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    words = done.stdout.replace("│", " ").split()
    for name in builtin_optimizers():
        if name != "ccsgd":
            assert name in words, name


def test_user_optimizer_class_from_a_file_resumes_in_a_session(tmp_path: Path) -> None:
    source = tmp_path / "myopt.py"
    source.write_text(
        "import kvcli.mx as mx\n\n"
        "class Halver(mx.optimizer.Optimizer):\n"
        "    state_names = ('velocity',)\n\n"
        "    def create_state(self, index, weight):\n"
        "        return mx.nd.zeros(weight.shape, weight.context)\n\n"
        "    def update(self, index, weight, grad, state):\n"
        "        self._update_count(index)\n"
        "        state[:] = 0.5 * state + grad\n"
        "        weight[:] -= self._get_lr(index) * state\n"
    )
    spec = f"python:{source}:Halver"
    with Session("t", tmp_path / "home") as s:
        s.init(["w"], [np.ones(3, np.float32)])
        assert s.set_updater(spec) == spec
    for _ in range(2):
        with Session("t", tmp_path / "home") as s:
            s.push(["w"], [np.ones(3, np.float32)])
    with Session("t", tmp_path / "home") as s:
        # velocity 1 then 1.5: w = 1 - 0.01 - 0.015
        np.testing.assert_allclose(s.pull(["w"])[0][0], np.float32(1 - 0.01 - 0.015), rtol=1e-6)
