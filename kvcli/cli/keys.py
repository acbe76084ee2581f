"""Keys as typed on the command line: ``3`` is an int key, ``fc1.weight`` a str key, and
``5,7,9`` a list of keys. The library checks keys (:func:`kvcli.session.check_key`); the
text form is the command line's own."""

from __future__ import annotations

import re

from kvcli.errors import KeyTypeError
from kvcli.session.names import Key, check_key

_INT_KEY_RE = re.compile(r"[0-9]{1,18}")
#: Other numbers (-1, 1.5, 1e3, +2, 19 digits): as str keys they would surprise (pull 1.5 after
#: init 1.5 works, but a script that pushes 1 and 1.0 gets two keys), so they are refused.
_NUMBER_RE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def parse_key(text: str) -> Key:
    """A key as typed on the command line: digits make an int key, else a checked str key;
    any other number (``-1``, ``1.5``) is refused rather than made a str key."""
    if isinstance(text, str) and _INT_KEY_RE.fullmatch(text):
        return int(text)
    if isinstance(text, str) and _NUMBER_RE.fullmatch(text):
        raise KeyTypeError(f"key {text!r} is a number but not an int key (int keys are whole numbers from 0 "
                           "to 999999999999999999): use one, or a name such as 'w1'")
    return check_key(text)


def parse_keys(text: str) -> list[Key]:
    """``"5,7,9"`` -> ``[5, 7, 9]`` (each checked); a key may not repeat."""
    keys = [parse_key(part) for part in text.split(",")] if text else [parse_key(text)]
    if len(set(keys)) != len(keys):
        raise KeyTypeError(f"key list {text!r} names a key twice: give each key once")
    return keys


__all__ = ["parse_key", "parse_keys"]
