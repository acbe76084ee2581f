"""Built-in optimizers' constructors are made from their ``spec_params`` table: they must take
MXNet 1.9.1's arguments in MXNet's positional order with MXNet's defaults (recorded by
``tests/data/make_mxnet_optimizer_signatures.py``) and store each where the kernels read it."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

import kvcli.mx as mx
from kvcli.optim.registry import registered

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "mxnet_optimizer_signatures.json").read_text())
# ccsgd is ``(*args, **kwargs)`` in MXNet (a deprecated alias that forwards to SGD).
NAMES = sorted(n for n in RECORDED["optimizers"] if n in registered() and n != "ccsgd")


@pytest.mark.parametrize("name", NAMES)
def test_signature_is_mxnets(name: str) -> None:
    cls = registered()[name]
    params = inspect.signature(cls.__init__).parameters.values()
    ours = [[p.name, p.default] for p in params if p.name != "self" and p.kind is p.POSITIONAL_OR_KEYWORD]
    assert ours == RECORDED["optimizers"][name]["args"]


@pytest.mark.parametrize("name", NAMES)
def test_positional_arguments_land_on_their_attributes(name: str) -> None:
    cls = registered()[name]
    args = RECORDED["optimizers"][name]["args"]
    values = [(not d) if isinstance(d, bool) else (0.5 if d is None else type(d)(3) if not isinstance(d, str) else d)
              for _, d in args]
    opt = cls(*values)
    for (arg, _), value in zip(args, values):
        attribute = {"learning_rate": "lr", "eps": "float_stable_eps" if name == "adagrad" else "eps"}.get(arg, arg)
        if name == "lbsgd" and arg == "multi_precision":
            attribute = "multi_precision"
        assert getattr(opt, attribute) == value, (arg, attribute)


def test_learning_rate_left_to_kwargs_keeps_the_base_default_and_the_scheduler(capsys: pytest.CaptureFixture[str]) -> None:
    # SGD names no learning_rate (MXNet gives it to the base class): 0.01, or the scheduler's.
    assert mx.optimizer.SGD().lr == 0.01
    sched = mx.lr_scheduler.FactorScheduler(step=10, base_lr=0.3)
    assert mx.optimizer.SGD(lr_scheduler=sched).learning_rate == pytest.approx(0.3)
    # Adam names learning_rate=0.001, so MXNet's Adam overrides a scheduler's base_lr, printing
    # a UserWarning on stdout (MXNet 1.9.1's print, not warnings.warn): a program's output
    # must read the same, line for line.
    capsys.readouterr()
    sched = mx.lr_scheduler.FactorScheduler(step=10, base_lr=0.3)
    assert mx.optimizer.Adam(lr_scheduler=sched).learning_rate == pytest.approx(0.001)
    out, err = capsys.readouterr()
    assert out == "learning rate from ``lr_scheduler`` has been overwritten by ``learning_rate`` in optimizer.\n"
    assert err == ""


def test_extra_state_set_after_the_arguments() -> None:
    assert mx.optimizer.SGD().aggregate_num == 4
    assert mx.optimizer.LAMB().aggregate_num == 45
    assert mx.optimizer.Nadam().m_schedule == 1.0
    assert mx.optimizer.DCASGD().weight_previous == {}
    lars = mx.optimizer.LARS(0.9)
    assert (lars.momentum, lars.skip, lars.last_lr, lars.aggregate_num) == (0.9, 0, None, 4)


def test_bad_calls_raise_type_error_like_python() -> None:
    with pytest.raises(TypeError, match=r"SGD\(\) takes at most 2 positional arguments \(3 given\)"):
        mx.optimizer.SGD(0.9, True, 1)
    with pytest.raises(TypeError, match="multiple values for argument 'momentum'"):
        mx.optimizer.SGD(0.9, momentum=0.5)
    with pytest.raises(TypeError):
        mx.optimizer.Adam(not_an_argument=1)
