"""``mx.random``: ``seed``, ``uniform``, ``normal``, ... -- the functions of ``mx.nd.random``
(:mod:`kvcli.nd_random`), sharing its streams. kvcli's numbers differ from MXNet's; the
distributions and the seeding rules are MXNet's."""

from kvcli.nd_random import exponential, gamma, normal, poisson, randint, randn, seed, shuffle, uniform

__all__ = ["exponential", "gamma", "normal", "poisson", "randint", "randn", "seed", "shuffle", "uniform"]
