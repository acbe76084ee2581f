"""``mx.random``: ``seed``, ``uniform``, ``normal``, ... -- the functions of ``mx.nd.random``
(:mod:`kvcli.mx.ndarray.random`), sharing its streams. kvcli's numbers differ from MXNet's; the
distributions and the seeding rules are MXNet's."""

from kvcli.mx.ndarray.random import exponential, gamma, normal, poisson, randint, randn, seed, shuffle, uniform
from kvcli.mx.scope import guard as _scope_guard

__all__ = ["exponential", "gamma", "normal", "poisson", "randint", "randn", "seed", "shuffle", "uniform"]


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
