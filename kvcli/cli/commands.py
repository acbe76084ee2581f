"""What each session command does, without the command-line layer.

The typer commands (:mod:`kvcli.cli.store_cmds`), the startup fast path
(:mod:`kvcli.cli.fast`) and the shell all call these functions, so each command is
written once. Nothing here imports typer, rich or prompt_toolkit at module level.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from kvcli.cli import output
from kvcli.errors import SessionError


@dataclass
class GlobalOptions:
    """Options given before the subcommand, shared by every command."""

    session: Optional[str] = None
    home: Optional[Path] = None
    json: bool = False
    store_type: Optional[str] = None
    store_options: dict[str, Any] = field(default_factory=dict)
    #: The session kept open by ``kvcli shell`` (its commands run against it).
    live: Any = None


@contextmanager
def open_session(options: GlobalOptions) -> Iterator[Any]:
    """The session a command works on: the shell's open one, or a new one for this command."""
    from kvcli.session import Session, check_store_request

    live = options.live
    if live is not None and options.session in (None, live.name) and (
        options.home is None or Path(options.home).expanduser() == live.home
    ):
        saved = (live.requested_type, live.requested_options)
        if options.store_type:
            live.requested_type, live.requested_options = check_store_request(options.store_type, options.store_options)
        try:
            yield live
        finally:
            live.requested_type, live.requested_options = saved
        return
    session = Session(options.session, options.home, store_type=options.store_type, store_options=options.store_options)
    try:
        yield session
    finally:
        session.close()


def _keys(text: str) -> list[Any]:
    from kvcli.session import parse_keys

    return parse_keys(text)


# ---------------------------------------------------------------------- init / push / pull
def run_init(options: GlobalOptions, keys: str, values: Sequence[str], dtype: Optional[str] = None) -> None:
    from kvcli.values import parse_value

    key_list = _keys(keys)
    if len(values) not in (1, len(key_list)):
        raise SessionError(
            f"init got {len(key_list)} keys and {len(values)} values: give one value for all keys or one per key"
        )
    parsed = [parse_value(text, dtype=dtype) for text in values]
    arrays = parsed * len(key_list) if len(parsed) == 1 else parsed
    with open_session(options) as session:
        results = session.init(key_list, arrays)
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
    from kvcli.values import parse_value

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
                cache[slot] = parse_value(text, dtype=dtype, default_dtype=entry.dtype)
            arrays.append(cache[slot])
        if len(arrays) == 1:
            return arrays[0] if count == 1 else [arrays[0]] * count
        return arrays

    with open_session(options) as session:
        entries = session.push(key_list, build)
        name = session.name
        updater = session.store.updater_spec if session.store is not None else None
    if options.json:
        output.print_json(
            {"session": name, "devices": count, "updater": updater, "keys": [{"key": e.key, "version": e.version} for e in entries]}
        )
        return
    source = f" from {count} devices" if count > 1 else ""
    for entry in entries:
        output.note(f"pushed key {entry.key}{source} (updater {updater}, version {entry.version})")


def run_pull(
    options: GlobalOptions, keys: str, devices: int = 1, json_output: bool = False, out: Optional[Path] = None
) -> None:
    key_list = _keys(keys)
    if out is not None and len(key_list) != 1:
        raise SessionError("-o writes one key: pull the keys one at a time")
    with open_session(options) as session:
        pulled = session.pull(key_list, devices)
    if out is not None:
        array = pulled[0][0]
        _write_npy_output(Path(out), array)
        output.note(f"wrote key {key_list[0]} ({array.dtype} {array.shape}) to {out}")
        return
    if json_output or options.json:
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


def _write_npy_output(path: Path, array: Any) -> None:
    import os

    import numpy as np

    path = path.expanduser()
    if path.suffix != ".npy":
        raise SessionError(f"-o {path}: the file name must end in .npy")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            np.save(handle, array, allow_pickle=False)
        os.replace(tmp, path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        raise SessionError(f"cannot write {path}: {error.strerror}") from None


# ---------------------------------------------------------------------- updater / keys / show
def run_set_updater(options: GlobalOptions, spec: str) -> None:
    with open_session(options) as session:
        new_spec = session.set_updater(spec)
        name = session.name
    if options.json:
        output.print_json({"session": name, "updater": new_spec})
    else:
        output.note(f"updater: {new_spec}")


def run_set_compression(options: GlobalOptions, spec: str) -> None:
    with open_session(options) as session:
        active = session.set_compression(spec)
        name = session.name
    if options.json:
        output.print_json({"session": name, "compression": active})
    else:
        output.note(f"gradient compression: {active or 'none'}")


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
    store = info["store"]
    store_options = ", ".join(f"{k}={v}" for k, v in store["options"].items())
    store_text = f"store {store['type']}{f' ({store_options})' if store_options else ''}"
    updater_text = f"updater {info['updater']}" + (" (with saved state)" if info["optimizer_state"] else "")
    if info["compression"]:
        updater_text += f", compression {info['compression']}"
    console = output.stdout_console()
    if not info["keys"]:
        console.print(f"session {info['session']} has no keys (add one with kvcli init KEY VALUE)")
        console.print(f"{store_text} · {updater_text}")
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"session [bold]{escape(info['session'])}[/]", caption=f"{store_text} · {escape(updater_text)}")
    for column, justify in (("key", "left"), ("shape", "left"), ("dtype", "left"), ("version", "right"), ("size", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for row in info["keys"]:
        table.add_row(
            str(row["key"]), str(tuple(row["shape"])), row["dtype"], str(row["version"]), output.human_bytes(row["nbytes"])
        )
    console.print(table)


# ---------------------------------------------------------------------- delete / reset
def run_delete(options: GlobalOptions, keys: str) -> None:
    key_list = _keys(keys)
    with open_session(options) as session:
        session.delete(key_list)
        name = session.name
    if options.json:
        output.print_json({"session": name, "deleted": key_list})
    else:
        output.note("deleted " + ", ".join(f"key {k}" for k in key_list))


def run_reset(options: GlobalOptions, store_type: Optional[str] = None, store_options: Optional[dict[str, Any]] = None) -> None:
    store_type = store_type or options.store_type
    merged = {**options.store_options, **{k: v for k, v in (store_options or {}).items() if v is not None}}
    if merged and not store_type:
        raise SessionError("store options need --type: e.g. kvcli reset --type device --num-devices 4")
    with open_session(options) as session:
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
        output.note(f"exported {count} keys to {path}")


def run_import(options: GlobalOptions, folder: Path) -> None:
    with open_session(options) as session:
        manifest = session.import_(folder)
    if options.json:
        output.print_json({"imported": str(folder), "keys": list(manifest.keys), "updater": manifest.updater})
    else:
        output.note(f"imported {len(manifest.keys)} keys from {folder} (updater {manifest.updater})")


def run_sessions(options: GlobalOptions) -> None:
    from kvcli.session import default_home, list_sessions

    home = Path(options.home).expanduser() if options.home else default_home()
    rows = list_sessions(home)
    if options.json:
        output.print_json({"home": str(home), "sessions": rows})
        return
    if not rows:
        output.print_text(f"no sessions in {home}")
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"sessions in {escape(str(home))}")
    for column in ("session", "store", "updater", "keys", "size"):
        table.add_column(column, justify="right" if column in ("keys", "size") else "left")
    for row in rows:
        if "error" in row:
            table.add_row(row["session"], "[red]damaged[/]", "", "", "")
        else:
            table.add_row(
                row["session"], str(row["type"] or "-"), escape(str(row["updater"] or "-")), str(row["keys"]),
                output.human_bytes(row["bytes"]),
            )
    output.stdout_console().print(table)


def run_shell(options: GlobalOptions) -> None:
    if options.live is not None:
        raise SessionError("you are already in the kvcli shell")
    from kvcli.cli.shell import run_shell as repl
    from kvcli.session import Session

    with Session(options.session, options.home, store_type=options.store_type, store_options=options.store_options) as session:
        repl(session, json_output=options.json)
