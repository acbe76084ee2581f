"""Record MXNet 1.9.1's sparse NDArrays on random inputs into mxnet_sparse_ops_reference.json:
every supported sparse function, method and operator, every constructor form of
``row_sparse_array`` / ``csr_matrix`` / ``nd.sparse.zeros`` / ``empty`` / ``array``, and
``.params`` files of sparse arrays (mxnet_params_sparse/).

Run with a Python that has mxnet 1.9.1 (and scipy, which MXNet's ``csr_matrix((data, (row,
col)))`` and ``nd.sparse.array(scipy_csr)`` need), never kvcli's own venv, from the repository root:

    $MXNET_PYTHON tests/data/make_mxnet_sparse_ops_reference.py

Inputs are seeded random matrices (several shapes; float32, float64, float16, int32, int64;
zeros, empty rows, negatives, -0.0, nan and inf) stored as raw bytes next to MXNet's results
(raw bytes too, so the replay in tests/sparse/test_sparse_ops_mxnet.py is bit for bit). Each
case is a Python expression over ``mx``, ``nd``, ``np``, ``x``, ``y`` (sparse, same shape and
dtype), ``d`` (dense, same shape and dtype), ``row``/``col`` (dense vectors) and ``lhs``/``rhs``
(dense matrices for ``dot``); MXNet's exception, when it raises, is recorded instead.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import mxnet as mx
import numpy as np

os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
warnings.simplefilter("ignore")
HERE = Path(__file__).resolve().parent
OUT = HERE / "mxnet_sparse_ops_reference.json"
PARAMS = HERE / "mxnet_params_sparse"
nd = mx.nd
rng = np.random.RandomState(33)

SHAPES = [(4, 5), (6, 3), (1, 4), (5, 1)]
DTYPES = ["float32", "float64", "float16", "int32", "int64"]
UNARY = ["abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "square", "sqrt", "sin", "tanh", "expm1",
         "log1p", "relu", "negative", "exp", "log", "log2", "log10", "cos", "sigmoid", "reciprocal",
         "arcsin", "arcsinh", "arctan", "arctanh", "tan", "sinh", "degrees", "radians", "cbrt", "cosh", "arccos",
         "arccosh", "rsqrt", "gamma", "gammaln"]
REDUCE = ["sum", "mean", "max", "min", "prod", "nansum", "nanprod", "argmax", "argmin"]
#: Cases for every input: (name, expression).
CASES = [
    *((f"nd.{f}", f"nd.{f}(x)") for f in UNARY),
    *((f"x.{f}()", f"x.{f}()") for f in UNARY if f != "negative"),
    *((f"nd.{f}", f"nd.{f}(x)") for f in REDUCE), ("nd.sum axis0", "nd.sum(x, axis=0)"),
    ("nd.sum axis1 keep", "nd.sum(x, axis=1, keepdims=True)"), ("nd.mean axis0", "nd.mean(x, axis=0)"),
    ("nd.norm", "nd.norm(x)"), ("nd.norm axis1", "nd.norm(x, axis=1)"), ("nd.norm ord1", "nd.norm(x, ord=1)"),
    ("x.sum()", "x.sum()"), ("x.norm()", "x.norm()"),
    ("x*2", "x * 2"), ("x/2", "x / 2"), ("2*x", "2 * x"), ("1/x", "1 / x"), ("x+1", "x + 1"), ("x-1", "x - 1"),
    ("1-x", "1 - x"), ("-x", "-x"), ("abs(x)", "abs(x)"), ("x**2", "x ** 2"), ("2**x", "2 ** x"), ("x%3", "x % 3"),
    ("x==y", "x == y"), ("x!=y", "x != y"), ("x>y", "x > y"), ("x<=y", "x <= y"), ("x==0", "x == 0"),
    ("x==1", "x == 1"), ("x!=0", "x != 0"), ("x>0", "x > 0"), ("x<0", "x < 0"), ("x>=0", "x >= 0"),
    ("x<1", "x < 1"), ("x==d", "x == d"), ("d<x", "d < x"),
    ("x+y", "x + y"), ("x-y", "x - y"), ("x*y", "x * y"), ("x/y", "x / y"), ("x+d", "x + d"), ("x-d", "x - d"),
    ("x*d", "x * d"), ("d*x", "d * x"), ("d+x", "d + x"), ("d-x", "d - x"), ("x/d", "x / d"), ("d/x", "d / x"),
    ("elemwise_add", "nd.elemwise_add(x, y)"), ("elemwise_sub", "nd.elemwise_sub(x, y)"),
    ("elemwise_mul", "nd.elemwise_mul(x, y)"), ("elemwise_div", "nd.elemwise_div(x, y)"),
    ("elemwise_add xd", "nd.elemwise_add(x, d)"), ("elemwise_mul dx", "nd.elemwise_mul(d, x)"),
    ("sparse.elemwise_add", "nd.sparse.elemwise_add(x, y)"), ("nd.add", "nd.add(x, y)"),
    ("nd.multiply xd", "nd.multiply(x, d)"), ("nd.multiply 3", "nd.multiply(x, 3)"),
    ("broadcast_mul row", "nd.broadcast_mul(x, row)"), ("broadcast_mul col", "nd.broadcast_mul(x, col)"),
    ("broadcast_div row", "nd.broadcast_div(x, row)"), ("broadcast_add row", "nd.broadcast_add(x, row)"),
    ("maximum", "nd.maximum(x, y)"), ("minimum 0", "nd.minimum(x, 0)"),
    ("add_n", "nd.add_n(x, y, x)"), ("ElementWiseSum", "nd.ElementWiseSum(x, y)"),
    ("dot", "nd.sparse.dot(x, rhs)"), ("dot T", "nd.sparse.dot(x, lhs, transpose_a=True)"),
    ("dot dense csr", "nd.dot(lhs.T, x)"), ("dot dense csrT", "nd.sparse.dot(rhs.T, x, transpose_b=True)"),
    ("dot xT", "nd.dot(x, rhs.T, transpose_b=True)"),
    ("retain", "nd.sparse.retain(x, nd.array(sorted({0, x.shape[0] - 1})))"),
    ("retain method", "x.retain(nd.array([x.shape[0] - 1], dtype='int64'))"),
    ("slice rows", "nd.sparse.slice(x, begin=(1,), end=(3,))"), ("slice 2d", "nd.sparse.slice(x, begin=(0, 1), end=(3, None))"),
    ("slice neg", "nd.sparse.slice(x, begin=(-2,), end=(None,))"),
    ("concat 0", "nd.sparse.concat(x, y, dim=0)"), ("concat 1", "nd.concat(x, y, dim=1)"),
    ("take", "nd.take(x, nd.array([2, 0, 0]))"), ("take clip", "nd.take(x, nd.array([7, -1]))"),
    ("take wrap", "nd.take(x, nd.array([7, -1]), mode='wrap')"), ("take axis1", "nd.take(x, nd.array([0]), axis=1)"),
    ("cast default", "nd.sparse.cast_storage(x, 'default')"), ("cast same", "nd.sparse.cast_storage(x, x.stype)"),
    ("tostype default", "x.tostype('default')"),
    ("tostype other", "x.tostype('csr' if x.stype == 'row_sparse' else 'row_sparse')"),
    ("T", "x.T"), ("transpose", "nd.transpose(x)"), ("broadcast_to", "nd.broadcast_to(x, x.shape)"),
    ("x.broadcast_to", "x.broadcast_to(x.shape)"), ("zeros_like", "nd.zeros_like(x)"), ("ones_like", "nd.ones_like(x)"),
    ("clip", "nd.clip(x, -1, 1)"), ("clip positive", "nd.clip(x, 1, 2)"), ("x.clip", "x.clip(-2, 0)"),
    ("copy", "x.copy()"), ("astype", "x.astype('float64')"), ("astype int", "x.astype('int32')"),
    ("x[:]", "x[:]"), ("x[1:3]", "x[1:3]"), ("x[0]", "x[0]"), ("x[-1]", "x[-1]"), ("x[0, 1]", "x[0, 1]"),
    ("x[::2]", "x[::2]"), ("reshape", "x.reshape((-1,))"), ("nd.reshape", "nd.reshape(x, shape=(-1,))"),
    ("size", "x.size"), ("asscalar", "x.asscalar()"), ("ndim", "x.ndim"), ("len", "len(x)"),
    ("expand_dims", "x.expand_dims(0)"), ("flatten", "nd.flatten(x)"), ("where", "nd.where(x, x, d)"),
    ("one_hot", "nd.one_hot(x, 3)"), ("slice_axis", "nd.slice_axis(x, axis=0, begin=0, end=1)"),
    ("split", "nd.split(x, num_outputs=1, axis=0)"), ("stack", "nd.stack(x, y)"),
    ("nd.array", "nd.array(x)"), ("nd.array f16", "nd.array(x, dtype='float16')"),
    ("sparse.array", "nd.sparse.array(x)"), ("zeros out", "nd.zeros(x.shape, out=x.copy())"),
    ("ones out", "nd.ones(x.shape, out=x.copy())"), ("sqrt out", "nd.sqrt(d, out=x.copy())"),
    ("exp out", "nd.exp(d, out=x.copy())"), ("iadd", "(lambda z: (z.__iadd__(y), z)[1])(x.copy())"),
    ("iadd dense", "(lambda z: (z.__iadd__(d), z)[1])(x.copy())"), ("imul", "(lambda z: (z.__imul__(2), z)[1])(x.copy())"),
    ("isub", "(lambda z: (z.__isub__(y), z)[1])(x.copy())"), ("idiv", "(lambda z: (z.__itruediv__(2), z)[1])(x.copy())"),
    ("setitem dense", "(lambda z: (z.__setitem__(slice(None), d), z)[1])(x.copy())"),
    ("setitem sparse", "(lambda z: (z.__setitem__(slice(None), y), z)[1])(x.copy())"),
    ("copyto dense", "x.copyto(d.copy())"), ("copyto same", "x.copyto(y.copy())"),
    ("dense copyto", "d.copyto(x.copy())"), ("copyto ctx", "x.copyto(mx.cpu(1))"),
    ("slice dense", "nd.slice(d, begin=(0, 1), end=(2, None))"), ("x.slice", "x.slice(begin=(0,), end=(1,))"),
    ("x[-2]", "x[-2]"), ("x[-1:]", "x[-1:]"), ("x[:9]", "x[:9]"),
    ("full out", "nd.full(x.shape, 2, out=x.copy())"), ("ones out dtype", "nd.ones(x.shape, dtype=x.dtype, out=x.copy())"),
    ("zeros out dtype", "nd.zeros(x.shape, dtype=x.dtype, out=x.copy())"),
    ("norm axis0", "nd.norm(x, axis=0)"), ("norm axis1 keepdims", "nd.norm(x, axis=1, keepdims=True)"),
    ("norm axis()", "nd.norm(x, axis=())"), ("norm axis-1", "nd.norm(x, axis=-1)"),
    ("retain bad keyword", "nd.sparse.retain(x, nd.array([0]), invalid_arg=1)"),
    ("x*0", "x * 0"), ("x*0 copyto", "(x * 0).copyto(x.copy())"), ("imul 0", "(lambda z: (z.__imul__(0), z)[1])(x.copy())"),
    ("elemwise_sub xx", "nd.elemwise_sub(x, x)"), ("x-x", "x - x"),
]


#: Cases that divide by values that may be 0: with an integer dtype MXNet's process dies of
#: SIGFPE (integer division by zero), so they are recorded for float dtypes only.
DIVIDING = {"1/x", "x/y", "x/d", "d/x", "elemwise_div", "nd.reciprocal", "x.reciprocal()", "broadcast_div row", "x%3"}


def enc(array: np.ndarray) -> dict:
    array = np.ascontiguousarray(array)
    return {"dtype": array.dtype.name, "shape": list(array.shape), "b64": base64.b64encode(array.tobytes()).decode()}


def random_dense(shape, dtype) -> np.ndarray:
    values = rng.randint(-4, 5, shape).astype(np.float64) * rng.choice([0.5, 1.0, 1.25], shape)
    values[rng.uniform(size=shape) < 0.45] = 0  # sparse
    if shape[0] > 2:
        values[rng.randint(shape[0])] = 0  # an empty row
    if np.dtype(dtype).kind == "f":
        specials = [np.nan, np.inf, -np.inf, -0.0, 1e-3]
        for special in specials[: rng.randint(0, 4)]:
            values[tuple(rng.randint(s) for s in shape)] = special
    return values.astype(dtype)


def result_of(value) -> dict:
    if isinstance(value, mx.nd.NDArray):
        out = {"type": type(value).__name__, "stype": value.stype, "dtype": np.dtype(value.dtype).name,
               "shape": list(value.shape), "context": str(value.context), "dense": enc(value.asnumpy())}
        if value.stype == "csr":
            nnz = int(value.indptr.asnumpy()[-1])
            out.update(indptr=value.indptr.asnumpy().tolist(), indices=value.indices.asnumpy()[:nnz].tolist(),
                       data=enc(value.data.asnumpy()[:nnz]))
        elif value.stype == "row_sparse":
            out.update(indices=value.indices.asnumpy().tolist(), data=enc(value.data.asnumpy()))
        return out
    if isinstance(value, (list, tuple)):
        return {"type": "list", "items": [result_of(v) for v in value]}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return {"type": "python", "value": value}
    return {"type": type(value).__name__, "repr": repr(value)}


def error_of(error: BaseException) -> dict:
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    picked = [ln for ln in lines if "Check failed" in ln or "rror" in ln] or lines or [""]
    return {"error": type(error).__name__, "message": picked[-1][:300]}


def run(expr: str, env: dict) -> dict:
    if os.environ.get("TRACE"):
        print(expr, flush=True)
    try:
        value = eval(expr, dict(env))  # noqa: S307 - our own expressions, on MXNet
        mx.nd.waitall()
        return result_of(value)
    except Exception as error:  # noqa: BLE001 - MXNet's refusal is the recorded answer
        return error_of(error)


def operands(shape, dtype) -> dict:
    x, y, d = (random_dense(shape, dtype) for _ in range(3))
    rows, cols = shape
    other = {"row": random_dense((1, cols), dtype), "col": random_dense((rows, 1), dtype),
             "rhs": rng.uniform(-2, 2, (cols, 3)).astype(dtype), "lhs": rng.uniform(-2, 2, (rows, 2)).astype(dtype)}
    return {"x": x, "y": y, "d": d, **other}


def record_ops(shapes: list) -> list:
    cases = []
    for shape in shapes:
        for dtype in DTYPES:
            raw = operands(shape, dtype)
            for stype in ("csr", "row_sparse"):
                env = {"mx": mx, "nd": nd, "np": np, **{k: nd.array(v, dtype=dtype) for k, v in raw.items()}}
                env["x"], env["y"] = env["x"].tostype(stype), env["y"].tostype(stype)
                results = {name: run(expr, env) for name, expr in CASES
                           if not (name in DIVIDING and np.dtype(dtype).kind in "iu")}
                cases.append({"shape": list(shape), "dtype": dtype, "stype": stype,
                              "inputs": {k: enc(v) for k, v in raw.items()}, "results": results})
    return cases


D = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)
#: Constructor forms: (name, expression).
CONSTRUCTORS = [
    ("rsp (data, indices) shape", "S.row_sparse_array((D, [0, 2]), shape=(4, 4))"),
    ("rsp (data, indices)", "S.row_sparse_array((D, [0, 2]))"),
    ("rsp shape rows < max index", "S.row_sparse_array((D, [0, 2]), shape=(2, 4))"),
    ("rsp shape cols differ", "S.row_sparse_array((D, [0, 2]), shape=(4, 3))"),
    ("rsp shape cols bigger", "S.row_sparse_array((D, [0, 2]), shape=(4, 5))"),
    ("rsp shape ndim differs", "S.row_sparse_array((D, [0, 2]), shape=(4, 4, 1))"),
    ("rsp indices count differs", "S.row_sparse_array((D, [0, 1, 2]), shape=(4, 4))"),
    ("rsp unsorted indices", "S.row_sparse_array((D, [2, 0]), shape=(4, 4))"),
    ("rsp repeated indices", "S.row_sparse_array((D, [1, 1]), shape=(4, 4))"),
    ("rsp empty no shape", "S.row_sparse_array((np.zeros((0, 4)), []))"),
    ("rsp empty with shape", "S.row_sparse_array((np.zeros((0, 4)), []), shape=(3, 4))"),
    ("rsp empty list data", "S.row_sparse_array(([], []), shape=(3, 4))"),
    ("rsp lists", "S.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2))"),
    ("rsp numpy int64", "S.row_sparse_array((np.array([[1, 2], [3, 4]]), np.array([1, 4])), shape=(6, 2))"),
    ("rsp numpy float64", "S.row_sparse_array((np.ones((1, 3)), [0]), shape=(4, 3))"),
    ("rsp NDArray float16", "S.row_sparse_array((nd.ones((1, 3), dtype='float16'), nd.array([0])), shape=(4, 3))"),
    ("rsp dtype", "S.row_sparse_array((D, [0, 2]), shape=(4, 4), dtype='int32')"),
    ("rsp float indices", "S.row_sparse_array((D, [0.0, 2.0]), shape=(4, 4))"),
    ("rsp 1-d", "S.row_sparse_array(([1.0, 2.0], [0, 2]), shape=(4,))"),
    ("rsp 3-d", "S.row_sparse_array((np.ones((1, 2, 2)), [1]), shape=(3, 2, 2))"),
    ("rsp ctx", "S.row_sparse_array((D, [0, 2]), shape=(4, 4), ctx=mx.cpu(2))"),
    ("rsp shape 2", "S.row_sparse_array((3, 4))"), ("rsp shape 3", "S.row_sparse_array((3, 4, 2))"),
    ("rsp shape 1", "S.row_sparse_array((3,))"), ("rsp shape mismatch", "S.row_sparse_array((3, 4), shape=(3, 5))"),
    ("rsp shape same", "S.row_sparse_array((3, 4), shape=(3, 4))"),
    ("rsp shape dtype", "S.row_sparse_array((3, 4), dtype='float64')"),
    ("rsp from rsp", "S.row_sparse_array(nd.array(D).tostype('row_sparse'))"),
    ("rsp from rsp shape mismatch", "S.row_sparse_array(nd.array(D).tostype('row_sparse'), shape=(3, 4))"),
    ("rsp from rsp dtype", "S.row_sparse_array(nd.array(D).tostype('row_sparse'), dtype='float16')"),
    ("rsp from csr", "S.row_sparse_array(nd.array(D).tostype('csr'))"),
    ("rsp from numpy", "S.row_sparse_array(np.array([[0, 0], [1, 2.5]]))"),
    ("rsp from numpy shape mismatch", "S.row_sparse_array(np.array([[0, 0], [1, 2.5]]), shape=(3, 2))"),
    ("rsp from list", "S.row_sparse_array([[0, 0], [1, 2]])"),
    ("rsp from NDArray int32", "S.row_sparse_array(nd.array([[0, 0], [1, 2]], dtype='int32'))"),
    ("rsp from list ctx", "S.row_sparse_array([[0, 0], [1, 2]], ctx=mx.cpu(1))"),
    ("csr definition shape", "S.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))"),
    ("csr definition", "S.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]))"),
    ("csr numpy int", "S.csr_matrix((np.array([7, 8, 9]), np.array([0, 2, 1]), np.array([0, 2, 2, 3])), shape=(3, 4))"),
    ("csr rows mismatch", "S.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(4, 4))"),
    ("csr columns too few", "S.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 2))"),
    ("csr empty no shape", "S.csr_matrix(([], [], [0, 0, 0]))"),
    ("csr empty shape", "S.csr_matrix(([], [], [0, 0, 0]), shape=(2, 5))"),
    ("csr 1-d shape", "S.csr_matrix(([7], [0], [0, 1]), shape=(1,))"),
    ("csr unsorted columns", "S.csr_matrix(([7, 8], [2, 0], [0, 2]), shape=(1, 4))"),
    ("csr repeated columns", "S.csr_matrix(([7, 8], [1, 1], [0, 2]), shape=(1, 4))"),
    ("csr data longer", "S.csr_matrix(([7, 8, 9], [0, 1], [0, 2]), shape=(1, 4))"),
    ("csr dtype", "S.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4), dtype='float64')"),
    ("csr numpy float16", "S.csr_matrix((np.array([7, 8, 9], np.float16), [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))"),
    ("csr 2-d data", "S.csr_matrix(([[7, 8, 9]], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))"),
    ("csr shape", "S.csr_matrix((2, 5))"), ("csr shape mismatch", "S.csr_matrix((2, 5), shape=(2, 4))"),
    ("csr shape dtype", "S.csr_matrix((2, 5), dtype='int64')"), ("csr 4-tuple", "S.csr_matrix((1, 2, 3, 4))"),
    ("csr 1-tuple", "S.csr_matrix((1,))"),
    ("csr coo", "S.csr_matrix(([1.0, 2.0], ([0, 1], [1, 0])), shape=(2, 2))"),
    ("csr coo repeated", "S.csr_matrix(([1.0, 2.0, 3.0], ([0, 1, 0], [1, 0, 1])))"),
    ("csr coo float32", "S.csr_matrix((np.array([1.5, 2.0], np.float32), ([1, 0], [2, 0])), shape=(3, 3))"),
    ("csr coo dtype", "S.csr_matrix(([1.0, 2.0], ([0, 1], [1, 0])), shape=(2, 2), dtype='float16')"),
    ("csr from csr", "S.csr_matrix(nd.array(D).tostype('csr'))"),
    ("csr from csr shape mismatch", "S.csr_matrix(nd.array(D).tostype('csr'), shape=(2, 5))"),
    ("csr from csr dtype ctx", "S.csr_matrix(nd.array(D).tostype('csr'), dtype='float64', ctx=mx.cpu(1))"),
    ("csr from rsp", "S.csr_matrix(nd.array(D).tostype('row_sparse'))"),
    ("csr from numpy", "S.csr_matrix(np.array([[0, 1.5], [0, 0]]))"),
    ("csr from numpy shape mismatch", "S.csr_matrix(np.array([[0, 1.5], [0, 0]]), shape=(2, 3))"),
    ("csr from list", "S.csr_matrix([[0, 1], [2, 0]])"),
    ("csr from NDArray int32", "S.csr_matrix(nd.array([[0, 1], [2, 0]], dtype='int32'))"),
    ("csr from 1-d", "S.csr_matrix(np.array([0, 1, 2]))"), ("csr from 3-d", "S.csr_matrix(np.ones((2, 2, 2)))"),
    ("zeros csr", "S.zeros('csr', (2, 3))"), ("zeros rsp", "S.zeros('row_sparse', (2, 3))"),
    ("zeros int shape", "S.zeros('row_sparse', 5)"), ("zeros default", "S.zeros('default', (2, 3))"),
    ("zeros unknown", "S.zeros('foo', (2, 3))"), ("zeros dtype", "S.zeros('csr', (2, 3), dtype='float16')"),
    ("zeros ctx", "S.zeros('row_sparse', (2, 3), ctx=mx.cpu(3))"), ("zeros rsp 3-d", "S.zeros('row_sparse', (2, 3, 4))"),
    ("empty csr", "S.empty('csr', (2, 3))"), ("empty default", "S.empty('default', (2, 3))"),
    ("empty int shape", "S.empty('row_sparse', 4)"),
    ("array rsp", "S.array(nd.array(D).tostype('row_sparse'))"),
    ("array csr dtype", "S.array(nd.array(D).tostype('csr'), dtype='float16')"),
    ("array csr ctx", "S.array(nd.array(D).tostype('csr'), ctx=mx.cpu(1))"),
    ("array dense", "S.array(nd.array(D))"), ("array numpy", "S.array(D)"), ("array list", "S.array([[1, 2]])"),
    ("array scipy", "S.array(spsp.csr_matrix(([3.0, 1.0], [2, 0], [0, 2, 2]), shape=(2, 3)))"),
    ("nd.array scipy", "nd.array(spsp.csr_matrix(([3.0, 1.0], [2, 0], [0, 2, 2]), shape=(2, 3)))"),
    ("nd.array scipy dtype", "nd.array(spsp.csr_matrix(([3.0, 1.0], [2, 0], [0, 2, 2]), shape=(2, 3)), dtype='float16')"),
    ("nd.zeros csr", "nd.zeros((2, 3), stype='csr')"),
    ("nd.zeros rsp f64", "nd.zeros((2, 3), stype='row_sparse', dtype='float64')"),
    ("tostype csr 1-d", "nd.array([1, 0]).tostype('csr')"),
    ("tostype rsp 3-d", "nd.array(np.arange(8).reshape(2, 2, 2)).tostype('row_sparse')"),
    ("tostype rsp nan", "nd.array([[np.nan, 0], [0, 0], [-0.0, 0]]).tostype('row_sparse')"),
    ("tostype csr nan -0", "nd.array([[np.nan, -0.0], [0, np.inf]]).tostype('csr')"),
    ("tostype csr empty", "nd.zeros((0, 3)).tostype('csr')"), ("tostype unknown", "nd.zeros((2, 3)).tostype('foo')"),
    ("cast csr to rsp", "nd.sparse.cast_storage(nd.array(D).tostype('csr'), 'row_sparse')"),
    ("cast 3-d csr", "nd.sparse.cast_storage(nd.ones((2, 2, 2)), 'csr')"),
    ("retain csr", "nd.sparse.retain(nd.array(D).tostype('csr'), nd.array([0]))"),
    ("dot float16", "nd.sparse.dot(nd.array(D, dtype='float16').tostype('csr'), nd.ones((4, 2), dtype='float16'))"),
    ("dot 1-d rhs", "nd.sparse.dot(nd.array(D).tostype('csr'), nd.ones((4,)))"),
]


#: Forms for which MXNet builds an invalid array without a word (and may corrupt its heap):
#: each is recorded in a process of its own.
UNSAFE = {"rsp shape rows < max index", "rsp unsorted indices", "rsp repeated indices", "csr rows mismatch",
          "csr columns too few", "csr unsorted columns", "csr repeated columns", "csr data longer",
          "rsp indices count differs", "rsp shape cols differ", "rsp shape cols bigger"}


def record_constructors(only: str | None = None) -> dict:
    try:
        import scipy.sparse as spsp
    except ImportError:
        raise SystemExit("install scipy next to mxnet: MXNet's csr_matrix((data, (row, col))) needs it") from None
    env = {"mx": mx, "nd": nd, "np": np, "S": nd.sparse, "D": D, "spsp": spsp}
    if only is not None:
        return {name: {"expr": expr, "result": run(expr, env)} for name, expr in CONSTRUCTORS if name == only}
    return {name: {"expr": expr, "result": run(expr, env)} for name, expr in CONSTRUCTORS if name not in UNSAFE}


def record_params() -> dict:
    """.params files of sparse arrays written by MXNet, and what MXNet reads back."""
    PARAMS.mkdir(exist_ok=True)
    arrays = {
        "csr_f32": nd.array(random_dense((4, 5), "float32")).tostype("csr"),
        "csr_f64_empty_rows": nd.array(np.array([[0, 0, 0], [1.5, 0, -2], [0, 0, 0]], np.float64)).tostype("csr"),
        "csr_int32": nd.array(random_dense((3, 6), "int32"), dtype="int32").tostype("csr"),
        "csr_nothing_stored": nd.sparse.zeros("csr", (2, 3)),
        "rsp_f32": nd.array(random_dense((5, 3), "float32")).tostype("row_sparse"),
        "rsp_f16_3d": nd.array(random_dense((3, 2), "float16").reshape(3, 2, 1), dtype="float16").tostype("row_sparse"),
        "rsp_nothing_stored": nd.sparse.zeros("row_sparse", (4, 2)),
        "csr_on_cpu2": nd.array(D, ctx=mx.cpu(2)).tostype("csr"),
    }
    files = {}
    for name, array in arrays.items():
        nd.save(str(PARAMS / f"{name}.params"), [array])
        files[f"{name}.params"] = {"kind": "list", "arrays": [result_of(a) for a in nd.load(str(PARAMS / f"{name}.params"))]}
    nd.save(str(PARAMS / "mixed_dict.params"), {"w": arrays["rsp_f32"], "x": arrays["csr_f32"], "b": nd.array([1.0, 2.0])})
    files["mixed_dict.params"] = {"kind": "dict", "arrays": {k: result_of(v) for k, v in
                                                            nd.load(str(PARAMS / "mixed_dict.params")).items()}}
    return files


def part(name: str) -> object:
    """One part of the record, computed in its own process: some invalid arrays MXNet builds
    silently corrupt its heap, which must not reach the next cases."""
    if name.startswith("ops"):
        return record_ops([SHAPES[int(name[3:])]])
    if name.startswith("ctor:"):
        return record_constructors(name[5:])
    return {"constructors": record_constructors, "params": record_params}[name]()


def in_subprocess(name: str) -> object:
    done = subprocess.run([sys.executable, __file__, "--part", name], capture_output=True, text=True, check=False)
    if done.returncode != 0 and name.startswith("ctor:"):  # MXNet built an invalid array and died reading it
        expr = dict(CONSTRUCTORS)[name[5:]]
        died = {"error": "crash", "message": f"MXNet's process died ({done.returncode})"}
        return {name[5:]: {"expr": expr, "result": died}}
    if done.returncode != 0:
        raise SystemExit(f"part {name} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--part"]:
        print(json.dumps(part(sys.argv[2])))
        return
    reference = {
        "mxnet": mx.__version__,
        "ndarray_attributes": sorted(n for n in dir(mx.nd.NDArray) if not n.startswith("_")),
        "sparse_names": sorted(n for n in dir(mx.nd.sparse) if not n.startswith("_")),
        "cases": CASES,
        "ops": [case for i in range(len(SHAPES)) for case in in_subprocess(f"ops{i}")],
        "constructors": {**in_subprocess("constructors"),
                         **{k: v for name in sorted(UNSAFE) for k, v in in_subprocess(f"ctor:{name}").items()}},
        "params": in_subprocess("params"),
    }
    OUT.write_text(json.dumps(reference, indent=0, sort_keys=False) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KiB), {len(reference['ops'])} inputs x {len(CASES)} cases")


if __name__ == "__main__":
    main()
