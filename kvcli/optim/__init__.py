"""MXNet 1.9.1's optimizer API on numpy: the :class:`Optimizer` base class and registry,
every optimizer 1.9.1 registers, learning-rate schedules, spec strings and state files.

==========================  ==================================================================
``base``                    Optimizer, register / create, the row-sparse protocol
``updater``                 MXNet's Updater (get_updater): per-index state
``sgd``                     sgd (ccsgd), nag, signum, lars, lbsgd, dcasgd, sgld
``adaptive``                adam, adamax, nadam, ftml, lamb, adagrad, rmsprop, adadelta, ftrl
``lr_scheduler``            Factor, MultiFactor, Poly and Cosine schedules with warm-up
``simple``                  assign, sum, scale-add:K, python:FILE.py:NAME
``spec``                    spec strings <-> updaters; the ``set-updater`` help list
``state``                   pickle-free ``.npz`` state files
==========================  ==================================================================
"""

from __future__ import annotations

from kvcli.optim import adaptive, sgd  # noqa: F401 - importing registers the optimizers
from kvcli.optim.adaptive import FTML, LAMB, AdaDelta, AdaGrad, Adam, Adamax, Ftrl, Nadam, RMSProp
from kvcli.optim.base import Optimizer, create, register, registered
from kvcli.optim.sgd import DCASGD, LARS, LBSGD, NAG, SGD, SGLD, Signum, ccSGD
from kvcli.optim.spec import as_optimizer, create_optimizer, parse_updater, spec_help
from kvcli.optim.state import load_state, save_state
from kvcli.optim.updater import Updater

__all__ = [
    "DCASGD", "FTML", "LAMB", "LARS", "LBSGD", "NAG", "SGD", "SGLD", "AdaDelta", "AdaGrad", "Adam", "Adamax",
    "Ftrl", "Nadam", "Optimizer", "RMSProp", "Signum", "Updater", "as_optimizer", "ccSGD", "create",
    "create_optimizer", "load_state", "parse_updater", "register", "registered", "save_state", "spec_help",
]
