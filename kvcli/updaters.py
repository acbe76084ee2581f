"""Updaters: how a push changes a stored value, as persistable spec strings.

A thin re-export of :mod:`kvcli.optim` (where the optimizers, spec strings and state files
live): the public place to turn a spec string into an updater (:func:`parse_updater`), the
one parser the stores made by :func:`kvcli.create` use for ``set_updater("sum")`` (the
engine itself takes updater objects and parses nothing). An updater is called as
``updater(key, merged, stored)`` and changes ``stored`` in place (MXNet's signature).
Names are looked up on first use, so a plain ``sum`` updater does not load every optimizer.
"""

from __future__ import annotations

import importlib
from typing import Any

from kvcli.optim.simple import Assign, PythonUpdater, ScaleAdd, Sum  # noqa: F401
from kvcli.optim.simple import StoreUpdater as Updater  # noqa: F401 - the base of the simple updaters
from kvcli.optim.spec import as_optimizer, create_optimizer, parse_updater, spec_help  # noqa: F401
from kvcli.optim.state import STATE_FORMAT, load_state, save_state  # noqa: F401


def __getattr__(name: str) -> Any:
    if name == "OPTIMIZERS":  # every built-in optimizer by spec name
        return importlib.import_module("kvcli.optim.spec").builtin_optimizers()
    if name == "SPEC_HELP":
        return spec_help()
    return getattr(importlib.import_module("kvcli.optim"), name)
