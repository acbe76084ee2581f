"""Write ``mxnet_names_reference.json``: what real MXNet 1.9.1 gives for the names of its API
that real code imports and kvcli.mx provides besides the KVStore and optimizers: ``nd.topk``
on random inputs (seeded; shapes, dtypes, axes, k, every ``ret_typ``, ascending or not, equal
values where MXNet's order of them is defined), ``nd.empty(..., stype=)``, ``mx.np_shape`` /
``is_np_shape``, ``Context.default_ctx``, ``mx.base`` (``mx_real_t``, the type tuples,
``NotImplementedForSymbol``'s message) and ``mx.__version__``.
``tests/mx/test_names.py`` replays them on kvcli.mx.

Run with MXNet's own interpreter (kvcli never imports MXNet)::

    $MXNET_PYTHON tests/data/make_mxnet_names_reference.py
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).resolve().with_name("mxnet_names_reference.json")
SEED = 20250301
DTYPES = ("float32", "float16", "float64", "int32", "int64", "int8", "uint8")


def _encode(array: np.ndarray) -> dict:
    """An array exactly: dtype, shape and the bytes as hex (NaN, -0.0 and float16 kept)."""
    return {"dtype": str(array.dtype), "shape": list(array.shape), "hex": np.ascontiguousarray(array).tobytes().hex()}


def _topk_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for i in range(240):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(s) for s in rng.integers(1, 7, size=ndim))
        dtype = DTYPES[i % len(DTYPES)]
        size = int(np.prod(shape))
        ties = i % 3 == 0
        if ties:  # few distinct values: many equal ones
            values = rng.integers(0, 3, size=size).astype(np.float64)
        else:  # distinct values (a permutation), so every order is defined
            values = rng.permutation(size).astype(np.float64)
            if dtype.startswith("float"):
                values = values * 0.37 - size / 5
        if dtype == "int8" or dtype == "uint8":
            values = np.mod(values, 100)
            if not ties and size > 100:
                continue
        data = values.reshape(shape).astype(dtype)
        if not ties and dtype.startswith("float") and size > 2:
            data.flat[0], data.flat[-1] = np.inf, -np.inf  # edge values, still distinct
        axis = [None, -1, 0, ndim - 1][int(rng.integers(0, 4))]
        n = size if axis is None else shape[axis]
        k = int(rng.choice([1, 2, n, 0, -1, int(rng.integers(1, n + 1))]))
        if k > n:
            k = n
        kk = n if k <= 0 else k
        ret_typ = ("indices", "value", "mask", "both")[int(rng.integers(0, 4))]
        is_ascend = bool(rng.integers(0, 2))
        index_dtype = ("float32", "int32", "int64", "float16")[int(rng.integers(0, 4))]
        # MXNet's order of equal values is defined where it runs a full sort of at most 16
        # elements (its C++ library's insertion sort, which keeps their order)
        order_defined = not ties or (n <= 16 and kk * 8 > n)
        if ties and not order_defined:
            ret_typ = "value"  # the values do not depend on the order of equal ones
        kwargs = {"axis": axis, "k": k, "ret_typ": ret_typ, "is_ascend": is_ascend, "dtype": index_dtype}
        out = mx.nd.topk(mx.nd.array(data, dtype=dtype), **kwargs)
        outs = out if isinstance(out, list) else [out]
        cases.append({"data": _encode(data), "kwargs": kwargs, "ties": ties,
                      "outputs": [_encode(o.asnumpy()) for o in outs]})
    return cases


def main() -> None:
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(SEED)
    doc = {"mxnet_version": mx.__version__, "seed": SEED, "topk": _topk_cases(rng)}
    doc["empty"] = {}
    for stype in ("default", "row_sparse", "csr"):
        a = mx.nd.empty((3, 4), stype=stype)
        doc["empty"][stype] = {"stype": a.stype, "shape": list(a.shape), "dtype": np.dtype(a.dtype).name,
                               "type": type(a).__name__}
    doc["np_shape"] = {"is_np_shape": mx.is_np_shape(), "util_is_np_shape": mx.util.is_np_shape(),
                       "set_np_shape_false_returns": mx.util.set_np_shape(False)}
    with mx.np_shape(False):
        doc["np_shape"]["inside_np_shape_false"] = mx.is_np_shape()
    doc["context"] = {"default_ctx": str(mx.context.Context.default_ctx)}
    base = mx.base
    doc["base"] = {
        "mx_real_t": np.dtype(base.mx_real_t).name,
        "numeric_types": [t.__name__ for t in base.numeric_types],
        "integer_types": [t.__name__ for t in base.integer_types],
        "string_types": [t.__name__ for t in base.string_types],
        "not_implemented_for_symbol": str(base.NotImplementedForSymbol(np.sum, "sum", 1, "x")),
        "not_implemented_plain": str(base.NotImplementedForSymbol(np.sum, None)),
        "not_supported_for_sparse": str(base.NotSupportedForSparseNDArray(np.sum, "sum", 1.0)),
        "error_bases": [c.__name__ for c in base.NotImplementedForSymbol.__mro__[1:3]],
    }
    doc["version"] = mx.__version__
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(doc['topk'])} topk cases)")


if __name__ == "__main__":
    main()
