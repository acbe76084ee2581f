"""Updaters: how a push changes a stored value, as persistable spec strings.

A thin re-export of :mod:`kvcli.optim` (where the optimizers, spec strings and state files
live), kept because the stores and the session import from here. An updater is called as
``updater(key, merged, stored)`` and changes ``stored`` in place (MXNet's signature).
"""

from __future__ import annotations

from kvcli.optim import (  # noqa: F401 - re-exported
    DCASGD, FTML, LAMB, LARS, LBSGD, NAG, SGD, SGLD, AdaDelta, AdaGrad, Adam, Adamax, Ftrl, Nadam, Optimizer,
    RMSProp, Signum, as_optimizer, create_optimizer, load_state, parse_updater, save_state, spec_help,
)
from kvcli.optim.simple import Assign, PythonUpdater, ScaleAdd, Sum  # noqa: F401
from kvcli.optim.simple import StoreUpdater as Updater  # noqa: F401 - the base of the simple updaters
from kvcli.optim.spec import builtin_optimizers
from kvcli.optim.state import STATE_FORMAT  # noqa: F401

#: Every built-in optimizer by spec name.
OPTIMIZERS = builtin_optimizers()
SPEC_HELP = spec_help()
