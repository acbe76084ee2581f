"""Names in a session: session names, keys, store types and options a
session records, ``python:`` updater specs and Ray addresses, and the layout's file names.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Mapping

from kvcli import config
from kvcli.errors import KeyTypeError, SessionError, bad_param
from kvcli.arrays.kinds import DTYPES
from kvcli.osutil import expand_user, user_home
from kvcli.arrays.kinds import Key as Key  # re-exported: the session's modules read it here



FORMAT = "kvcli-session"


#: 2: a key's value may be held in its database row (``data``) instead of a file; a kvcli
#: that reads only 1 refuses such a session with "upgrade kvcli" rather than calling its
#: values missing. 3: a key name may hold ``:`` (a checkpoint's ``arg:fc1_weight``); a kvcli
#: that reads only 2 refuses such a session with "upgrade kvcli" rather than calling it
#: corrupted (and offering a reset that would drop it). Every commit writes the current
#: version. Exports keep :data:`EXPORT_FORMAT_VERSION` (every value a file).
FORMAT_VERSION = 3


EXPORT_FORMAT_VERSION = 1


#: The first format whose key names may hold ``:``.
COLON_KEYS_FORMAT = 3


def export_format_version(keys: Any) -> int:
    """The format an export of ``keys`` declares: :data:`EXPORT_FORMAT_VERSION`, or
    :data:`COLON_KEYS_FORMAT` when a key name holds ``:``, so that a kvcli that cannot read
    such names says "upgrade kvcli" instead of calling the export corrupted."""
    if any(isinstance(key, str) and ":" in key for key in keys):
        return COLON_KEYS_FORMAT
    return EXPORT_FORMAT_VERSION


MANIFEST = "manifest.json"


DATA = "data"


LOCK = ".lock"


DEFAULT_SESSION = "default"


DEFAULT_LOCK_TIMEOUT = config.LOCK_TIMEOUT.default


#: Values at least this big keep their previous file as a spare that the next write
#: overwrites in place: rewriting existing blocks costs less than allocating a new file
#: and freeing the old one (about 0.6x on ext4 for 256 MiB), for twice the disk space.
RECYCLE_BYTES = 1 << 20


#: Values of at most this many bytes of data are held in their key's database row, so that
#: writing one is a single SQLite transaction (one fsync, no file, no folder fsync) and
#: 10,000 small keys take a few MB rather than a 4 KiB block each; bigger values are files
#: beside the database, written and fsynced before the transaction that names them commits.
INLINE_BYTES = 4096
assert INLINE_BYTES < RECYCLE_BYTES  # an inline value never takes part in spare recycling


SESSION_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")




#: ':' too: MXNet's checkpoints name their arrays arg:NAME and aux:NAME (kvcli load-params)
_STR_KEY_RE = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


_FILE_RE = re.compile(r"[0-9a-f]{32}\.(npy|npz)")


SAFE_DTYPES = frozenset(DTYPES)


KEY_RULE = ("keys are whole numbers (e.g. 3) or 1-128 letters, digits, '_', '.', ':', '-' (e.g. fc1.weight, "
            "arg:fc1_weight)")


# ---------------------------------------------------------------------- names and keys
def default_home() -> Path:
    """``KVCLI_HOME``, else the platform's user-data folder for kvcli (a ConfigError when
    no home folder can be told: an empty ``HOME`` never puts sessions under ``/``)."""
    env = config.get(config.HOME)
    if env:
        return Path(env)
    if sys.platform.startswith("linux"):  # what platformdirs says, without importing it
        base = os.environ.get("XDG_DATA_HOME", "").strip()
        if not os.path.isabs(base):  # the XDG rule: a relative path is ignored
            base = str(user_home() / ".local" / "share")  # never '/' for an empty HOME
        return Path(base) / "kvcli"
    import platformdirs

    return Path(platformdirs.user_data_dir("kvcli", appauthor=False))


def home_folder(home: str | os.PathLike[str] | None = None) -> Path:
    """The home of the sessions: ``home`` (``~`` expanded), else :func:`default_home`."""
    return Path(expand_user(os.fspath(home))) if home else default_home()


def session_folder(home: str | os.PathLike[str] | None, name: str | None = None) -> Path:
    """Where sessions live: ``HOME/sessions`` (see :func:`home_folder`), or with ``name``
    the folder of that session, ``HOME/sessions/NAME`` (the name is not checked here)."""
    folder = home_folder(home) / "sessions"
    return folder / name if name is not None else folder


def check_session_name(name: str) -> str:
    """Session names become folder names, so they are strict."""
    if not isinstance(name, str) or not SESSION_RE.fullmatch(name):
        shown = repr(name) if len(str(name)) <= 40 else repr(str(name)[:37] + "...")
        raise SessionError(
            f"session name {shown} is not allowed: use 1-64 letters, digits, '_', '.', '-' "
            "(not starting with '.' or '-')"
        )
    return name


def _numpy_integer(value: Any) -> bool:
    # no numpy integer exists before numpy is imported, and a checkpoint's load imports none
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.integer)


def check_key(key: Any) -> Key:
    """Validate a key for the session: an int >= 0 or a str of the allowed characters."""
    if (isinstance(key, int) or _numpy_integer(key)) and not isinstance(key, bool):
        if 0 <= int(key) < 10**18:
            return int(key)
        raise KeyTypeError(f"key {key!r} is out of range: {KEY_RULE}")
    if isinstance(key, str) and _STR_KEY_RE.fullmatch(key):
        return key
    shown = repr(key) if len(repr(key)) <= 50 else repr(key)[:47] + "..."
    raise KeyTypeError(f"key {shown} is not allowed: {KEY_RULE}")


def normal_type(store_type: str) -> str:
    """The canonical name of a store type (the registry in :mod:`kvcli.store` decides)."""
    from kvcli.errors import StoreError
    from kvcli.store import resolve

    try:
        return resolve(store_type).name
    except StoreError as error:
        raise SessionError(str(error)) from None


def check_options(store_type: str, options: dict[str, Any]) -> None:
    from kvcli.store import REGISTRY

    allowed = REGISTRY[store_type].session_options
    for option in options:
        if option not in allowed:
            takes = f" (it takes {', '.join(allowed)})" if allowed else ""
            raise bad_param(SessionError, option, f"does not apply to the {store_type!r} store{takes}")


def check_store_request(store_type: str, options: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """Normalise and check a requested store type and its options."""
    kind = normal_type(store_type)
    given = {k: v for k, v in (options or {}).items() if v is not None}
    check_options(kind, given)
    return kind, given


def python_spec(spec: str) -> tuple[str, str] | None:
    """``(path, function)`` of a ``python:PATH:FUNC`` spec, else None."""
    name, sep, rest = spec.partition(":")
    if name.strip().lower() != "python" or not sep:
        return None
    path, sep, function = rest.rpartition(":")
    if not sep or not path or not function:
        return None
    return path, function


def absolute_python_spec(spec: str) -> str:
    """A ``python:`` spec with its path resolved now, against the caller's directory."""
    python = python_spec(spec)
    if python is None:
        return spec
    return f"python:{Path(python[0]).expanduser().resolve()}:{python[1]}"


def is_local_address(address: str) -> bool:
    """Whether a Ray address stays on this machine: ``auto``/``local``, a loopback host, or
    an address of this machine's own interfaces (Ray names a local cluster by the node's
    IP when the machine has a network, by 127.0.0.1 when it has none)."""
    import ipaddress
    import socket

    text = address.strip()
    if text.lower() in ("auto", "local"):
        return True
    if "://" in text:
        text = text.split("://", 1)[1]
    host = text.rsplit("@", 1)[-1]
    if host.startswith("["):  # [::1]:6379
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    host = host.split("/", 1)[0]
    if host.lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    if ip.is_loopback:
        return True
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        try:
            probe.bind((str(ip), 0))  # only an address of this machine can be bound
        except OSError:
            return False
    return True
