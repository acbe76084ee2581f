"""What Tab offers for a value, in the one-shot CLI (typer's bash/zsh/fish completion) and
in ``kvcli shell``: the table's ``complete=`` names say which kind each argument takes.

Kinds: ``session`` (session names), ``key`` (the session's keys, comma lists too),
``store_type``, ``updater`` (spec names), ``file`` and ``dir`` (paths; in the shell also
after ``@`` in a value), ``value`` (``@file.npy`` and the value functions), ``command``.
Completion never locks a session and never fails: a problem offers nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from kvcli import config

#: The updaters that are not optimizers (the optimizers come from their registry).
SIMPLE_UPDATERS = ("assign", "sum", "scale-add:", "python:")
VALUE_STARTS = ("ones(", "zeros(", "full(", "arange(", "@")


def session_names(home: Optional[Any] = None) -> list[str]:
    """The sessions in ``home`` (no lock, no error)."""
    from kvcli.session.names import session_folder

    folder = session_folder(home)
    try:
        return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def session_keys(name: Optional[str], home: Optional[Any] = None) -> list[str]:
    """The committed keys of session ``name`` (read without the lock; [] on any problem)."""
    from kvcli.errors import KVCliError
    from kvcli.session import Session
    from kvcli.session.names import home_folder

    try:
        return [str(k) for k in Session(name, home_folder(home)).peek_keys()]
    except KVCliError:
        return []


def _paths(current: str, directories_only: bool = False) -> list[str]:
    folder, _, start = current.rpartition("/")
    base = Path(folder or ".").expanduser()
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    found = []
    for entry in entries:
        if not entry.name.startswith(start) or (entry.name.startswith(".") and not start.startswith(".")):
            continue
        if directories_only and not entry.is_dir():
            continue
        text = (folder + "/" if folder else "") + entry.name + ("/" if entry.is_dir() else "")
        found.append(text)
    return found


def _keys(current: str, keys: list[str]) -> list[str]:
    typed = current.split(",")
    tail, before = typed[-1], set(typed[:-1])
    return [k for k in keys if k.startswith(tail) and k not in before]


def values(kind: Optional[str], current: str, session: Any = None, *, shell: bool = False,
           home: Optional[Any] = None, session_name: Optional[str] = None) -> list[str]:
    """Candidates of kind ``kind`` for the word ``current``. In the shell (``shell``) a key
    list and ``@file`` complete their last part; on the command line whole words."""
    if kind == "session":
        return [n for n in session_names(session.home if session is not None else home) if n.startswith(current)]
    if kind == "key":
        keys = [str(k) for k in session.peek_keys()] if session is not None else session_keys(session_name, home)
        found = _keys(current, keys)
        if shell:
            return found
        prefix = current.rsplit(",", 1)[0] + "," if "," in current else ""
        return [prefix + k for k in found]
    if kind == "store_type":
        from kvcli.cli.table import STORE_TYPES

        return [t for t in STORE_TYPES if t.startswith(current)]
    if kind == "updater":
        found = updater_specs(current)
        if shell and "," in current:  # the shell replaces the last argument only (as for key lists)
            cut = len(current.rsplit(",", 1)[0]) + 1
            found = [f[cut:] for f in found]
        return found
    if kind in ("file", "dir"):
        return _paths(current, directories_only=kind == "dir")
    if kind == "value":
        if current.startswith("@"):
            paths = [p for p in _paths(current[1:]) if p.endswith((".npy", "/"))]
            return paths if shell else ["@" + p for p in paths]
        return [v for v in VALUE_STARTS if v.startswith(current)]
    if kind == "command":
        from kvcli.cli.table import commands

        return [c.name for c in commands() if c.name.startswith(current) and (c.in_shell or not shell)]
    return []


def updater_specs(current: str) -> list[str]:
    """Updater specs that continue ``current``: the simple updaters, every optimizer
    (``nag:``, ``rmsprop:``), then its arguments (``adam:beta1=``). A lone candidate that
    ends in ``:`` or ``=`` is never offered alone, so a shell adds no space after it: a lone
    optimizer name opens onto its arguments, and a lone argument comes with its default too
    (``adam:lr=`` and ``adam:lr=0.001``)."""
    from kvcli.optim.spec import builtin_optimizers, params_of, show_value

    optimizers = builtin_optimizers()
    if ":" not in current:
        words = [*SIMPLE_UPDATERS, *(f"{name}:" for name in optimizers)]
        found = [w for w in words if w.startswith(current)]
        if len(found) == 1 and found[0].endswith(":"):
            return sorted({found[0], *updater_specs(found[0])})
        return found
    name, _, rest = current.partition(":")
    if name == "scale-add":
        return [] if rest else [current + "1"]
    if name == "python":  # python:FILE.py:NAME, the file part
        return [] if ":" in rest else [f"python:{p}" for p in _paths(rest) if p.endswith((".py", "/"))]
    if name not in optimizers:
        return []
    done, _, last = rest.rpartition(",")
    if "=" in last:
        return []  # a value is being typed
    used = {part.split("=", 1)[0] for part in done.split(",") if part}
    prefix = f"{name}:{done + ',' if done else ''}"
    params = [p for p in params_of(optimizers[name]) if p.spec.startswith(last) and p.spec not in used]
    found = [f"{prefix}{p.spec}=" for p in params]
    if len(params) == 1:
        found.append(found[0] + show_value(params[0].default))
    return found


def typer_completer(kind: str) -> Callable[..., list[str]]:
    """A typer ``autocompletion=`` function for kind ``kind`` (reads --session/--home typed
    so far, else KVCLI_SESSION/KVCLI_HOME)."""
    import typer

    def complete(ctx: typer.Context, incomplete: str) -> list[str]:
        params: dict[str, Any] = {}
        node: Any = ctx
        while node is not None:  # the command's copies of the globals, then the root's
            for name in ("session", "home", "g_session", "g_home"):
                if node.params.get(name) is not None:
                    params.setdefault(name.removeprefix("g_"), node.params[name])
            node = node.parent
        return values(kind, incomplete, home=params.get("home") or config.get(config.HOME),
                      session_name=params.get("session") or config.get(config.SESSION))

    # typer reads these annotations to pass ctx and the word (this module's are strings)
    complete.__annotations__ = {"ctx": typer.Context, "incomplete": str, "return": list}
    return complete
