"""Keys as typed on the command line: ``3`` is an int key, ``fc1.weight`` a str key, and
``5,7,9`` a list of keys. The library checks keys (:func:`kvcli.session.check_key`); the
text form is the command line's own."""

from __future__ import annotations

import re

from kvcli.errors import KeyTypeError
from kvcli.session.names import Key, check_key

_INT_KEY_RE = re.compile(r"[0-9]{1,18}")


def parse_key(text: str) -> Key:
    """A key as typed on the command line: digits make an int key, else a checked str key."""
    if isinstance(text, str) and _INT_KEY_RE.fullmatch(text):
        return int(text)
    return check_key(text)


def parse_keys(text: str) -> list[Key]:
    """``"5,7,9"`` -> ``[5, 7, 9]`` (each checked); a key may not repeat."""
    keys = [parse_key(part) for part in text.split(",")] if text else [parse_key(text)]
    if len(set(keys)) != len(keys):
        raise KeyTypeError(f"key list {text!r} names a key twice: give each key once")
    return keys


__all__ = ["parse_key", "parse_keys"]
