"""``kvcli viz`` and ``kvcli summary``: draw and summarise MXNet symbol JSON files.

Thin commands: parse options, call :mod:`kvcli.symbol`, print. The symbol pipeline,
graphviz and rich are imported inside the commands so ``kvcli --help`` stays fast.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable, List, Optional, TypeVar

F = TypeVar("F", bound=Callable[..., None])


def _gc_paused(command: F) -> F:
    """Run ``command`` with the cyclic GC paused (a graph is many small acyclic objects: a
    node, its shapes, its table row), and restored after — so a ``kvcli shell`` keeps it;
    SIGTERM and SIGHUP interrupt it as Ctrl-C does."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        from kvcli.symbol.graph import paused_gc
        from kvcli.symbol.layout import signals_as_interrupt

        # SIGTERM/SIGHUP end the command like Ctrl-C: dot stopped, no partial file left
        with paused_gc(), signals_as_interrupt():
            command(*args, **kwargs)

    return run  # type: ignore[return-value]


#: What a note of :mod:`kvcli.symbol.pipeline` advises (its ``remedy``), in the CLI's words.
NOTE_ADVICE = {"input-shapes": "give input shapes with --shape", "full": "--full draws every node exactly",
               "no-params": "--no-params leaves it out"}


def _values(text: Optional[str]) -> Optional[int]:
    """``--values``: a count of values per tensor, or ``all`` (``None``); the library's default
    when not given."""
    from kvcli.errors import SymbolError
    from kvcli.symbol.params import DEFAULT_VALUES

    if text is None:
        return DEFAULT_VALUES
    if text.strip().lower() == "all":
        return None
    try:
        count = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        count = -1
    if count < 0:
        raise SymbolError(f"--values {text!r}: give a number of values per tensor (0 or more), or all")
    return count


def _find_params(params: Optional[Path], no_params: bool, options: Any = None) -> bool:
    """Whether to look for ``PREFIX-NNNN.params`` beside the file (no --params, no --no-params,
    no --session)."""
    from kvcli.errors import SymbolError

    if params is not None and no_params:
        raise SymbolError("--params and --no-params together: give one of them")
    session = getattr(options, "session", None)
    if session is not None and params is not None:
        raise SymbolError("--params and --session together: give one of them (the weights of a file, or of a session)")
    return params is None and not no_params and session is None


def _weights(options: Any, params: Optional[Path]) -> Any:
    """``--params FILE``, or with ``--session NAME`` that session's weights."""
    if getattr(options, "session", None) is None:
        return params
    from kvcli.cli.commands import session_weights

    return session_weights(options)


def _print_note(note: Any) -> None:
    """A note from :mod:`kvcli.symbol.pipeline`, on stderr as it arises, with the CLI's advice."""
    from kvcli.cli import output

    advice = f"; {NOTE_ADVICE[note.remedy]}" if note.remedy else ""
    output.print_note(("warning: " if note.warning else "") + note.text + advice)


@_gc_paused
def run_viz(
    options: Any, file: Path, out: Optional[Path] = None, shape: Optional[List[str]] = None,
    title: Optional[str] = None, rankdir: str = "tb", show_weights: bool = False, full: bool = False,
    collapse: Optional[List[str]] = None, depth: Optional[int] = None, focus_on: Optional[str] = None,
    radius: int = 2, layout_timeout: float = 60.0, open_browser: bool = False, fmt: Optional[str] = None,
    dtype: Optional[List[str]] = None, max_nodes: int = 20000, params: Optional[Path] = None, strict: bool = False,
    allow_unknown_ops: bool = False, partial: bool = False, no_params: bool = False, values: Optional[str] = None,
    yes: bool = False,
) -> None:
    """Draw FILE like mx.viz.plot_network, with shapes on the edges when known.

    Inputs are ovals; ops are boxes coloured by kind (the MXNet palette), labelled with
    their name and op; weights and biases are hidden unless --show-weights. Graphs too big
    for graphviz to lay out in seconds are drawn with repeated blocks folded (said in one
    line; --full draws everything). Needs graphviz's `dot` for .svg/.pdf/.png; without it
    the .dot file is written and the command says how to install graphviz.
    """
    from kvcli.cli import output
    from kvcli.errors import SymbolError
    from kvcli.cli.commands import confirm_replacing
    from kvcli.symbol.pipeline import output_stem, parse_dtypes, visualize

    if open_browser and out is not None:
        raise SymbolError("--open writes a temporary HTML file; leave out -o (or use -o FILE.html without --open)")
    find = _find_params(params, no_params, options)
    weights = _weights(options, params)
    target = out
    if open_browser:
        import tempfile

        target = Path(tempfile.mkdtemp(prefix="kvcli-viz-")) / (output_stem(str(file)) + ".html")
    done = visualize(file, target, shape=shape or (), full=full, collapse=collapse or (), depth=depth,
                     focus=focus_on, radius=radius, show_weights=show_weights, title=title, rankdir=rankdir,
                     format=fmt, dtype=parse_dtypes(dtype) if dtype else None, max_nodes=max_nodes,
                     params=weights, strict=strict, allow_unknown_ops=allow_unknown_ops,
                     partial=partial, find_params=find, values=_values(values),
                     layout_timeout=layout_timeout, on_note=_print_note,
                     progress=lambda what: output.status(what, quiet=options.json),
                     confirm_replace=lambda paths: confirm_replacing("viz", paths, yes, options))
    if open_browser and done.output is not None:
        import webbrowser

        if not webbrowser.open(done.output.resolve().as_uri()):
            raise SymbolError(f"no web browser was found to open {done.output}: open that file yourself, "
                              "or name a browser in BROWSER")
    if done.output is None:  # written to standard output
        return
    if options.json:
        output.print_json(done.to_dict())
    else:
        output.stdout_console().print(f"wrote {done.output} ({done.counts_text()})")


@_gc_paused
def run_summary(options: Any, file: Path, shape: Optional[List[str]] = None, params: Optional[Path] = None,
                strict: bool = False, allow_unknown_ops: bool = False, partial: bool = False,
                no_params: bool = False) -> None:
    """Per-layer table (layer, op, output shape, params, aux, MACs, output bytes, previous layers) and totals.

    Learnable parameters and auxiliary states (BatchNorm moving statistics) are totalled
    separately; each shared weight is counted once. The totals equal the sum of MXNet's
    infer_shape argument shapes (inputs and labels excluded). When an op is unknown or a
    parameter's shape cannot be inferred, the totals say "at least".
    """
    from kvcli.cli import output
    from kvcli.symbol.pipeline import summarize_file
    from kvcli.symbol.summary import print_table

    find = _find_params(params, no_params, options)
    found = summarize_file(file, shape=shape or (), params=_weights(options, params), strict=strict,
                           allow_unknown_ops=allow_unknown_ops, partial=partial, find_params=find,
                           on_note=_print_note)
    if options.json:
        report = found.summary.to_dict()
        if found.params is not None:
            report["params_check"] = found.params.to_dict()
        output.print_json(report)
        return
    print_table(found.summary, output.stdout_console(), title=f"{file.name}: {len(found.graph.nodes):,} nodes",
                more_shapes="give more --shape values")
