"""``graphviz.Digraph`` whose ``render``, ``view`` and ``pipe`` keep graphviz's own warnings
off the terminal (``quiet=True`` unless the caller says otherwise).

What ``mx.viz.plot_network`` returns. Its DOT source is MXNet's, with MXNet's fixed 1.3 x
0.8034 in boxes, and ``dot`` warns that a long label does not fit ("size too small for label")
on every render: the picture is the one MXNet draws, the warnings are noise a script cannot
act on. A failing ``dot`` still raises, with its message. Imported only by ``plot_network``
(graphviz is a heavy import).
"""

from __future__ import annotations

from typing import Any

import graphviz

__all__ = ["Digraph"]


class Digraph(graphviz.Digraph):  # type: ignore[misc]  # graphviz has no type hints
    """A :class:`graphviz.Digraph` rendering with ``quiet=True`` by default. It keeps
    graphviz's class name, so code that prints ``type(g).__name__`` reads what it reads
    under MXNet."""

    def render(self, *args: Any, **kwargs: Any) -> Any:  # quiet is render's 9th parameter
        if len(args) < 9:
            kwargs.setdefault("quiet", True)
        return super().render(*args, **kwargs)

    def view(self, *args: Any, **kwargs: Any) -> Any:  # quiet is view's 4th parameter
        if len(args) < 4:
            kwargs.setdefault("quiet", True)
        return super().view(*args, **kwargs)

    def pipe(self, *args: Any, **kwargs: Any) -> Any:  # quiet is pipe's 5th parameter
        if len(args) < 5:
            kwargs.setdefault("quiet", True)
        return super().pipe(*args, **kwargs)
