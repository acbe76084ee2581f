"""One key of a session as the code holds it (:class:`KeyEntry`), and its two stored forms.

* A row of the database's ``keys`` table (:data:`kvcli.session.db.KEY_COLUMNS`): read by
  :meth:`KeyEntry.from_row`, written by :meth:`KeyEntry.row`, with no other form between.
* An entry of a ``manifest.json`` (an old session, an export): read by
  :meth:`KeyEntry.from_json`, written by :meth:`KeyEntry.to_json`.

Both readers check every field with :func:`kvcli.session.schema.check_key_fields` (the one
declaration of each field's check) and the key with :func:`kvcli.session.names.check_key`:
nothing stored is trusted.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from kvcli.arrays.kinds import BY_NAME
from kvcli.arrays.npyio import BytesBody
from kvcli.errors import KeyTypeError, ManifestProblem
from kvcli.session.files import check_npy, corrupted, file_body, read_npy
from kvcli.session.names import Key, check_key
from kvcli.session.schema import check_key_fields, check_key_object, short

if TYPE_CHECKING:  # numpy is imported where values are made: copying a checkpoint needs none of it
    import numpy as np


class KeyEntry:
    """What the manifest records about one key.

    Attributes:
        key, file, dtype, shape, version: the key, its value's file name, dtype, shape and
            how many writes it has had.
        spare: a file with an older value of the same shape and dtype, overwritten by the
            next write.
        residual: the gradient-compression residuals of the key (an .npz), once a
            compressed push ran.
        data: the value's bytes (little-endian, C order) when it is held in the database
            row (at most :data:`~kvcli.session.names.INLINE_BYTES`); ``file`` then only
            names the value.
    """

    # a plain class, not a dataclass: creating a dataclass costs a one-shot command ~0.4 ms
    __slots__ = ("key", "file", "dtype", "shape", "version", "spare", "residual", "data")

    def __init__(self, key: Key, file: str, dtype: str, shape: tuple[int, ...], version: int = 1,
                 spare: str | None = None, residual: str | None = None, data: bytes | None = None) -> None:
        self.key = key
        self.file = file
        self.dtype = dtype
        self.shape = shape
        self.version = version
        self.spare = spare
        self.residual = residual
        self.data = data

    def __repr__(self) -> str:
        where = f"{len(self.data)} bytes in the row" if self.data is not None else self.file
        return f"KeyEntry({self.key!r}, {where}, {self.dtype} {tuple(self.shape)}, version {self.version})"

    @property
    def inline(self) -> bool:
        """Whether the value is held in the key's row rather than in a file."""
        return self.data is not None

    def files_row(self) -> tuple[str | None, str | None, str | None, str, tuple[int, ...]]:
        """The files this entry names and its layout: ``(file, spare, residual, dtype, shape)``,
        ``file`` None for a value held in the row (no file to keep or remove)."""
        return None if self.inline else self.file, self.spare, self.residual, self.dtype, tuple(self.shape)

    def value(self, data_folder: Path) -> np.ndarray:
        """The committed value: decoded from the row, or read from its file in ``data_folder``."""
        if self.data is not None:
            return self.body(data_folder).read()
        return read_npy(data_folder / self.file, self.dtype, tuple(self.shape))

    def body(self, data_folder: Path) -> Any:
        """The committed value as a body (:class:`kvcli.arrays.npyio.FileBody`): its bytes, to
        copy into another file without numpy (a file's checked first, as :meth:`check_value`)."""
        if self.data is not None:
            return BytesBody(self.data, BY_NAME[self.dtype], tuple(self.shape))
        return file_body(data_folder / self.file, self.dtype, tuple(self.shape))

    def check_value(self, data_folder: Path) -> None:
        """Refuse a damaged value file (a row's bytes were checked when the row was read)."""
        if self.data is None:
            check_npy(data_folder / self.file, self.dtype, tuple(self.shape))

    def hold(self, value: Any) -> None:
        """Hold ``value`` (a numpy array or a body, of this entry's dtype and shape) in the row
        (the caller gives the value its new name in ``file``)."""
        if hasattr(value, "little_bytes"):  # a body: its bytes are the row's already
            self.data = value.little_bytes()
        else:
            import numpy as np

            self.data = np.ascontiguousarray(value, dtype=BY_NAME[self.dtype].little).tobytes()
        self.spare = None

    @property
    def nbytes(self) -> int:
        """Bytes of the value (exact: math.prod, not numpy's, costs a 299-key checkpoint 5 ms less)."""
        return self.size * BY_NAME[self.dtype].itemsize

    @property
    def size(self) -> int:
        """Elements of the value."""
        return math.prod(self.shape)

    @property
    def signature(self) -> tuple[str, int]:
        """What identifies this committed value (files are reused, versions are not)."""
        return self.file, self.version

    # ------------------------------------------------------------------ the database row
    @classmethod
    def from_row(cls, row: tuple[Any, ...], path: Path) -> "KeyEntry":
        """The entry a ``keys`` row holds (:data:`~kvcli.session.db.KEY_COLUMNS`), every field
        checked; a damaged field is a corrupted-session error naming ``path``."""
        key, file, dtype, shape, version, spare, residual, data = row
        try:
            shape = json.loads(shape) if isinstance(shape, str) else shape
        except (ValueError, RecursionError):
            raise corrupted(path, f"key {str(key)[:40]!r} has a malformed shape") from None
        try:
            return cls._checked(key, file, dtype, shape, version, spare, residual, data)
        except ManifestProblem as problem:
            raise corrupted(path, str(problem)) from None

    def row(self) -> tuple[Any, ...]:
        """The entry as its ``keys`` row (:data:`~kvcli.session.db.KEY_COLUMNS`)."""
        return (self.key, self.file, self.dtype, json.dumps(list(self.shape)), self.version, self.spare,
                self.residual, self.data)

    # ------------------------------------------------------------------ the JSON entry
    @classmethod
    def from_json(cls, raw: Any) -> "KeyEntry":
        """The entry a ``manifest.json`` key object holds, every field checked.

        Raises:
            ManifestProblem: a field is missing, unknown or malformed (the caller names the file).
        """
        check_key_object(raw)
        return cls._checked(raw["key"], raw["file"], raw["dtype"], raw["shape"], raw["version"],
                            raw.get("spare"), raw.get("residual"), raw.get("data"))

    def to_json(self) -> dict[str, Any]:
        """The entry as a ``manifest.json`` key object (a value held in the row is not in it:
        an export writes it as the file ``file`` names)."""
        data: dict[str, Any] = {"key": self.key, "file": self.file, "dtype": self.dtype, "shape": list(self.shape),
                                "version": self.version}
        if self.spare:
            data["spare"] = self.spare
        if self.residual:
            data["residual"] = self.residual
        return data

    @classmethod
    def _checked(cls, key: Any, file: Any, dtype: Any, shape: Any, version: Any, spare: Any, residual: Any,
                 data: Any) -> "KeyEntry":
        check_key_fields(key, file, dtype, shape, version, spare, residual, data)
        try:
            key = check_key(key)
        except KeyTypeError as error:
            raise ManifestProblem(f"a key entry is malformed ({error})") from None
        return cls(key, file, dtype, tuple(shape), version, spare, residual, data)


def files_belong_to_one_place(entries: Iterable[KeyEntry], state: str | None) -> None:
    """No two places name one file: a key's spare that is another key's value (or a residual
    file that is the optimizer state) would be overwritten by the next push of the first.

    Raises:
        ManifestProblem: naming the file and its two uses.
    """
    owners: dict[str, str] = {}
    places = [(name, f"key {short(entry.key)}'s {what}")
              for entry in entries for name, what in ((entry.file, "value"), (entry.spare, "spare"),
                                                      (entry.residual, "residuals"))
              if name is not None]
    if state is not None:
        places.append((state, "the optimizer state"))
    for name, place in places:
        if name in owners:
            raise ManifestProblem(f"{place} names the file {name}, which is also {owners[name]}: each file has one use")
        owners[name] = place
