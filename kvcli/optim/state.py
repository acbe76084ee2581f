"""Optimizer state files: a pickle-free ``.npz`` archive read back with ``allow_pickle=False``.

Layout: ``__meta__`` (UTF-8 JSON: format, optimizer name, optional spec string, keys, step
counts, the optimizer's own scalars) and one array ``state/<key index>/<name>`` per state array.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from kvcli.errors import OptimizerStateError
from kvcli.store.arrays import Key

STATE_FORMAT = 1


def _archive(state: dict[str, Any], name: str, spec: str | None) -> dict[str, np.ndarray]:
    keys = sorted(set(state["states"]) | set(state["counts"]), key=lambda k: (isinstance(k, str), k))
    meta = {
        "format": STATE_FORMAT,
        "updater": name,
        "spec": spec,
        "keys": [[type(k).__name__, k] for k in keys],
        "counts": [state["counts"].get(k, 0) for k in keys],
        "extra": state.get("extra") or {},
    }
    arrays = {"__meta__": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
    for index, key in enumerate(keys):
        for array_name, array in state["states"].get(key, {}).items():
            arrays[f"state/{index}/{array_name}"] = np.asarray(array)
    return arrays


def dumps(state: dict[str, Any], name: str, spec: str | None) -> bytes:
    """``state`` (as from ``Optimizer.state_dict()``) as the bytes of a state file."""
    buffer = io.BytesIO()
    np.savez(buffer, **_archive(state, name, spec))  # type: ignore[arg-type]  # numpy's stub types allow_pickle as a kwarg
    return buffer.getvalue()


def loads(data: bytes | Path, where: str = "the optimizer states") -> tuple[str, str | None, dict[str, Any]]:
    """Read a state file (bytes or a path): ``(optimizer name, spec or None, state dict)``."""
    try:
        source = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
        with np.load(source, allow_pickle=False) as archive:
            meta = json.loads(bytes(archive["__meta__"]).decode())
            arrays = {n: archive[n] for n in archive.files if n != "__meta__"}
    except FileNotFoundError:
        raise OptimizerStateError(f"optimizer state file {where} does not exist") from None
    except (OSError, ValueError, KeyError, json.JSONDecodeError, EOFError) as error:
        raise OptimizerStateError(f"{where} is not an optimizer state file written by kvcli ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != STATE_FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else None
        raise OptimizerStateError(f"{where} has state format {got!r}; expected {STATE_FORMAT}")
    try:
        keys = [int(k) if kind == "int" else str(k) for kind, k in meta["keys"]]
        states: dict[Key, dict[str, np.ndarray]] = {}
        for array_name, array in arrays.items():
            _, index, state_name = array_name.split("/", 2)
            states.setdefault(keys[int(index)], {})[state_name] = array
        counts = dict(zip(keys, (int(c) for c in meta["counts"])))
        name = str(meta["updater"])
    except (KeyError, ValueError, IndexError, TypeError) as error:
        raise OptimizerStateError(f"{where} is damaged ({type(error).__name__}: {error})") from None
    return name, meta.get("spec"), {"states": states, "counts": counts, "extra": meta.get("extra") or {}}


def save_state(updater: Any, path: Path, include_spec: bool = False) -> None:
    """Write ``updater``'s state to ``path`` (``.npz``, pickle-free, atomic replace)."""
    import tempfile

    data = dumps(updater.state_dict(), updater.name, updater.spec if include_spec else None)
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_state(path: Path, updater: Any) -> Any:
    """Read a file written by :func:`save_state` into ``updater`` (or into the one its spec
    names). Returns the updater that now holds the state; on any error nothing changed."""
    from kvcli.optim.spec import parse_updater

    where = repr(str(path))
    name, spec, state = loads(Path(path), where)
    if spec:
        updater = parse_updater(spec)
    if updater is None or not hasattr(updater, "load_state_dict"):
        raise OptimizerStateError(
            f"cannot load {where}: set the optimizer first (set_optimizer or set_updater('{name}:...'))"
        )
    if updater.name != name:
        raise OptimizerStateError(
            f"{where} holds {name} state but the updater is {updater.name}: set_updater('{name}:...') first"
        )
    try:
        updater.load_state_dict(state)
    except OptimizerStateError as error:
        raise OptimizerStateError(f"cannot load {where}: {error}") from None
    return updater
