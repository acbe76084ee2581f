"""What each session command does, without the command-line layer.

The parser's commands (built by :mod:`kvcli.cli.build`), one-shot or in the shell, call
these functions, so each command is written once. Nothing here imports typer, rich or prompt_toolkit at module level.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from kvcli.cli import output
from kvcli.cli.core import GlobalOptions, dispatch, require_session  # noqa: F401 - dispatch re-exported
from kvcli.errors import SessionError, UsageError


def confirm(question: str, yes: bool, options: GlobalOptions) -> None:
    """Ask ``question`` on the terminal (``--yes`` skips it); refuse without one.

    The question goes to stderr and the answer comes from stdin: both must be the terminal,
    or a question nobody sees would wait for an answer (``kvcli reset 2>log``) or an answer
    would come from a pipe."""
    import sys

    if yes:
        return
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise SessionError(f"{question} nothing was changed (no terminal to ask on: stdin and stderr are not both "
                           "one): pass --yes to confirm")
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if answer.strip().lower() not in ("y", "yes"):
        raise SessionError("nothing was changed (not confirmed)")


def confirm_replacing(command: str, paths: Sequence[Path], yes: bool, options: GlobalOptions) -> None:
    """Ask (:func:`confirm`) before ``command`` replaces those of ``paths`` that exist."""
    import os

    existing = [str(path) for path in paths if os.path.lexists(path)]
    if existing:
        one = len(existing) == 1
        confirm(f"{' and '.join(existing)} {'exists' if one else 'exist'}: {command} replaces {'it' if one else 'them'}:",
                yes, options)


@contextmanager
def open_session(options: GlobalOptions, progress: Optional["output.status"] = None) -> Iterator[Any]:
    """The session a command works on: the shell's open one, or a new one for this command.
    When (and only when) the command starts the session's store, that is said: a note for a
    private Ray runtime, and ``progress``'s spinner tells what is starting."""
    from kvcli.session import Session, check_store_request

    def starting(kind: str) -> None:
        _announce_start(kind, options, progress)

    live = options.live
    if options.is_live():
        saved = (live.requested_type, live.requested_options, live.on_store_start)
        if options.store_type:
            live.requested_type, live.requested_options = check_store_request(options.store_type, options.store_options)
        live.on_store_start = starting
        try:
            yield live
        finally:
            live.requested_type, live.requested_options, live.on_store_start = saved
        return
    session = Session(options.session, options.home_path(), store_type=options.store_type,
                      store_options=options.store_options)
    session.on_store_start = starting
    try:
        yield session
    finally:
        session.close()


def _key_text(keys: Sequence[Any]) -> str:
    """``key 3`` / ``keys 5, 7, 9`` for a status line."""
    shown = ", ".join(str(k) for k in keys[:4]) + (" ..." if len(keys) > 4 else "")
    return f"{'key' if len(keys) == 1 else 'keys'} {shown}"


#: How long starting (and stopping) a private Ray runtime takes, as measured on a 2-core
#: machine (README, "One-shot commands"): 4.8 s when quiet, 16-18 s at load average 10-14.
RAY_START_TIME = "5 to 30 s, the longer on a busy machine"
RAY_START_TEMPLATE = ("no Ray cluster is running for this home, so this command starts a Ray runtime of its own and "
                      f"stops it ({RAY_START_TIME}); {{cluster_up}} keeps one running for the commands to join "
                      "(about 1 s each, a few on a busy machine)")
RAY_START_NOTE = RAY_START_TEMPLATE.format(cluster_up="`kvcli cluster up`")


def home_scope(options: GlobalOptions) -> list[str]:
    """``--home DIR`` when the user typed it: advice about the home's cluster repeats it."""
    return ["--home", str(options.home)] if options.home else []


#: What a spinner adds while a store starts (device workers and Ray take seconds).
STARTING = {
    "store": "; starting the store",
    "cluster": "; joining the home's Ray cluster",
    "private-ray": f"; starting a Ray runtime for this command ({RAY_START_TIME})",
}


def _announce_start(kind: str, options: GlobalOptions, progress: Optional["output.status"]) -> None:
    """The session is starting its store (``kind``: see ``Session.on_store_start``)."""
    if kind == "private-ray":  # said on every terminal or log, not only in a passing spinner
        output.note(RAY_START_TEMPLATE.format(cluster_up=output.command_text("cluster up", "cli", home_scope(options))))
    if kind != "store":  # kvcli says what starts: Ray's own notice about its token is noise
        output.quiet_ray_token_notice()
    if progress is not None:
        progress.update(progress.message + STARTING[kind])


def _check_dtype_option(dtype: Optional[str], command: str) -> None:
    """``--dtype``: a misspelt dtype is a usage error (exit 2), found before any work."""
    if dtype is None:
        return
    from difflib import get_close_matches

    from kvcli.arrays.kinds import DTYPES

    if dtype not in DTYPES:
        close = get_close_matches(dtype, DTYPES, n=1)
        guess = f"did you mean {close[0]}? " if close else ""
        raise UsageError(f"--dtype {dtype!r} is not a dtype: {guess}use one of {', '.join(DTYPES)}", command=command)


def _keys(text: str) -> list[Any]:
    from kvcli.cli.keys import parse_keys

    return parse_keys(text)


# ---------------------------------------------------------------------- init / push / pull
def run_init(options: GlobalOptions, keys: str, values: Sequence[str], dtype: Optional[str] = None,
             yes: bool = False) -> None:
    from kvcli.cli.stdin import parse_cli_value

    _check_dtype_option(dtype, "init")
    key_list = _keys(keys)
    if len(values) not in (1, len(key_list)):
        raise SessionError(
            f"init got {len(key_list)} keys and {len(values)} values: give one value for all keys or one per key"
        )
    with output.status(f"building the value of {_key_text(key_list)}", quiet=options.json) as progress:
        parsed = [parse_cli_value(text, dtype=dtype) for text in values]
        arrays = parsed * len(key_list) if len(parsed) == 1 else parsed
        size = output.human_bytes(sum(int(getattr(a, "nbytes", 0)) for a in arrays))
    progress = output.status(f"initialising {_key_text(key_list)} ({size})", quiet=options.json)
    with open_session(options, progress) as session:

        def init(replace: bool) -> Any:
            with progress:  # not around the question: a spinner would draw over it
                return session.init(key_list, arrays, replace=replace)

        results = _asked(init, "replace-keys", yes, options)
        name = session.name
    if options.json:
        output.print_json(
            {
                "session": name,
                "keys": [
                    {"key": e.key, "shape": list(e.shape), "dtype": e.dtype, "version": e.version, "reinitialised": again}
                    for e, again in results
                ],
            }
        )
        return
    for entry, again in results:
        verb = "re-initialised" if again else "initialised"
        output.note(f"{verb} key {entry.key}: shape {tuple(entry.shape)} {entry.dtype}")


def run_push(
    options: GlobalOptions, keys: str, values: Sequence[str], devices: Optional[int] = None, dtype: Optional[str] = None
) -> None:
    from kvcli.cli.stdin import parse_cli_value

    _check_dtype_option(dtype, "push")
    key_list = _keys(keys)
    if devices is not None and len(values) > 1 and devices != len(values):
        raise SessionError(f"--devices {devices} but {len(values)} values were given: give one value, or one per device")
    count = devices or len(values)
    cache: dict[tuple[str, str], Any] = {}

    def build(key: Any, entry: Any) -> Any:
        arrays = []
        for text in values:
            slot = (text, entry.dtype if text != "-" else "")
            if slot not in cache:
                cache[slot] = parse_cli_value(text, dtype=dtype, default_dtype=entry.dtype)
            arrays.append(cache[slot])
        if len(arrays) == 1:
            return arrays[0] if count == 1 else [arrays[0]] * count
        return arrays

    with output.status(f"pushing to {_key_text(key_list)}", quiet=options.json) as progress, \
            open_session(options, progress) as session:
        entries = session.push(key_list, build)
        name = session.name
        updater = session.updater
    if options.json:
        output.print_json(
            {"session": name, "devices": count, "updater": updater,
             "keys": [{"key": e.key, "version": e.version} for e in entries]}
        )
        return
    source = f" from {count} devices" if count > 1 else ""
    for entry in entries:
        output.note(f"pushed key {entry.key}{source} (updater {updater}, version {entry.version})")


def run_pull(options: GlobalOptions, keys: str, devices: int = 1, out: Optional[Path] = None,
             yes: bool = False) -> None:
    key_list = _keys(keys)
    if out is not None and len(key_list) != 1:
        raise SessionError("-o writes one key: pull the keys one at a time")
    target = _npy_output(out) if out is not None and str(out) != "-" else None  # refused before anything is read
    with output.status(f"pulling {_key_text(key_list)}", quiet=options.json) as progress:
        with open_session(options, progress) as session:
            pulled = session.pull(key_list, devices)
    # printed after the spinner is gone, so stdout never mixes with its redraws (and a
    # question about a file -o replaces is asked on a clean line)
    if target is not None:
        confirm_replacing("pull", [target], yes, options)
    _print_pulled(options, key_list, pulled, devices, out, target)


def _print_pulled(options: GlobalOptions, key_list: list[Any], pulled: list[Any], devices: int, out: Optional[Path],
                  target: Optional[Path]) -> None:
    if out is not None:
        array = pulled[0][0]
        if target is None:  # -o -
            _write_npy_stdout(array)
            return
        _write_npy_output(target, array)
        output.note(f"wrote key {key_list[0]} ({array.dtype} {array.shape}) to {out}")
        return
    if options.json:
        extra = {"devices": devices} if devices > 1 else {}
        payloads = [output.array_payload(k, copies[-1], **extra) for k, copies in zip(key_list, pulled)]
        output.print_json(payloads[0] if len(payloads) == 1 else payloads)
        return
    for key, copies in zip(key_list, pulled):
        if len(key_list) > 1:
            output.print_text(f"key {key}:")
        # every device holds the same copy; print the last, as the seed prints b_list[1]
        output.print_text(output.format_array(copies[-1]))
    if devices > 1:
        output.note(f"(the same value on each of {devices} devices)")


def _write_npy_stdout(array: Any) -> None:
    """``-o -``: the .npy bytes on stdout (refused on a terminal, which would show garbage)."""
    import sys

    import numpy as np

    if sys.stdout.isatty():
        raise SessionError("-o - writes binary .npy data: redirect stdout to a file or a pipe")
    sys.stdout.flush()
    # through a plain write(): numpy's fast path for real files (tofile) reports a closed
    # pipe as a bare OSError ("requested and 0 written") instead of BrokenPipeError
    np.lib.format.write_array(_Writer(sys.stdout.buffer), np.asanyarray(array), allow_pickle=False)
    sys.stdout.buffer.flush()


class _Writer:
    """A file-like ``write`` only: numpy writes to it in chunks (no copy of the whole array)."""

    def __init__(self, stream: Any) -> None:
        self.write = stream.write


def _npy_output(out: Path) -> Path:
    """The file ``-o`` names, or an error when it is not a ``.npy`` name."""
    path = Path(out).expanduser()
    if path.suffix != ".npy":
        raise SessionError(f"-o {path}: the file name must end in .npy")
    return path


def _write_npy_output(path: Path, array: Any) -> None:
    """Write ``array`` to ``path`` (checked by :func:`_npy_output`)."""
    import numpy as np

    from kvcli.osutil import PLAIN_FILE, atomic_write

    try:  # whole or not at all, even on Ctrl-C; a file the user named gets a plain file's mode
        atomic_write(path, lambda handle: np.save(handle, array, allow_pickle=False), mode=PLAIN_FILE)
    except OSError as error:
        raise SessionError(f"cannot write {path}: {error.strerror}") from None


# ---------------------------------------------------------------------- updater / keys / show
def run_set_updater(options: GlobalOptions, spec: str, yes: bool = False) -> None:
    from kvcli.errors import UpdaterError

    try:
        _set_setting(options, "updater", lambda session, drop: session.set_updater(spec, drop_state=drop), "updater",
                     yes)
    except UpdaterError as error:
        guess = _spec_guess(spec)
        if guess is None:
            raise
        raise UpdaterError(str(error), problem=str(error), remedy="did-you-mean", words=f"set-updater {guess}") from None


def _spec_guess(spec: str) -> Optional[str]:
    """``adam:lr=0.1`` for ``adm:lr=0.1``: the spec with a misspelt updater name replaced by
    the closest known one (None: the name is known, or nothing is close)."""
    from difflib import get_close_matches

    from kvcli.cli.completion import SIMPLE_UPDATERS
    from kvcli.optim.spec import builtin_optimizers

    name, colon, rest = spec.strip().partition(":")
    known = [*(n.rstrip(":") for n in SIMPLE_UPDATERS), *builtin_optimizers()]
    if name.lower() in known:
        return None
    close = get_close_matches(name.lower(), known, n=1, cutoff=0.6)
    return f"{close[0]}{colon}{rest}" if close else None


def run_set_compression(options: GlobalOptions, spec: str, yes: bool = False) -> None:
    _set_setting(options, "compression", lambda session, drop: session.set_compression(spec, drop_residuals=drop),
                 "gradient compression", yes)


def _set_setting(options: GlobalOptions, field: str, change: Any, label: str, yes: bool) -> None:
    """Change one session setting (``change(session, drop)`` returns its new value) and report
    it. A change that would drop saved state (the optimizer's, compression residuals) is
    asked on a terminal and needs --yes elsewhere; the line says what was dropped."""
    with open_session(options) as session:
        value = _asked(lambda drop: change(session, drop), "drop-state", yes, options)
        name = session.name
        notices = list(session.notices)
    if options.json:
        output.print_json({"session": name, field: value, **({"notices": notices} if notices else {})})
    else:
        output.note(f"{label}: {value or 'none'}" + "".join(f" ({notice})" for notice in notices))


def _asked(change: Any, remedy: str, yes: bool, options: GlobalOptions) -> Any:
    """``change(yes)``; when the library refuses it for want of a confirmation (a
    :class:`SessionError` whose ``remedy`` is ``remedy``, its ``problem`` the question), ask
    on the terminal and run ``change(True)``."""
    try:
        return change(yes)
    except SessionError as error:
        if (error.fields or {}).get("remedy") != remedy:
            raise
        # asked with the lock released: another command need not wait for the answer
        confirm(f"{error.fields['problem']}:", False, options)
        return change(True)


def run_keys(options: GlobalOptions) -> None:
    with open_session(options) as session:
        keys = session.keys()
    if options.json:
        output.print_json(keys)
    else:
        for key in keys:
            output.print_text(str(key))


def run_show(options: GlobalOptions) -> None:
    with open_session(options) as session:
        info = session.describe()
    if options.json:
        output.print_json(info)
        return
    for warning in info.get("warnings", []):
        output.note(f"warning: {warning}")
    store = info["store"]
    store_options = ", ".join(f"{k}={v}" for k, v in store["options"].items())
    store_text = f"store {store['type']}{f' ({store_options})' if store_options else ''}"
    updater_text = f"updater {info['updater']}" + (" (with saved state)" if info["optimizer_state"] else "")
    if info["compression"]:
        updater_text += f", compression {info['compression']}"
    console = output.stdout_console()
    if not info["keys"]:
        console.print(f"session {info['session']} has no keys (add one with kvcli init KEY VALUE)", markup=False)
        console.print(f"{store_text} · {updater_text}", markup=False)
        return
    from kvcli.cli.columns import Column, print_table

    columns = (Column("key"), Column("shape"), Column("dtype"), Column("version", right=True), Column("size", right=True))
    rows = [(str(row["key"]), _shape_text(row["shape"]), row["dtype"], str(row["version"]),
             output.human_bytes(row["nbytes"])) for row in info["keys"]]
    print_table(console, f"session {info['session']}", columns, rows, f"{store_text} · {updater_text}")


def _shape_text(shape: Sequence[int]) -> str:
    """``(64,3,3,3)``: a shape as one word (columns split at spaces)."""
    return "(" + ",".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# ---------------------------------------------------------------------- delete / reset
def run_delete(options: GlobalOptions, keys: str, yes: bool = False) -> None:
    key_list = _keys(keys)
    with open_session(options) as session:
        held = set(session.peek_keys())
        if all(key in held for key in key_list):  # an unknown key is refused by delete itself, before any question
            values, them = ("value", "it") if len(key_list) == 1 else ("values", "them")
            confirm(f"delete drops {_key_list(key_list)} of session {session.name!r} (the {values} and any optimizer "
                    f"state kept for {them}):", yes, options)
        session.delete(key_list)
        name = session.name
    if options.json:
        output.print_json({"session": name, "deleted": key_list})
    else:
        output.note("deleted " + ", ".join(f"key {k}" for k in key_list))


def run_reset(options: GlobalOptions, yes: bool = False) -> None:
    store_type = options.store_type
    merged = dict(options.store_options)
    if merged and not store_type:
        raise SessionError("store options need --type: e.g. reset --type device --num-devices 4")
    with open_session(options) as session:
        count = len(session.peek_keys())
        if session.exists():
            confirm(f"reset deletes the {output.plural(count, 'key')} of session {session.name!r}, its updater "
                    "and its state:", yes, options)
        manifest = session.reset(store_type, merged)
        name = session.name
    if options.json:
        output.print_json({"session": name, "store": {"type": manifest.store_type, "options": manifest.store_options}})
    else:
        extra = ", ".join(f"{k}={v}" for k, v in manifest.store_options.items())
        output.note(f"reset session {name}: empty {manifest.store_type} store{f' ({extra})' if extra else ''}")


# ---------------------------------------------------------------------- export / import / sessions
def run_export(options: GlobalOptions, folder: Path) -> None:
    with open_session(options) as session:
        path = session.export(folder)
        count = len(session.keys())
    if options.json:
        output.print_json({"exported": str(path), "keys": count})
    else:
        output.note(f"exported {output.plural(count, 'key')} to {path}")


def run_import(options: GlobalOptions, folder: Path, merge: bool = False, yes: bool = False) -> None:
    with open_session(options) as session:
        planned = session.import_plan(folder, merge)
        if planned.replaced or planned.dropped:
            confirm(_import_question(session.name, folder, planned, merge), yes, options)
        manifest = session.import_(folder, merge=merge)
        notices = list(session.notices)
    changed = {"replaced": planned.replaced, "dropped": planned.dropped}
    if options.json:
        output.print_json({"imported": str(folder), "keys": list(manifest.keys), "updater": manifest.updater,
                           "merged": merge, **changed, "notices": notices})
    else:
        for notice in notices:
            output.note(notice)
        done = [f"{what} {_key_list(keys)}" for what, keys in changed.items() if keys]
        output.note(f"imported {output.plural(len(planned.replaced) + len(planned.added), 'key')} from {folder}"
                    + (f" ({'; '.join(done)})" if done else "") + f" (updater {manifest.updater})")


def _import_question(name: str, folder: Path, planned: Any, merge: bool) -> str:
    """What an import will replace and drop, asked before it does."""
    parts = []
    if planned.replaced:
        parts.append(f"replaces the values of {_key_list(planned.replaced)}")
    if planned.dropped:
        parts.append(f"drops {_key_list(planned.dropped)}")
    keeps = "keeps its other keys, updater and state" if merge else "replaces its updater and optimizer state"
    return f"import of {folder} into session {name!r} {' and '.join(parts)}, and {keeps}:"


def _key_list(keys: Sequence[Any]) -> str:
    """``key w`` / ``3 keys (w, b, c)`` / ``12 keys (k0, ..., k7 and 4 more)``."""
    if len(keys) == 1:
        return f"key {keys[0]}"
    shown = ", ".join(str(k) for k in keys[:8]) + (f" and {len(keys) - 8} more" if len(keys) > 8 else "")
    return f"{len(keys)} keys ({shown})"


# ---------------------------------------------------------------------- MXNet checkpoints
def run_load_params(options: GlobalOptions, file: Path, prefix: Optional[str] = None,
                    strip_prefix: Optional[Sequence[str]] = None, keys: Optional[str] = None, yes: bool = False) -> None:
    from kvcli.errors import KeyTypeError

    patterns = [part.strip() for part in keys.split(",")] if keys is not None else None
    if patterns is not None and not all(patterns):
        raise UsageError(f"--keys {keys!r} has an empty name: give names or patterns separated by commas",
                         command="load-params")

    def load(session: Any, replace: bool) -> Any:
        with output.status(f"loading {file}", quiet=options.json):
            return session.load_params(file, prefix=prefix or "", strip_prefix=list(strip_prefix or ()),
                                       keys=patterns, replace=replace)

    with open_session(options) as session:
        try:
            done = _asked(lambda replace: load(session, replace), "replace-keys", yes, options)
        except KeyTypeError as error:
            if (error.fields or {}).get("remedy") != "rename-params":
                raise
            raise KeyTypeError(f"{error.fields['problem']}: rename with --strip-prefix/--prefix, or leave it out "
                               "with --keys") from None
        name = session.name
    if options.json:
        output.print_json({"session": name, "file": str(file), "keys": done.keys, "replaced": done.replaced,
                           "bytes": done.nbytes})
        return
    replaced = f"; replaced {_key_list(done.replaced)}" if done.replaced else ""
    output.note(f"loaded {output.plural(len(done.keys), 'key')} ({output.human_bytes(done.nbytes)}) from {file} "
                f"into session {name}{replaced}")


def run_save_params(options: GlobalOptions, out: Path, keys: Optional[Sequence[str]] = None, yes: bool = False) -> None:
    key_list = [key for text in keys or () for key in _keys(text)] or None
    if key_list is not None and len(set(key_list)) != len(key_list):
        raise UsageError("a key is given twice: give each key once", command="save-params")
    target = Path(out).expanduser()
    confirm_replacing("save-params", [target], yes, options)
    with output.status(f"saving to {target}", quiet=options.json), open_session(options) as session:
        saved = session.save_params(target, key_list)
        name = session.name
    if options.json:
        output.print_json({"session": name, "file": str(saved.path), "names": saved.names, "bytes": saved.nbytes})
        return
    output.note(f"saved {output.plural(len(saved.names), 'key')} ({output.human_bytes(saved.nbytes)}) of session "
                f"{name} to {saved.path}")


def session_weights(options: GlobalOptions) -> Any:
    """The ``--session`` weights ``viz`` and ``summary`` check a graph against: every key's
    committed value and version (:class:`kvcli.symbol.params.Weights`)."""
    from kvcli.symbol.params import Weights

    require_session(options)
    with open_session(options) as session:
        found = session.snapshot()
        name = session.name
    return Weights(f"session {name!r}", [(str(e.key), value) for e, value in found],
                   {str(e.key): e.version for e, _ in found})


def run_sessions(options: GlobalOptions) -> None:
    from kvcli.session import list_sessions

    home = options.home_path()
    rows = list_sessions(home)
    if options.json:
        output.print_json({"home": str(home), "sessions": rows})
        return
    if not rows:
        output.print_text(f"no sessions in {home}")
        return
    from kvcli.cli.columns import Column, print_table

    columns = (Column("session"), Column("store"), Column("updater"), Column("keys", right=True),
               Column("size", right=True), Column("warm devices", right=True))
    table = [(row["session"], "damaged", "", "", "", "") if "error" in row else
             (row["session"], str(row["type"] or "-"), str(row["updater"] or "-"), str(row["keys"]),
              output.human_bytes(row["bytes"]), str(row.get("warm_devices") or "-")) for row in rows]
    print_table(output.stdout_console(), f"sessions in {home}", columns, table)


def run_sessions_delete(options: GlobalOptions, name: str, yes: bool = False) -> None:
    import os
    import shutil

    from kvcli.session import check_session_name, session_lock
    from kvcli.session.names import session_folder

    name = check_session_name(name)
    home = options.home_path()
    path = session_folder(home, name)
    if not path.is_dir():
        require_session(GlobalOptions(session=name, home=home), to_delete=True)
    live = options.live
    if live is not None and live.name == name and live.home == home:
        raise SessionError(f"session {name!r} is the one this shell has open: delete it from another terminal")
    count = len(_session_keys(name, home))
    confirm(f"delete session {name!r} and its {output.plural(count, 'key')}?", yes, options)
    lock = session_lock(path)
    lock.acquire(shared=False)  # no command of another process is half-way through it
    gone = path.with_name(f".deleted-{name}-{os.getpid()}")
    try:
        os.rename(path, gone)  # atomic: later commands see no session, never half a one
    finally:
        lock.release()
    shutil.rmtree(gone, ignore_errors=True)
    from kvcli.session import cluster

    cluster.expire_kept(home, path)  # the home's cluster stops the session's kept servers
    if options.json:
        output.print_json({"deleted": name, "home": str(home)})
    else:
        output.note(f"deleted session {name} ({output.plural(count, 'key')})")


def _session_keys(name: str, home: Path) -> list[Any]:
    from kvcli.session import Session

    return Session(name, home).peek_keys()
