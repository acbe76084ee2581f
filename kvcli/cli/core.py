"""The dispatch core of the command line: the global options and the one call from a parsed
command line to its implementation.

A leaf: it imports no other module of :mod:`kvcli.cli` but :mod:`kvcli.cli.output` (itself a
leaf), so the parser (:mod:`kvcli.cli.build`), the shell and the command implementations all
import it without importing each other.
Nothing here imports typer, rich, prompt_toolkit or numpy.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Optional, Sequence

from kvcli import config
from kvcli.cli import output
from kvcli.errors import SessionError

if TYPE_CHECKING:  # pragma: no cover
    from kvcli.cli.table import Command


class GlobalOptions(NamedTuple):
    """Options given before the subcommand, shared by every command (a NamedTuple: no
    dataclass to create on a one-shot command's start-up)."""

    session: Optional[str] = None
    home: Optional[Path] = None
    json: bool = False
    store_type: Optional[str] = None
    #: read-only: each command builds its own from the flags
    store_options: Mapping[str, Any] = MappingProxyType({})
    #: The session kept open by ``kvcli shell`` (its commands run against it).
    live: Any = None

    def home_path(self) -> Path:
        """The home every command works in: ``--home``, else the shell's (``kvcli --home B
        shell`` keeps B for every line), else ``KVCLI_HOME`` or the platform's folder."""
        if not self.home and self.live is not None:
            return Path(self.live.home)
        from kvcli.session.names import home_folder

        return home_folder(self.home)

    def is_live(self) -> bool:
        """Whether the command names the shell's open session (no other name, no other home)."""
        live = self.live
        return live is not None and self.session in (None, live.name) and self.home_path() == Path(live.home)


def dispatch(command: "Command", options: GlobalOptions, values: dict[str, Any]) -> None:
    """Run table ``command`` with its parsed ``values`` (one per table dest): the one place
    where the parser meets the implementations."""
    import importlib

    if command.needs_session:
        require_session(options)
    module, _, function = command.run.partition(":")
    try:
        getattr(importlib.import_module(module), function)(options, **values)
    except BrokenPipeError:
        raise output.StdoutClosed from None


def require_session(options: GlobalOptions, to_delete: bool = False) -> None:
    """A read-only command on a session that does not exist: say so and list the sessions
    (``to_delete``: without suggesting to create it)."""
    from kvcli.session import DEFAULT_SESSION, check_session_name, list_sessions, session_exists
    from kvcli.session.names import session_folder

    if options.is_live():
        return  # the shell's own session (it may be new: its first init creates it)

    name = check_session_name(options.session or config.get(config.SESSION) or DEFAULT_SESSION)
    home = options.home_path()
    if session_exists(session_folder(home, name)):
        return
    names = [row["session"] for row in list_sessions(home)]
    listed = ", ".join(names[:12]) + (" ..." if len(names) > 12 else "") if names else "none yet"
    found = f"session {name!r} does not exist in {home} (sessions: {listed})"
    if to_delete:
        raise SessionError(f"{found}: nothing was deleted")
    raise SessionError(found, problem=found, remedy="missing-session", session=name)


def make_global_options(prior: Optional[GlobalOptions], values: dict[str, Any]) -> GlobalOptions:
    """GlobalOptions from the parsed global flags (one value per table dest, None when not
    given); keeps the shell's open session (``prior``)."""
    store_options = {name: values.get(dest) for name, dest in output.STORE_OPTION_DESTS.items()}
    return GlobalOptions(
        session=values.get("session"),
        home=values.get("home"),
        json=bool(values.get("json")) or bool(prior and prior.json),
        store_type=values.get("store_type"),
        store_options={k: v for k, v in store_options.items() if v is not None},
        live=prior.live if prior else None,
    )


def typed_scope(argv: Sequence[str]) -> list[str]:
    """The ``--session``/``-s`` and ``--home`` options of a command line, as typed (before
    a ``--``): what advice must repeat to act on the same session and home."""
    from kvcli.cli.table import GLOBAL_OPTIONS

    flags = {flag for opt in GLOBAL_OPTIONS if opt.dest in ("session", "home") for flag in opt.flags}
    found: list[str] = []
    words = list(argv)
    for index, word in enumerate(words):
        if word == "--":
            break
        name, equals, _ = word.partition("=")
        if equals and name in flags and name.startswith("--"):
            found.append(word)
        elif word in flags and index + 1 < len(words):
            found += [word, words[index + 1]]
    return found
