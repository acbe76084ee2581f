"""The exceptions kvcli raises on bad input.

Every message is one line that names what is wrong (the key, the file) and how to fix it.
The CLI prints ``str(error)`` in red and exits 1; anything that is not a :class:`KVCliError`
is a bug and keeps its traceback.
"""

from __future__ import annotations


class KVCliError(Exception):
    """Base class of every user-facing kvcli error."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else self.__class__.__name__


class StoreError(KVCliError):
    """A KVStore operation was given input it cannot apply."""


class UnknownKeyError(StoreError, KeyError):
    """A key was pushed or pulled before ``init``."""


class KeyTypeError(StoreError, TypeError):
    """A key is not an int or str, or a store mixes int and str keys."""


class ShapeMismatchError(StoreError, ValueError):
    """A pushed or pulled array's shape differs from the stored one."""


class DTypeMismatchError(StoreError, TypeError):
    """A pushed or pulled array's dtype differs from the stored one."""


class ArityError(StoreError, ValueError):
    """Lists of keys, values or outputs do not pair up."""


class UnsupportedError(StoreError, ValueError):
    """An MXNet feature kvcli does not provide for this store (a store type, a capability,
    gradient compression on ``local``); the message names what to use instead."""


class UpdaterError(KVCliError, ValueError):
    """An updater spec does not parse, or its code cannot be loaded."""


class OptimizerStateError(KVCliError, ValueError):
    """Optimizer state cannot be saved or loaded."""


class DeviceError(StoreError, RuntimeError):
    """A device worker process failed or could not be started."""


class DistributedError(StoreError, RuntimeError):
    """The distributed store failed (Ray missing, a worker died, a timeout)."""


class SessionError(KVCliError):
    """The on-disk session cannot be read, locked or written."""


class ValueLanguageError(KVCliError, ValueError):
    """A CLI value expression does not parse or is not allowed."""


class SymbolError(KVCliError, ValueError):
    """A symbol JSON file or a graph built in Python is malformed."""


class ShapeInferenceError(SymbolError):
    """Shapes given or inferred for a graph conflict."""


class GraphvizMissingError(SymbolError):
    """graphviz's ``dot`` program is not installed (the .dot source was written instead)."""
