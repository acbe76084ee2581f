"""Which random draws repeat which after ``mx.random.seed``, asked the same way of real MXNet
1.9.1 and of ``kvcli.mx``: the numbers differ (kvcli's generator is numpy's), the answers must
not. ``tests/data/make_mxnet_random_rules.py`` records MXNet's answers;
``tests/nd/test_random.py`` compares kvcli's. kvcli's code, nothing of MXNet's copied.
"""

from __future__ import annotations

from typing import Any, Callable


def _draw(mx: Any, what: str, ctx: Any) -> list[float]:
    nd = mx.nd
    if what == "uniform":
        return nd.random.uniform(shape=(6,), ctx=ctx).asnumpy().tolist()
    if what == "normal":
        return nd.random.normal(shape=(6,), ctx=ctx).asnumpy().tolist()
    if what == "randint":
        return nd.random.randint(0, 1000, shape=(6,), ctx=ctx).asnumpy().tolist()
    return nd.random.shuffle(nd.arange(40, ctx=ctx)).asnumpy().tolist()


def relations(mx: Any) -> dict[str, bool]:
    """Named yes/no questions about the streams (each starts from its own seeds)."""
    cpu = mx.cpu
    out: dict[str, bool] = {}

    def ask(name: str, first: Callable[[], list[float]], second: Callable[[], list[float]]) -> None:
        out[name] = first() == second()

    for what in ("uniform", "normal", "randint", "shuffle"):
        def seeded(seed: int, ctx: Any, seed_ctx: Any = None, what: str = what) -> list[float]:
            mx.random.seed(seed) if seed_ctx is None else mx.random.seed(seed, ctx=seed_ctx)
            return _draw(mx, what, ctx)

        ask(f"{what}: same seed, same draw", lambda: seeded(3, cpu(0)), lambda: seeded(3, cpu(0)))
        ask(f"{what}: other seed, same draw", lambda: seeded(3, cpu(0)), lambda: seeded(4, cpu(0)))
        ask(f"{what}: cpu(1) after seed(s) is cpu(0)", lambda: seeded(3, cpu(0)), lambda: seeded(3, cpu(1)))
        ask(f"{what}: cpu_pinned after seed(s) is cpu(0)", lambda: seeded(3, cpu(0)),
            lambda: seeded(3, mx.cpu_pinned(0)))
        ask(f"{what}: seed(s, cpu(2)) then cpu(0) is seed(s)", lambda: seeded(3, cpu(0)),
            lambda: seeded(3, cpu(0), cpu(2)))
        ask(f"{what}: seed(s, cpu(0)) on cpu(3) is seed(s, cpu(3))", lambda: seeded(5, cpu(3), cpu(0)),
            lambda: seeded(5, cpu(3), cpu(3)))

        def second_draw(ctx_a: Any, ctx_b: Any, what: str = what) -> list[float]:
            mx.random.seed(7)
            _draw(mx, what, ctx_a)
            return _draw(mx, what, ctx_b)

        ask(f"{what}: cpu(1) continues cpu(0)'s stream", lambda: second_draw(cpu(0), cpu(0)),
            lambda: second_draw(cpu(0), cpu(1)))

        def current(block: Any, what: str = what) -> list[float]:
            with block:
                mx.random.seed(9)
                return _draw(mx, what, None)

        ask(f"{what}: with cpu(1) block is cpu(0)", lambda: current(cpu(0)), lambda: current(cpu(1)))

    def after(other: str, what: str) -> list[float]:
        mx.random.seed(11)
        if other:
            _draw(mx, other, cpu(0))
        return _draw(mx, what, cpu(0))

    for what, other in (("uniform", "normal"), ("normal", "randint"), ("uniform", "shuffle"), ("shuffle", "uniform")):
        ask(f"{what} after a {other} draw is its first draw", lambda what=what: after("", what),
            lambda what=what, other=other: after(other, what))
    return out
