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


# ---------------------------------------------------------------------- bash's words
#: Characters bash splits a word at for completion (``COMP_WORDBREAKS``) that kvcli's words
#: hold: ``adam:lr=0.1``, ``--shape data=1,3``, ``--dtype=int32``.
WORD_BREAKS = ":="
#: The variable typer's completion scripts set (``_PROG_COMPLETE``) and bash's request.
COMPLETE_VAR = "_KVCLI_COMPLETE"
BASH_REQUEST = "complete_bash"


class BashWords:
    """What bash sends for completion, as kvcli's words.

    bash splits the line at ``COMP_WORDBREAKS`` (``:`` and ``=`` among them), so
    ``set-updater adam:l`` reaches the completion script as the words ``adam``, ``:``,
    ``l``, and bash replaces only the last of them (``l``) with each answer. typer's script
    hands the words on as they are (``COMP_WORDS``, one a line, and ``COMP_CWORD``), so kvcli
    would complete the word ``l`` and bash list files instead. Here the pieces are joined
    back into the words as typed (a word made only of ``:``/``=`` joins its neighbours:
    such a word has no meaning for kvcli on its own) and each answer, computed for the
    whole word, is cut to the part that replaces bash's last piece."""

    def __init__(self, comp_words: str, comp_cword: str) -> None:
        raw = comp_words.split("\n") if "\n" in comp_words else comp_words.split(" ")
        cword = int(comp_cword)
        groups: list[list[str]] = []
        index_of = {}
        joining = False
        for position, word in enumerate(raw):
            is_break = word != "" and all(c in WORD_BREAKS for c in word)
            if groups and position > 1 and (is_break or joining):
                groups[-1].append(word)
            else:
                groups.append([word])
            joining = is_break
            index_of[position] = len(groups) - 1
        if cword >= len(raw):  # the cursor after the last word: a new, empty one
            groups.append([""])
            index_of[cword] = len(groups) - 1
        #: the words as typed (quotes kept: typer unquotes them) and the one being completed
        self.words = ["".join(group) for group in groups]
        self.cword = index_of[cword]
        #: the text readline replaces with each answer: after the last break, so nothing
        #: when the word ends with one (bash still names the break as the current word)
        piece = raw[cword] if cword < len(raw) else ""
        self.piece = "" if piece and all(c in WORD_BREAKS for c in piece) else piece

    def environment(self) -> dict[str, str]:
        """``COMP_WORDS``/``COMP_CWORD`` for typer, with the words joined back."""
        return {"COMP_WORDS": "\n".join(self.words), "COMP_CWORD": str(self.cword)}

    def answers(self, candidates: list[str]) -> list[str]:
        """Each candidate (a whole word, or the value after ``--option=``) cut to what
        replaces bash's last piece of the word."""
        word, piece = _unquoted(self.words[self.cword]), _unquoted(self.piece)
        name, equals, _value = word.partition("=")
        prefix = name + equals if equals and word.startswith("-") else ""  # click completes the value
        start = len(word) - len(piece)
        found = []
        for candidate in candidates:
            whole = prefix + candidate
            if whole.startswith(word[:start]):
                found.append(whole[start:])
        return found


def _unquoted(word: str) -> str:
    import shlex

    try:
        parts = shlex.split(word)
    except ValueError:  # an open quote: the word so far
        parts = shlex.split(word + ("'" if word.count("'") % 2 else '"'))
    return "".join(parts)


def _option_prefix(line: str) -> str:
    """``--type=`` when the word being completed (the last of ``line``) is ``--type=d``:
    click completes the value alone, but zsh and fish replace the whole word."""
    if not line or line.endswith(" "):
        return ""
    word = _unquoted(line.split(" ")[-1])
    name, equals, _ = word.partition("=")
    return name + equals if equals and word.startswith("-") else ""


def _prefixed(request: str, text: str, prefix: str) -> str:
    """typer's answer for zsh (``_arguments '*: :(("v" "w":"help"))'``) or fish (``v\thelp``
    lines) with ``prefix`` before each value."""
    if not prefix:
        return text
    if request == "complete_fish":
        return "\n".join(prefix + line if line else line for line in text.split("\n"))
    import re

    escaped = prefix.replace(":", r"\\:")  # as typer escapes a value for zsh's _arguments
    return re.sub(r'(^|\(\(|\n)"', lambda m: f'{m.group(1)}"{escaped}', text) if text.startswith("_arguments") else text


#: The completion requests kvcli answers itself (around typer's answer).
SHELL_REQUESTS = ("complete_bash", "complete_zsh", "complete_fish")


def answer(request: str, run: Callable[[], Any], environ: Any) -> int:
    """Answer a shell's completion request (``_KVCLI_COMPLETE``): ``run()`` lets typer
    complete, printing its answer; for bash the words are first joined back
    (:class:`BashWords`) and the answers cut for bash; for zsh and fish a value after
    ``--option=`` gets the option in front, as those shells replace the whole word.
    Returns the exit code."""
    import io
    import sys

    words = BashWords(environ.get("COMP_WORDS", ""), environ.get("COMP_CWORD", "0")) \
        if request == "complete_bash" else None
    if words is not None:
        environ.update(words.environment())
    captured, stdout = io.StringIO(), sys.stdout
    sys.stdout = captured
    code = 0
    try:
        run()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 0
    finally:
        sys.stdout = stdout
    text = captured.getvalue()
    if words is not None:
        answers = words.answers([line for line in text.split("\n") if line])
        text = "".join(answer + "\n" for answer in answers)
    else:
        text = _prefixed(request, text, _option_prefix(environ.get("_TYPER_COMPLETE_ARGS", "")))
    sys.stdout.write(text)
    return code
