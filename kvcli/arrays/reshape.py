"""MXNet's ``reshape`` special values, the one implementation behind ``nd.reshape`` /
``NDArray.reshape`` (:mod:`kvcli.mx.ndarray.ops`) and the symbol's ``Reshape`` shape rule
(:mod:`kvcli.symbol.shape_rules`).

``0`` copies a dimension, ``-1`` infers one, ``-2`` copies all that remain, ``-3`` merges
two, ``-4`` splits one into the next two values (one of them may be -1). ``reverse`` reads the
shape and the spec from the right, as MXNet's ``InferReshapeShape`` does: both are reversed
whole, so a ``-4`` group is written ``(a, b, -4)`` there. Unlike MXNet's operator the element
count must not change.
"""

from __future__ import annotations

import math
from typing import Sequence


def reshape_target(shape: Sequence[int], spec: Sequence[int], reverse: bool = False) -> tuple[int, ...]:
    """The shape MXNet's ``reshape`` makes of ``shape`` for ``spec``; a spec that does not fit
    raises ``ValueError`` with one line saying why (callers raise it as their own error)."""
    dims = [int(d) for d in shape]
    wanted = [int(d) for d in spec]
    if reverse:
        dims, wanted = dims[::-1], wanted[::-1]
    out: list[int] = []
    infer = -1
    src = 0
    i = 0
    try:
        while i < len(wanted):
            d = wanted[i]
            if d > 0:
                out.append(d)
                src += 1
            elif d == 0:
                out.append(dims[src])
                src += 1
            elif d == -1:
                if infer >= 0:
                    raise ValueError(f"{tuple(spec)} has -1 twice: only one dimension can be inferred")
                infer = len(out)
                out.append(1)
                src += 1
            elif d == -2:
                out.extend(dims[src:])
                src = len(dims)
            elif d == -3:
                out.append(dims[src] * dims[src + 1])
                src += 2
            elif d == -4:
                if i + 2 >= len(wanted):
                    raise ValueError(f"-4 in {tuple(spec)} must be followed by two dimensions")
                whole, left, right = dims[src], wanted[i + 1], wanted[i + 2]
                src += 1
                i += 2
                if left == -1 and right == -1:
                    raise ValueError(f"the two dimensions after -4 in {tuple(spec)} cannot both be -1")
                if (left == -1 and right <= 0) or (right == -1 and left <= 0):
                    raise ValueError(f"-4 in {tuple(spec)} splits {whole} into {left} x {right}: "
                                     "give the other dimension as a positive number")
                left = whole // right if left == -1 else left
                right = whole // left if right == -1 else right
                if left * right != whole:
                    raise ValueError(f"-4 in {tuple(spec)}: {left} x {right} does not split dimension {whole}")
                out.extend([left, right])
            else:
                raise ValueError(f"{d} is not a dimension nor one of MXNet's special values 0, -1, -2, -3, -4")
            i += 1
    except IndexError:
        raise ValueError(f"{tuple(spec)} refers to more dimensions than shape {tuple(shape)} has") from None
    size = math.prod(dims)
    if infer >= 0:
        rest = math.prod(out)  # out holds 1 where the -1 stands
        if rest == 0:
            raise ValueError(f"cannot infer the -1 of {tuple(spec)}: the other dimensions of shape "
                             f"{tuple(shape)} hold no elements")
        out[infer] = size // rest
    if reverse:
        out = out[::-1]
    if math.prod(out) != size:
        raise ValueError(f"cannot reshape shape {tuple(shape)} (size {size}) into {tuple(spec)} "
                         f"(shape {tuple(out)}): the sizes must be equal")
    return tuple(out)
