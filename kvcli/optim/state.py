"""Optimizer state files: a pickle-free ``.npz`` (zip) archive, read with bounds.

Layout: ``__meta__`` (UTF-8 JSON: format, optimizer name, optional spec string, keys, step
counts, the optimizer's own scalars) and one array ``state/<key index>/<name>`` per state array.

A state file may come from elsewhere (an export someone sent, a file a user loads), so
reading it trusts nothing in it:

* it never names code: the spec string it carries is adopted only when it names one of
  kvcli's own optimizers and the caller allows it (``kv.load_optimizer_states``, MXNet's
  ``dump_optimizer``); a ``python:`` spec is never parsed, and is accepted only when it is
  the spec of the updater the user already set (a session's comes from its manifest, with
  the trust check of :mod:`kvcli.session.trust`);
* every member is bounded before it is decompressed (:class:`kvcli.arrays.npyio.NpzArchive`): its
  declared size against the shape of its key (where the caller knows it) or
  ``KVCLI_MAX_ELEMENTS``, and each ``.npy`` header against the same bound before its body is
  read (a 2 MB zip bomb unpacks nothing);
* the numbers are checked (step counts from 0 to 2**62, finite rates, known keys, arrays
  of their weight's shape) before the updater changes: on any error nothing changed.
"""

from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from kvcli import config
from kvcli.errors import OptimizerStateError, UpdaterError, NpyError
from kvcli.arrays.npyio import NpzArchive
from kvcli.optim.checks import check_count, is_builtin
from kvcli.arrays.core import Key
from kvcli.osutil import atomic_write

STATE_FORMAT = 1
#: Arrays one key's state may hold (kvcli's optimizers keep at most four).
MAX_ARRAYS_PER_KEY = 64
#: JSON bytes of ``__meta__`` beyond what LBSGD's accumulated gradients (numbers written as
#: text, at most :data:`_JSON_BYTES_PER_ELEMENT` each) may need.
MAX_META_BYTES = 1 << 20
_JSON_BYTES_PER_ELEMENT = 40
_MEMBER_RE = re.compile(r"state/(0|[1-9][0-9]{0,8})/([A-Za-z0-9_.-]{1,64})")
_MAX_SPEC = 4096

Shapes = Mapping[Key, tuple[int, ...]]


def names_code(spec: str | None) -> bool:
    """Whether an updater spec names code to run (``python:FILE.py:NAME``), read as
    :func:`~kvcli.optim.spec.parse_updater` reads the name before the first colon."""
    return isinstance(spec, str) and spec.partition(":")[0].strip().lower() == "python"


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


# ---------------------------------------------------------------------- reading
@dataclass
class StateFile:
    """What a state file's ``__meta__`` says, and (after :meth:`_Archive.read_arrays`) its arrays."""

    name: str
    spec: str | None
    keys: list[Key]
    counts: dict[Key, int]
    extra: dict[str, Any]
    states: dict[Key, dict[str, np.ndarray]] = field(default_factory=dict)

    def as_state(self) -> dict[str, Any]:
        """The state dict ``Optimizer.load_state_dict`` takes."""
        return {"states": self.states, "counts": self.counts, "extra": self.extra}


class _Archive:
    """An open state file: its members listed and bounded, ``__meta__`` read and checked."""

    def __init__(self, source: bytes | bytearray | Path, where: str, shapes: Shapes | None, all_keys: bool) -> None:
        self.where = where
        self.shapes = shapes
        self.all_keys = all_keys
        try:
            self.npz = NpzArchive(source)
        except NpyError as error:
            if error.kind == "missing":
                raise OptimizerStateError(f"optimizer state file {where} does not exist") from None
            if error.kind == "not-regular":
                raise OptimizerStateError(f"{where} {error}: give the path of a state file (.npz)") from None
            raise self.damaged(str(error)) from None
        try:
            self.meta = self._read_meta()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.npz.close()

    def __enter__(self) -> "_Archive":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def damaged(self, problem: str) -> OptimizerStateError:
        return OptimizerStateError(f"{self.where} is not an optimizer state file written by kvcli (it {problem})")

    def _meta_limit(self) -> int:
        """Bytes ``__meta__`` may have: LBSGD writes each key's accumulated gradient into it."""
        elements = sum(math.prod(shape) for shape in (self.shapes or {}).values())
        if not self.all_keys:
            elements += _max_elements()
        return MAX_META_BYTES + _JSON_BYTES_PER_ELEMENT * elements

    def _read_meta(self) -> StateFile:
        if "__meta__" not in self.npz.members:
            raise self.damaged("has no __meta__ member")
        raw = self._member("__meta__", self._meta_limit(), "its __meta__")
        if raw.dtype != np.uint8 or raw.ndim != 1:
            raise self.damaged(f"has a __meta__ of {raw.dtype} {raw.shape}, not text")
        try:
            meta = json.loads(raw.tobytes().decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            raise self.damaged(f"has a __meta__ that is not JSON: {str(error)[:100]}") from None
        if not isinstance(meta, dict) or meta.get("format") != STATE_FORMAT:
            got = meta.get("format") if isinstance(meta, dict) else None
            raise OptimizerStateError(f"{self.where} has state format {repr(got)[:40]}; expected {STATE_FORMAT}")
        name, spec, raw_keys, raw_counts = meta.get("updater"), meta.get("spec"), meta.get("keys"), meta.get("counts")
        extra = meta.get("extra") or {}
        if not isinstance(name, str) or not 1 <= len(name) <= 200:
            raise self.damaged(f"has the optimizer name {repr(name)[:60]}, not a name")
        if spec is not None and (not isinstance(spec, str) or not 1 <= len(spec) <= _MAX_SPEC):
            raise self.damaged(f"has the spec {repr(spec)[:60]}, not a spec string")
        if not isinstance(raw_keys, list) or not isinstance(raw_counts, list) or len(raw_keys) != len(raw_counts):
            raise self.damaged("has keys and counts that are not two lists of the same length")
        if not isinstance(extra, dict):
            raise self.damaged("has optimizer numbers that are not a table")
        keys = [self._key(item) for item in raw_keys]
        if len(set(keys)) != len(keys):
            raise self.damaged("lists a key twice")
        try:
            counts = {key: check_count(count, f"the step count of key {key!r}") for key, count in zip(keys, raw_counts)}
        except OptimizerStateError as error:
            raise OptimizerStateError(f"cannot load {self.where}: {error}") from None
        if self.all_keys and self.shapes is not None:
            unknown = [key for key in keys if key not in self.shapes]
            if unknown:
                raise OptimizerStateError(
                    f"cannot load {self.where}: it holds the state of key {unknown[0]!r}, which the manifest "
                    "does not list"
                )
        arrays = len(self.npz.members) - 1
        if arrays > MAX_ARRAYS_PER_KEY * len(keys):
            raise self.damaged(f"has {arrays} arrays for {len(keys)} keys")
        return StateFile(name, spec, keys, counts, extra)

    def _key(self, item: Any) -> Key:
        if not isinstance(item, list) or len(item) != 2 or item[0] not in ("int", "str"):
            raise self.damaged(f"names the key {repr(item)[:60]}, not [kind, key]")
        kind, key = item
        if kind == "int" and isinstance(key, int) and not isinstance(key, bool) and abs(key) < 1 << 63:
            return int(key)
        if kind == "str" and isinstance(key, str) and 1 <= len(key) <= 4096:
            return key
        raise self.damaged(f"names the key {repr(item)[:60]}")

    def read_arrays(self, weight_shaped: bool) -> dict[Key, dict[str, np.ndarray]]:
        """Every state array, each bounded before it is read: by its key's shape when
        ``weight_shaped`` and the key is known, else by ``KVCLI_MAX_ELEMENTS``."""
        meta = self.meta
        states: dict[Key, dict[str, np.ndarray]] = {}
        for member in self.npz.members:
            if member == "__meta__":
                continue
            match = _MEMBER_RE.fullmatch(member)
            if match is None or int(match.group(1)) >= len(meta.keys):
                raise self.damaged(f"has a member {member[:80]!r} that is not state/<key index>/<name>.npy")
            key, state_name = meta.keys[int(match.group(1))], match.group(2)
            shape = (self.shapes or {}).get(key)
            limit = math.prod(shape) if weight_shaped and shape is not None else _max_elements()
            states.setdefault(key, {})[state_name] = self._member(member, limit, f"its state {state_name!r} of key {key!r}")
        return states

    def _member(self, member: str, limit: int, what: str) -> np.ndarray:
        try:
            return self.npz.read(member, limit)
        except NpyError as error:
            if error.kind in ("size", "limit"):
                raise OptimizerStateError(f"cannot load {self.where}: {what} {error}") from None
            raise self.damaged(f"has {what}, which {error}") from None


def _max_elements() -> int:
    return int(config.get(config.MAX_ELEMENTS))


def read_meta(source: bytes | bytearray | Path, where: str | None = None) -> StateFile:
    """What a state file says about itself (optimizer name, spec, keys, counts), bounded and
    checked, without its arrays; nothing in it is run."""
    where = where or (repr(str(source)) if isinstance(source, Path) else "the optimizer states")
    with _Archive(source, where, None, False) as archive:
        return archive.meta


def read_state(
    source: bytes | bytearray | Path,
    updater: Any,
    *,
    where: str | None = None,
    shapes: Shapes | None = None,
    all_keys: bool = False,
    adopt_spec: bool = True,
    role: str = "updater",
) -> tuple[Any, StateFile]:
    """Read a state file for ``updater``: ``(the updater it goes into, the file)``, checked
    but not loaded yet (see :func:`load_state`; ``role`` as for :func:`resolve_updater`)."""
    where = where or (repr(str(source)) if isinstance(source, Path) else "the optimizer states")
    with _Archive(source, where, shapes, all_keys) as archive:
        meta = archive.meta
        target = resolve_updater(meta.name, meta.spec, updater, where, adopt_spec, role)
        meta.states = archive.read_arrays(weight_shaped=is_builtin(type(target)))
    return target, meta


def resolve_updater(
    name: str, spec: str | None, updater: Any, where: str, adopt_spec: bool, role: str = "updater"
) -> Any:
    """The updater a state file's arrays go into: ``updater``, or (``adopt_spec``) a new one
    made from the file's spec when that names one of kvcli's own optimizers. A spec that
    names code is never parsed: it must be the spec of ``updater`` itself. ``role`` is what
    the caller calls ``updater`` (``"optimizer"`` for ``Updater.set_states``)."""
    from kvcli.optim.registry import registered
    from kvcli.optim.spec import parse_updater  # on first use: reading a file needs no parser

    own = getattr(updater, "spec", None)
    if names_code(spec) and spec != own:
        raise OptimizerStateError(
            f"{where} names Python code ({spec[:200] if spec else spec}), and kvcli never runs code a state file "
            "names (set that updater yourself with set_updater if you trust the file, then load the state)"
        )
    named = registered().get(spec.partition(":")[0].strip().lower()) if spec else None
    if spec and adopt_spec and not names_code(spec) and named is not None and is_builtin(named):
        try:
            updater = parse_updater(spec)
        except UpdaterError as error:
            raise OptimizerStateError(f"{where} holds a spec that does not parse ({error})") from None
    if updater is None or not hasattr(updater, "load_state_dict"):
        raise OptimizerStateError(
            f"cannot load {where}: set the optimizer first (set_optimizer or set_updater('{name}:...'))"
        )
    if updater.name != name:
        if role == "optimizer":  # Updater.set_states: "the states" (bytes), no set_updater there
            raise OptimizerStateError(
                f"{where} hold {name} state but the optimizer is {updater.name}: use a {name} optimizer"
            )
        raise OptimizerStateError(
            f"{where} holds {name} state but the updater is {updater.name}: set_updater('{name}:...') first"
        )
    return updater


def save_state(updater: Any, path: Path, include_spec: bool = False) -> None:
    """Write ``updater``'s state to ``path`` (``.npz``, pickle-free, atomic replace)."""
    data = dumps(updater.state_dict(), updater.name, updater.spec if include_spec else None)
    atomic_write(Path(path), data)  # 0600, fsynced


def load_state(
    path: Path,
    updater: Any,
    *,
    shapes: Shapes | None = None,
    all_keys: bool = False,
    adopt_spec: bool = True,
) -> Any:
    """Read a file written by :func:`save_state` into ``updater``. Returns the updater that
    now holds the state; on any error nothing changed.

    Args:
        shapes: the weights' shapes by key, where known: state arrays must fit them (and
            are bounded by them before they are read).
        all_keys: ``shapes`` lists every key the state may hold (a session's manifest).
        adopt_spec: when the file carries the spec of one of kvcli's optimizers, the state
            goes into a new updater made from it (MXNet's ``dump_optimizer``); a session
            passes False, its updater comes from its manifest. Code is never adopted.
    """
    where = repr(str(path))
    target, saved = read_state(Path(path), updater, where=where, shapes=shapes, all_keys=all_keys,
                               adopt_spec=adopt_spec)
    try:
        target.load_state_dict(saved.as_state(), shapes)
    except OptimizerStateError as error:
        raise OptimizerStateError(f"cannot load {where}: {error}") from None
    return target
