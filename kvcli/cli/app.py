"""The ``kvcli`` entry point: the startup fast path (:mod:`kvcli.cli.fast`), else the parser
(typer's click objects, built from the command table by :mod:`kvcli.cli.build`, only the
invoked command), and one error policy (:mod:`kvcli.cli.failures`, the shell's too).

The commands are declared once in :mod:`kvcli.cli.table`, which both parsers read. Importing
this module does not import typer.

Exit codes: 0 success, 1 a kvcli error (one line: what is wrong and the fix), 2 a usage
error (unknown command or option, a bad option value), 130 interrupted (Ctrl-C). With
``--json`` an error is ``{"error": ..., "hint": ...}`` on stderr.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional

from kvcli.cli import output
from kvcli.cli.core import GlobalOptions  # re-exported


def global_options(ctx: Any) -> GlobalOptions:
    """The :class:`GlobalOptions` of the running command (``ctx``: its typer Context)."""
    from kvcli.cli.build import global_options as find

    return find(ctx)


def build_app(for_shell: bool = False) -> Any:
    """The typer app with every command (see :func:`kvcli.cli.build.build_app`)."""
    from kvcli.cli.build import build_app as build

    return build(for_shell)


def __getattr__(name: str) -> Any:
    if name == "app":
        return build_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def wants_json(argv: list[str]) -> bool:
    """Whether errors are to be JSON: ``--json`` is among the options (before a ``--``)."""
    for token in argv:
        if token == "--":
            break
        if token == "--json":
            return True
    return False


def run_click(argv: list[str], *, where: str = "cli", obj: Any = None, as_json: bool = False) -> int:
    """Parse and run ``argv`` with the click command of the table (``where``: ``cli`` or
    ``shell``, whose lines have the shell's commands); returns the exit code. What fails is
    raised (:func:`run_line` reports it)."""
    from typer import Abort, Exit

    from kvcli.cli.build import root_command

    command = root_command(for_shell=where == "shell")
    try:
        # typer's main() returns the code of an Exit (our commands return None), and turns
        # a Ctrl-C into Exit(130): give that back as the KeyboardInterrupt it was
        if obj is None:  # what the eager -V must know before the line is parsed
            obj = GlobalOptions(json=as_json)
        code = command.main(argv, prog_name="kvcli", standalone_mode=False, obj=obj)
    except Exit as done:
        code = done.exit_code
    except Abort:  # click turns a Ctrl-C in a prompt into Abort
        raise KeyboardInterrupt from None
    if code == output.EXIT_INTERRUPTED:
        raise KeyboardInterrupt
    return code if isinstance(code, int) else 0


def run_line(argv: list[str], *, where: str = "cli", obj: Any = None, as_json: bool = False) -> int:
    """Run one command line (read by the startup fast path, else by :func:`run_click`) and
    return its exit code; what fails is printed for ``where`` and given its exit code in one
    place (:func:`kvcli.cli.failures.report`). A one-shot command's bug is raised again, with
    its traceback. ``obj``: the shell's :class:`GlobalOptions` (its open session)."""
    try:
        from kvcli.cli import fast

        if fast.run(argv, prior=obj):
            return output.EXIT_OK
        return run_click(argv, where=where, obj=obj, as_json=as_json)
    except BaseException as error:
        from kvcli.cli import failures

        code = failures.report(error, where, as_json=as_json, argv=argv)
        if code is None:
            raise
        return code


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point of the ``kvcli`` console script."""
    # The CLI's array work is elementwise (no BLAS); starting OpenBLAS's thread pool would
    # cost more than the rest of a one-shot command. A value set by the user wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    output.quiet_ray_off_terminal()
    output.watch_stdout_pipe()
    argv_given = argv
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = wants_json(argv)
    request = os.environ.get("_KVCLI_COMPLETE")
    if request is not None:  # a shell's Tab (typer's scripts): the words as typed
        from kvcli.cli import completion

        if request in completion.SHELL_REQUESTS:
            raise SystemExit(completion.answer(request, lambda: run_line(argv), os.environ))
    code = run_line(argv, as_json=as_json)
    try:
        sys.stdout.flush()
    except (BrokenPipeError, output.StdoutClosed):  # the reader left after the last write
        output.silence_stdout()
        code = 0 if code == output.EXIT_OK else code
    if argv_given is None and _joined_ray_cluster():
        # A process that joined the home's cluster has nothing left to tell it: its session
        # is committed and its Ray calls answered. Ray's exit handlers (disconnect, worker
        # teardown) would cost half a second of a one-shot command; the cluster sees the
        # driver leave and ends its job either way (kept servers are detached).
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)


def _joined_ray_cluster() -> bool:
    dist_group = sys.modules.get("kvcli.store.ray.group")
    return dist_group is not None and bool(dist_group.joined_cluster())
