"""What the viewer page carries of a ``.params`` file: the check, each tensor's statistics and
its values (the first :data:`DEFAULT_VALUES` of each, or as many as asked, or all).

Values travel as base64 of little-endian numbers in an exact encoding per dtype: float16 and
float32 as ``f4`` (float16 is exact in float32), float64 as ``f8``, bool and integers up to 32
bits as ``i4``, 64-bit integers as ``i8`` (read with ``BigInt`` in the page, so no digit is
lost). The page decodes one tensor when it is first shown and pages through its values.
"""

from __future__ import annotations

import base64
import os
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from kvcli.symbol.params import ParamsCheck

from kvcli.symbol.params import DEFAULT_VALUES as DEFAULT_VALUES  # declared once, beside the reader

_ENCODINGS = (("f", 2, "f4", "<f4"), ("f", 4, "f4", "<f4"), ("f", 8, "f8", "<f8"),
              ("b", 1, "i4", "<i4"), ("i", 1, "i4", "<i4"), ("i", 2, "i4", "<i4"), ("i", 4, "i4", "<i4"),
              ("u", 1, "i4", "<i4"), ("u", 2, "i4", "<i4"), ("i", 8, "i8", "<i8"))


def encode_values(value: "np.ndarray", limit: Optional[int]) -> Optional[dict[str, Any]]:
    """The first ``limit`` values of ``value`` (``None``: all) for the page, or ``None`` for a
    dtype without an exact encoding (uint32/uint64, complex): the page then says so."""
    import numpy as np

    flat = np.asarray(value).reshape(-1)
    for kind, size, name, wire in _ENCODINGS:
        if flat.dtype.kind == kind and flat.dtype.itemsize == size:
            part = flat if limit is None else flat[:limit]
            data = np.ascontiguousarray(part, dtype=wire).tobytes()
            return {"enc": name, "n": int(part.size), "b64": base64.b64encode(data).decode("ascii")}
    return None


def params_data(check: "ParamsCheck", values: Optional[int] = DEFAULT_VALUES) -> dict[str, Any]:
    """What the page shows of a ``--params`` file or a session's weights: the check (naming
    the file, never its folder), per tensor its statistics, its values (``values`` per
    tensor, ``None``: all) and, for a session's, its key's version."""
    from kvcli.symbol.params import tensor_stats

    file = os.path.basename(check.source)  # the page names no folder of the machine it was made on
    out: dict[str, Any] = {
        "file": file, "ok": check.ok, "matched": check.matched, "unchecked": check.unchecked,
        "expected": check.expected, "lines": check.lines(file)[:50],
        "problems": {p.name: p.text for p in check.problems},
        "nonfinite": dict(check.nonfinite), "nonfinite_line": check.nonfinite_line(f"Weights {file}"),
        "tensors": {name: tensor_stats(t.value) for name, t in check.tensors.items()},
        "values": {}, "limit": values, "versions": dict(check.versions)}
    if values is None or values > 0:
        for name, tensor in check.tensors.items():
            encoded = encode_values(tensor.value, values)
            if encoded is not None:
                out["values"][name] = encoded
    return out
