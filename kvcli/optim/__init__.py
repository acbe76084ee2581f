"""MXNet 1.9.1's optimizer API on numpy: the :class:`Optimizer` base class and registry,
every optimizer 1.9.1 registers, learning-rate schedules, spec strings and state files.

==========================  ==================================================================
``checks``                  the leaf: state-file numbers, spec-number text, array protocols
``views``                   the NDArray views the MXNet layer installs for user optimizers
``mxfloat``                 hyper-parameters as MXNet's operators parse them (dmlc's strtof)
``kernels``                 MXNet's fused optimizer kernels, bit for bit
``per_index``               one state per index (the core of MXNet's Updater)
``base``                    Optimizer and register
``blocks``                  elementwise kernels run in cache-sized blocks (same bits, no page faults)
``registry``                registered / create: the built-ins and the user's optimizers
``updater``                 MXNet's Updater (get_updater): per-index state as bytes
``sgd``                     sgd (ccsgd), nag, signum, lars, lbsgd, dcasgd, sgld, test
``adaptive``                adam, adamax, nadam, ftml, lamb, adagrad, rmsprop, adadelta, ftrl
``lr_scheduler``            Factor, MultiFactor, Poly and Cosine schedules with warm-up
``simple``                  assign, sum, scale-add:K, python:FILE.py:NAME
``spec``                    spec strings <-> updaters; the ``set-updater`` help list
``state``                   pickle-free ``.npz`` state files
==========================  ==================================================================
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module that defines it (imported on first use: one-shot commands with
#: a plain updater do not load every optimizer).
_EXPORTS = {
    **dict.fromkeys(("DCASGD", "LARS", "LBSGD", "NAG", "SGD", "SGLD", "Signum", "Test", "ccSGD"), "kvcli.optim.sgd"),
    **dict.fromkeys(("FTML", "LAMB", "AdaDelta", "AdaGrad", "Adam", "Adamax", "Ftrl", "Nadam", "RMSProp"),
                    "kvcli.optim.adaptive"),
    # from the registry, so that kvcli.optim.Optimizer.create_optimizer finds the built-ins
    **dict.fromkeys(("Optimizer", "create", "register", "registered"), "kvcli.optim.registry"),
    **dict.fromkeys(("as_optimizer", "create_optimizer", "parse_updater", "spec_help"), "kvcli.optim.spec"),
    **dict.fromkeys(("load_state", "save_state"), "kvcli.optim.state"),
    "Updater": "kvcli.optim.updater",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kvcli.optim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = sorted(_EXPORTS)
