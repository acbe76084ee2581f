"""The schema of a session manifest: the type and range of every field, checked before use.

Each field's check is declared once here and used by both forms a manifest takes: a
``manifest.json`` (:func:`validate`, an old session or an export) and the session database's
rows (:func:`check_meta` on the meta rows, :func:`check_key_fields` on each key's row, through
:class:`kvcli.session.entry.KeyEntry`). :mod:`kvcli.session` turns a :class:`ManifestProblem`
into a one-line "corrupted" error naming the file. A manifest is written by kvcli, but a
folder can come from anywhere (a copy, an import, someone else's home), so nothing in it is
trusted: unknown fields, wrong types, out-of-range numbers, strings that are not valid
Unicode (a lone surrogate) and oversized lists are refused. Nesting is bounded by the schema
itself (every field has a known, flat type) and by the JSON parser's recursion limit, which
the reader turns into the same one-line error.
"""

from __future__ import annotations

import math
import re
from typing import Any

from kvcli.errors import ManifestProblem
from kvcli.arrays.kinds import DTYPES
from kvcli.store import REGISTRY
from kvcli.store import SESSION_OPTION_SPECS as SPECS

MAX_MANIFEST_BYTES = 256 << 20  # a manifest of ~2 million keys; anything bigger is not ours
MAX_KEYS = 2_000_000
MAX_NDIM = 32
MAX_DIM = 1 << 62
MAX_BYTES = 1 << 62
MAX_COUNTER = 1 << 63  # generation and key versions
MAX_TIME = 1e11  # seconds since 1970 (the year 5138)
MAX_TEXT = 4096  # an updater spec or a Ray address
FILE_RE = re.compile(r"[0-9a-f]{32}\.(npy|npz)")
HEX64_RE = re.compile(r"[0-9a-f]{64}")

#: Store options each store type keeps, with their (type, smallest, largest): read from the
#: store registry (the one table of store types and option ranges).
OPTION_RULES: dict[str, dict[str, tuple[type, int, int]]] = {
    name: {option: (SPECS[option].kind, SPECS[option].low, SPECS[option].high) for option in kind.session_options}
    for name, kind in REGISTRY.items()
}
#: Every top-level field of the manifest (the ones marked optional may be absent).
FIELDS = ("format", "format_version", "generation", "created", "updated", "store", "updater",
          "updater_trust", "optimizer_state", "compression", "key_kind", "keys")
OPTIONAL = ("created", "updated", "updater_trust", "compression", "key_kind")
#: The fields of the database's meta rows: every field but the keys (each key has its row).
META_FIELDS = tuple(name for name in FIELDS if name != "keys")
KEY_FIELDS = ("key", "file", "dtype", "shape", "version", "spare", "residual", "data")
#: ``data``: the value's bytes when it is held in its database row (never in JSON)
KEY_OPTIONAL = ("spare", "residual", "data")
TRUST_FIELDS = ("path", "sha256", "mac")


def validate(data: Any) -> None:
    """Check every field of a decoded ``manifest.json`` but its key entries (each is checked
    as it becomes a :class:`~kvcli.session.entry.KeyEntry`); format and version already checked."""
    if not isinstance(data, dict):
        raise ManifestProblem("it is not a JSON object")
    check_meta(data, FIELDS)
    keys = data["keys"]
    if not isinstance(keys, list) or len(keys) > MAX_KEYS:
        raise ManifestProblem(f"keys must be a list of at most {MAX_KEYS:,} entries")


def check_meta(data: dict[str, Any], fields: tuple[str, ...] = META_FIELDS) -> None:
    """Check the manifest's top-level fields ``fields`` (the database's meta rows by default:
    every field but the keys)."""
    unknown = [name for name in data if name not in fields]
    if unknown:
        raise ManifestProblem(f"it has unknown fields {short(unknown)}")
    missing = [name for name in fields if name not in data and name not in OPTIONAL]
    if missing:
        raise ManifestProblem(f"field {missing[0]!r} is missing")
    _int(data["generation"], "generation", 0, MAX_COUNTER - 1)
    for name in ("created", "updated"):
        if name in data:
            _time(data[name], name)
    _store(data["store"])
    _text(data["updater"], "updater", MAX_TEXT)
    if data.get("compression") is not None:
        _text(data["compression"], "compression", MAX_TEXT)
    if data.get("updater_trust") is not None:
        _trust(data["updater_trust"])
    state = data["optimizer_state"]
    if state is not None and (not isinstance(state, str) or not FILE_RE.fullmatch(state) or not state.endswith(".npz")):
        raise ManifestProblem(f"optimizer_state {short(state)} is not a session file name")
    kind = data.get("key_kind")
    if kind not in (None, "int", "str"):
        raise ManifestProblem(f"key_kind {short(kind)} is not 'int', 'str' or null")


def check_key_object(entry: Any) -> None:
    """Check that a key entry of a ``manifest.json`` is an object with the fields of an
    entry (:data:`KEY_FIELDS`, the optional ones may be absent); its values are checked by
    :func:`check_key_fields`."""
    if not isinstance(entry, dict):
        raise ManifestProblem(f"a key entry is a {type(entry).__name__}, not an object")
    extra = [name for name in entry if name not in KEY_FIELDS]
    missing = [name for name in KEY_FIELDS if name not in entry and name not in KEY_OPTIONAL]
    if extra or missing:
        raise ManifestProblem(f"a key entry has {'unknown' if extra else 'missing'} fields {short(extra or missing)}")


def check_key_fields(key: Any, file: Any, dtype: Any, shape: Any, version: Any, spare: Any, residual: Any,
                     data: Any) -> None:
    """Check the fields of one key (:data:`KEY_FIELDS`, an absent optional one as None): the
    one declaration of each field's check, for a database row and a JSON entry alike."""
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise ManifestProblem(f"a key is a {type(key).__name__}, not a whole number or a name")
    shown = short(key)
    for value in (file, spare) if spare is not None else (file,):
        if not isinstance(value, str) or not FILE_RE.fullmatch(value) or not value.endswith(".npy"):
            raise ManifestProblem(f"key {shown} names the file {short(value)}, which is not a session file name")
    if residual is not None and (not isinstance(residual, str) or not FILE_RE.fullmatch(residual)
                                 or not residual.endswith(".npz")):
        raise ManifestProblem(f"key {shown} names the residual file {short(residual)}, which is not a session file name")
    if dtype not in DTYPES:
        raise ManifestProblem(f"key {shown} has dtype {short(dtype)}, which kvcli does not load")
    if not isinstance(shape, list) or len(shape) > MAX_NDIM or not all(
        isinstance(n, int) and not isinstance(n, bool) and 0 <= n < MAX_DIM for n in shape
    ):
        raise ManifestProblem(f"key {shown} has a malformed shape {short(shape)}")
    itemsize = 1 if dtype in ("int8", "uint8", "bool") else int(re.sub(r"\D", "", dtype)) // 8
    nbytes = math.prod(shape) * itemsize
    if nbytes > MAX_BYTES:
        raise ManifestProblem(f"key {shown} has an impossible size (shape {short(shape)})")
    if data is not None:
        if not isinstance(data, bytes):
            raise ManifestProblem(f"key {shown} holds its value as a {type(data).__name__}, not bytes")
        if len(data) != nbytes:
            raise ManifestProblem(f"key {shown} holds {len(data)} bytes of value, not the "
                                  f"{nbytes} of shape {short(shape)} and dtype {dtype}")
        if spare is not None:
            raise ManifestProblem(f"key {shown} holds its value in its row and names a spare file")
    _int(version, f"key {shown}'s version", 0, MAX_COUNTER - 1)


def _store(store: Any) -> None:
    if not isinstance(store, dict) or set(store) != {"type", "options"}:
        raise ManifestProblem("store must be an object with 'type' and 'options'")
    kind, options = store["type"], store["options"]
    if kind not in OPTION_RULES:
        raise ManifestProblem(f"store type {short(kind)} is not known")
    if not isinstance(options, dict):
        raise ManifestProblem("store options must be an object")
    rules = OPTION_RULES[kind]
    for name, value in options.items():
        if name not in rules:
            raise ManifestProblem(f"store option {short(name)} does not apply to the {kind!r} store")
        expected, low, high = rules[name]
        if expected is int:
            _int(value, f"store option {name}", low, high)
        else:
            _text(value, f"store option {name}", high)


def _trust(trust: Any) -> None:
    if not isinstance(trust, dict) or set(trust) != set(TRUST_FIELDS):
        raise ManifestProblem(f"updater_trust must be an object with {', '.join(TRUST_FIELDS)}")
    _text(trust["path"], "updater_trust path", MAX_TEXT)
    for name in ("sha256", "mac"):
        if not isinstance(trust[name], str) or not HEX64_RE.fullmatch(trust[name]):
            raise ManifestProblem(f"updater_trust {name} is not 64 hex digits")


def _int(value: Any, what: str, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ManifestProblem(f"{what} must be a whole number from {low} to {high}, not {short(value)}")


def _time(value: Any, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
        math.isfinite(value) and 0 <= value <= MAX_TIME
    ):
        raise ManifestProblem(f"{what} must be a time in seconds since 1970, not {short(value)}")


def _text(value: Any, what: str, longest: int) -> None:
    if not isinstance(value, str) or not 1 <= len(value) <= longest:
        raise ManifestProblem(f"{what} must be a string of 1 to {longest} characters, not {short(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ManifestProblem(f"{what} {short(value)} is not valid Unicode (a lone surrogate)") from None
    if any(ord(c) < 32 for c in value):
        raise ManifestProblem(f"{what} {short(value)} holds control characters")


def short(value: Any) -> str:
    """A bounded ``repr`` (a 4000-digit integer or a huge list must not flood the message)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<a {len(str(abs(value)))}-digit integer>"
    if isinstance(value, (list, dict)) and len(value) > 8:
        return f"<a {type(value).__name__} of {len(value)} items>"
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        return f"<a {type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."
