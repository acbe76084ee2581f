"""``mx.random``: ``seed``, ``uniform``, ``normal``, ... -- the functions of ``mx.nd.random``
(:mod:`kvcli.mx.ndarray.random`), sharing its streams. kvcli's numbers differ from MXNet's; the
distributions and the seeding rules are MXNet's."""

from kvcli.mx.ndarray.random import exponential, gamma, normal, poisson, randint, randn, seed, shuffle, uniform

__all__ = ["exponential", "gamma", "normal", "poisson", "randint", "randn", "seed", "shuffle", "uniform"]
