"""``mx.base``: the names of MXNet's ``mxnet.base`` that Python code uses: ``MXNetError`` (the
base of every kvcli error, so ``except mx.base.MXNetError`` catches what kvcli raises),
``NotImplementedForSymbol`` and ``NotSupportedForSparseNDArray``, ``py_str``, the number and
string type tuples, ``mx_real_t``, and ``__version__``: the MXNet version kvcli.mx follows."""

from __future__ import annotations

import numpy as np

from kvcli.errors import MXNetError, NotImplementedForSymbol, NotSupportedForSparseNDArray
from kvcli.mx.scope import guard as _scope_guard

#: The MXNet release whose API kvcli.mx follows (``mx.__version__``: version checks in MXNet
#: code see 1.9.1; ``kvcli.__version__`` is kvcli's own).
__version__ = "1.9.1"

#: MXNet's default real type (float32), as ``mxnet.base.mx_real_t``.
mx_real_t = np.float32
#: The types MXNet treats as numbers, integers and strings (``isinstance(x, numeric_types)``).
numeric_types = (float, int, np.generic)
integer_types = (int, np.int32, np.int64)
string_types = (str,)


def py_str(value: bytes | str) -> str:
    """A C string from MXNet's library as a Python str (kvcli's are str already)."""
    return value.decode("utf-8") if isinstance(value, bytes) else value


__all__ = [
    "MXNetError", "NotImplementedForSymbol", "NotSupportedForSparseNDArray", "integer_types", "mx_real_t",
    "numeric_types", "py_str", "string_types",
]


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
