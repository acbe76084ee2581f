"""A spec's schedule starts at the rate the optimizer uses, so MXNet's override never
applies silently: the common spec prints nothing, a conflicting base_lr is refused."""

from __future__ import annotations

import pytest

from kvcli.errors import UpdaterError
from kvcli.updaters import parse_updater


def test_a_schedule_without_lr_starts_at_the_optimizers_own_default_and_prints_nothing(
        capsys: pytest.CaptureFixture[str]) -> None:
    adam = parse_updater("adam:schedule=factor:step=10")
    assert adam.learning_rate == pytest.approx(0.001)  # Adam's own default, as MXNet's Adam(lr_scheduler=...)
    assert adam.lr_scheduler.base_lr == pytest.approx(0.001)
    sgd = parse_updater("sgd:schedule=factor:step=10:base_lr=0.5")  # SGD names no rate: the schedule's wins
    assert sgd.learning_rate == pytest.approx(0.5)
    assert capsys.readouterr() == ("", "")


def test_a_base_lr_the_optimizers_rate_would_override_is_refused_naming_the_fix() -> None:
    with pytest.raises(UpdaterError, match=r"base_lr=0\.5 would be overridden by the optimizer's lr=0\.001.*give lr=0\.5"):
        parse_updater("adam:schedule=factor:step=10:base_lr=0.5")
    with pytest.raises(UpdaterError, match=r"base_lr=0\.5 would be overridden by the optimizer's lr=0\.2"):
        parse_updater("sgd:lr=0.2,schedule=factor:step=10:base_lr=0.5")
