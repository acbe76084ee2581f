"""Record what MXNet 1.9.1's ``mx.nd`` does, for kvcli's own tests of ``kvcli.nd``.

Run with a Python that has mxnet 1.9.1 (from the repository root):

    $MXNET_PYTHON tests/data/make_mxnet_nd_reference.py

Writes
  tests/data/mxnet_nd_reference.json  -- each case: the code, MXNet's result (dtype, shape,
                                         values) or the exception class it raised
  tests/data/mxnet_params/*.params    -- files written by ``mx.nd.save``; their expected
                                         contents are in the JSON under "params"

The cases are code strings evaluated with ``mx``, ``nd`` and ``np`` bound, so the test runs
exactly the same code through ``kvcli.mx``. Nothing here is imported by kvcli.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import mxnet as mx
import numpy as np
from mxnet import nd

HERE = Path(__file__).resolve().parent
PARAMS_DIR = HERE / "mxnet_params"

#: Executed once before the cases; every case sees these names.
SETUP = """
a = nd.array([[1.0, -2.5, 3.25], [-0.5, 0.0, 4.0]])
b = nd.array([[2.0, 0.5, -1.0], [1.5, -3.0, 2.0]])
i = nd.array([[7, -3, 2], [0, 5, -8]], dtype='int32')
j = nd.array([[2, 2, -3], [1, 4, 3]], dtype='int32')
v = nd.array([1.0, 2.0, 3.0])
h = nd.array([[0.1, 0.2, 0.3]], dtype='float16')
d = nd.array([[0.1, 0.2, 0.3]], dtype='float64')
u = nd.array([[1, 250, 3]], dtype='uint8')
""".strip()

#: (name, statements run first or "", expression whose value is recorded)
CASES: list[tuple[str, str, str]] = [
    # creation and nd.array's default dtype
    ("array_np_float64", "", "nd.array(np.ones((2, 2)))"),
    ("array_np_int64", "", "nd.array(np.arange(4))"),
    ("array_list_int", "", "nd.array([1, 2, 3])"),
    ("array_nd_int32_kept", "", "nd.array(i)"),
    ("array_dtype_given", "", "nd.array(np.ones(2), dtype='float64')"),
    ("array_scalar", "", "nd.array(3.5)"),
    ("zeros_default", "", "nd.zeros((2, 3))"),
    ("ones_int", "", "nd.ones((2,), dtype='int32')"),
    ("full", "", "nd.full((2, 2), 7)"),
    ("empty_shape", "", "nd.empty((2, 3)).shape"),
    ("empty_dtype", "", "nd.empty((2,), dtype='int32').dtype"),
    ("ones_like_int", "", "nd.ones_like(i)"),
    ("zeros_like", "", "nd.zeros_like(a)"),
    ("arange", "", "nd.arange(2, 8, 2)"),
    # attributes
    ("size", "", "a.size"),
    ("ndim", "", "a.ndim"),
    ("shape", "", "a.shape"),
    ("dtype_f32", "", "a.dtype"),
    ("dtype_i32", "", "i.dtype"),
    ("context", "", "str(a.context)"),
    ("copyto_ctx", "", "str(a.copyto(mx.cpu(1)).context)"),
    ("copyto_ctx_values", "", "a.copyto(mx.cpu(1))"),
    ("as_in_context", "", "str(a.as_in_context(mx.cpu(2)).context)"),
    ("as_in_context_same_is_self", "", "a.as_in_context(mx.cpu(0)) is a"),
    ("with_context", "with mx.cpu(3):\n    w = nd.zeros((1,))", "str(w.context)"),
    ("current_context_in_with", "with mx.cpu(2):\n    w = str(mx.current_context())", "w"),
    ("copyto_array_casts", "x = nd.zeros((2, 3), dtype='int32')\na.copyto(x)", "x"),
    ("copyto_returns_other", "x = nd.zeros((2, 3))", "a.copyto(x) is x"),
    ("copyto_wrong_shape", "x = nd.zeros((3, 2))\na.copyto(x)", "x"),
    ("wait_to_read", "", "a.wait_to_read()"),
    ("waitall", "", "nd.waitall()"),
    ("asscalar_f32", "", "nd.array([2.5]).asscalar()"),
    ("asscalar_i32", "", "nd.array([5], dtype='int32').asscalar()"),
    ("asscalar_not_scalar", "", "a.asscalar()"),
    ("astype_int", "", "a.astype('int32')"),
    ("astype_f16", "", "i.astype('float16')"),
    ("astype_same_nocopy", "", "a.astype('float32', copy=False) is a"),
    ("astype_same_copy", "", "a.astype('float32') is a"),
    ("T_2d", "", "a.T"),
    ("T_1d_is_self", "", "v.T is v"),
    # reductions (MXNet's legacy nd gives shape (1,) for a full reduction)
    ("sum_all", "", "a.sum()"),
    ("sum_axis0", "", "a.sum(axis=0)"),
    ("mean_all", "", "a.mean()"),
    ("max_axis1", "", "a.max(axis=1)"),
    ("sum_int", "", "i.sum()"),
    # indexing
    ("index_row", "", "a[1]"),
    ("index_elem", "", "a[1, 2]"),
    ("index_col", "", "a[:, 1]"),
    ("index_slice", "", "a[0:1]"),
    ("index_chain", "", "a[1][0]"),
    ("index_1d", "", "v[0]"),
    ("index_neg", "", "a[-1]"),
    ("index_row_slice", "", "a[1, :2]"),
    ("index_nd_array", "", "a[nd.array([1, 0])]"),
    ("index_out_of_range", "", "a[5]"),
    ("setitem_all_int", "x = i.copy()\nx[:] = 2.7", "x"),
    ("setitem_row", "x = a.copy()\nx[1] = 9", "x"),
    ("setitem_row_array", "x = a.copy()\nx[0] = v", "x"),
    ("setitem_slice_iadd", "x = a.copy()\nx[0:1] += 1", "x"),
    ("slice_is_view", "x = a.copy()\ny = x[1:2]\ny[:] = 0", "x"),
    # arithmetic, float32
    ("add", "", "a + b"), ("sub", "", "a - b"), ("mul", "", "a * b"), ("div", "", "a / b"),
    ("pow_scalar", "", "a ** 2"), ("rpow", "", "2 ** v"), ("pow_arrays", "", "b ** j.astype('float32')"),
    ("mod", "", "a % b"), ("mod_scalar", "", "a % 2"), ("rmod", "", "7 % b"),
    ("neg", "", "-a"), ("abs_builtin", "", "abs(a)"),
    ("add_scalar", "", "a + 1"), ("rsub", "", "1 - a"), ("mul_float", "", "a * 2.5"),
    ("rdiv", "", "1 / b"), ("div_by_zero", "", "a / 0"),
    ("broadcast_row", "", "a + v"), ("broadcast_col", "", "a * nd.array([[2.0], [3.0]])"),
    ("broadcast_bad", "", "a + nd.ones((2,))"),
    # arithmetic, other dtypes
    ("int_add_float_scalar", "", "i + 1.5"), ("int_mul_float_scalar", "", "i * 2.5"),
    ("int_div_scalar", "", "i / 2"), ("int_div_int", "", "i / j"), ("int_mod_scalar", "", "i % 3"),
    ("int_mod_int", "", "i % j"), ("int_neg", "", "-i"), ("int_pow", "", "i ** 2"),
    ("int_rdiv", "", "10 / j"), ("int_iadd_float", "x = i.copy()\nx += 1.5", "x"),
    ("int_imul_float", "x = i.copy()\nx *= 0.5", "x"),
    ("float_iadd_int", "x = a.copy()\nx += j", "x"),
    ("mixed_add", "", "a + i"), ("mixed_mul", "", "i * a"),
    ("f16_add", "", "h + h"), ("f16_mul_scalar", "", "h * 3"),
    ("f64_mul", "", "d * 2"), ("f64_add_f32", "", "d + nd.ones((1, 3))"),
    ("uint8_add_overflow", "", "u + 10"), ("uint8_sub", "", "u - 2"),
    # comparisons: same dtype as the input, 0/1
    ("eq", "", "a == b"), ("gt_scalar", "", "a > 0"), ("lt", "", "a < b"),
    ("ne_scalar", "", "a != 0"), ("le_scalar", "", "a <= -0.5"), ("int_eq", "", "i == j"),
    ("int_ge_scalar", "", "i >= 2"), ("int_gt_float_scalar", "", "i > 1.5"),
    ("eq_broadcast", "", "a == v"),
    # nd functions
    ("clip", "", "nd.clip(a, -1, 2)"), ("clip_int", "", "nd.clip(i, -2, 3)"),
    ("clip_int_float_bounds", "", "nd.clip(i, -2.5, 3.5)"),
    # out= writes into the given array, also a row view (MXNet's test_optimizer relies on it)
    ("clip_out_row_view", "x = a.copy()\nnd.clip(x[1], -1, 1, out=x[1])", "x"),
    ("square_out_row_view", "x = a.copy()\nnd.square(x[0], out=x[0])", "x"),
    ("sqrt_out_is_out", "x = nd.zeros((2, 3))", "nd.sqrt(nd.abs(a), out=x) is x"),
    ("sqrt_out_values", "x = nd.zeros((2, 3))\nnd.sqrt(nd.abs(a), out=x)", "x"),
    ("clip_out_wrong_shape", "x = nd.zeros((3, 2))\nnd.clip(a, 0, 1, out=x)", "x"),
    # norm (LAMB's trust ratio in MXNet's test_optimizer.py)
    ("norm_l2", "", "a.norm()"),  # small float16 norms may differ by an ulp: MXNet sums in float16
    ("norm_f16_large_no_overflow", "", "nd.array(np.full((1, 4), 300.0), dtype='float16').norm()"),
    ("norm_axis", "", "nd.norm(a, axis=1)"), ("norm_l1", "", "nd.norm(a, ord=1)"),
    ("norm_l1_axis", "", "nd.norm(a, ord=1, axis=0)"), ("norm_keepdims", "", "a.norm(axis=0, keepdims=True)"),
    ("norm_ord3_refused", "", "nd.norm(a, ord=3)"),
    ("sqrt", "", "nd.sqrt(nd.abs(a))"), ("sqrt_negative", "", "nd.sqrt(a)"),
    ("sqrt_int", "", "nd.sqrt(nd.abs(i))"),
    ("square", "", "nd.square(a)"), ("square_int", "", "nd.square(i)"),
    ("sign", "", "nd.sign(a)"), ("sign_int", "", "nd.sign(i)"),
    ("abs", "", "nd.abs(a)"), ("abs_int", "", "nd.abs(i)"),
    ("maximum", "", "nd.maximum(a, b)"), ("maximum_scalar", "", "nd.maximum(a, 0)"),
    ("maximum_scalar_left", "", "nd.maximum(2, a)"), ("minimum", "", "nd.minimum(a, b)"),
    ("minimum_scalar", "", "nd.minimum(a, 1.5)"), ("minimum_int", "", "nd.minimum(i, j)"),
    ("maximum_broadcast", "", "nd.maximum(a, v)"), ("maximum_int_float_scalar", "", "nd.maximum(i, 0.5)"),
    ("maximum_mixed", "", "nd.maximum(a, i)"),
    ("dot", "", "nd.dot(a, b.T)"), ("dot_tn", "", "nd.dot(a.T, b)"),
    ("dot_vec_vec", "", "nd.dot(v, v)"), ("dot_mat_vec", "", "nd.dot(a, v)"),
    ("dot_transpose_b", "", "nd.dot(a, b, transpose_b=True)"),
    ("dot_transpose_a", "", "nd.dot(a, b, transpose_a=True)"),
    ("dot_int", "", "nd.dot(i, j.T)"), ("dot_bad_shape", "", "nd.dot(a, b)"),
    ("concat_default", "", "nd.concat(a, b)"), ("concat_dim0", "", "nd.concat(a, b, dim=0)"),
    ("concat_three", "", "nd.concat(v, v, v, dim=0)"), ("concat_bad", "", "nd.concat(a, v, dim=0)"),
    ("stack", "", "nd.stack(a, b)"), ("stack_axis1", "", "nd.stack(a, b, axis=1)"),
    ("stack_axis_neg", "", "nd.stack(v, v, axis=-1)"), ("stack_bad", "", "nd.stack(a, v)"),
    ("transpose", "", "nd.transpose(a)"),
    ("reshape", "", "a.reshape((3, 2))"), ("reshape_args", "", "a.reshape(3, 2)"),
]


def encode(value: object) -> dict:
    """A JSON-able description of a case's result."""
    if isinstance(value, nd.NDArray):
        data = value.asnumpy()
        return {
            "kind": "nd", "dtype": str(data.dtype), "shape": list(data.shape),
            "values": [_number(x) for x in data.ravel().tolist()],
        }
    if isinstance(value, np.generic):
        return {"kind": "scalar", "dtype": str(value.dtype), "value": _number(value.item())}
    if isinstance(value, type):
        return {"kind": "type", "name": np.dtype(value).name}
    if isinstance(value, tuple):
        return {"kind": "tuple", "value": list(value)}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return {"kind": "py", "type": type(value).__name__, "value": value}
    raise TypeError(f"cannot record a {type(value).__name__}")


def _number(x: object) -> object:
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)  # "nan", "inf", "-inf": JSON has no such numbers
    return x


def run_case(setup_ns: dict, code: str, expr: str) -> dict:
    ns = dict(setup_ns)
    try:
        exec(code, ns)  # noqa: S102 - our own fixed case strings
        return encode(eval(expr, ns))  # noqa: S307
    except Exception as error:  # noqa: BLE001 - the exception class is what we record
        return {"kind": "error", "type": type(error).__name__, "builtin": _builtin_base(error)}


def _builtin_base(error: BaseException) -> str:
    """The nearest built-in exception class (MXNetError is a RuntimeError... or not)."""
    for cls in type(error).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return "Exception"


def record_params() -> dict:
    """Write .params files with mx.nd.save and describe what each holds."""
    PARAMS_DIR.mkdir(exist_ok=True)
    files = {
        "dict_mixed.params": {
            "weight": nd.array([[1.5, -2.0, 3.0], [0.25, 0.0, -7.5]]),
            "bias": nd.array([5, -6], dtype="int32"),
            "h": nd.array([0.1, 65504.0, -0.5], dtype="float16"),
            "d": nd.array([1e-300, 2.5], dtype="float64"),
            "u8": nd.array([0, 255, 7], dtype="uint8"),
            "i8": nd.array([-128, 127], dtype="int8"),
            "i64": nd.array([2**40, -3], dtype="int64"),
            "x3": nd.arange(24).reshape((2, 3, 4)),
        },
        "list.params": [nd.array([1.0, 2.0]), nd.ones((2, 2), dtype="int32") * 3],
        "single.params": nd.array([[9.0]]),
        "empty_list.params": [],
        "arg_aux.params": {
            "arg:fc1_weight": nd.arange(6).reshape((2, 3)) / 4,
            "arg:fc1_bias": nd.array([0.5, -0.5]),
            "aux:bn_moving_mean": nd.array([0.0, 1.0]),
        },
        "unicode_names.params": {"größe": nd.array([1.0]), "": nd.array([2.0])},
        "on_cpu3.params": [nd.array([1.0, 2.0], ctx=mx.cpu(3))],
    }
    described = {}
    for name, data in files.items():
        path = PARAMS_DIR / name
        nd.save(str(path), data)
        loaded = nd.load(str(path))  # what MXNet itself reads back
        contexts = [str(x.context) for x in (loaded.values() if isinstance(loaded, dict) else loaded)]
        if isinstance(loaded, dict):
            described[name] = {"kind": "dict", "arrays": {k: encode(x) for k, x in loaded.items()},
                               "order": list(loaded)}
        else:
            described[name] = {"kind": "list", "arrays": [encode(x) for x in loaded]}
        described[name]["contexts"] = contexts
    # np-shape semantics write version 3 and allow 0-d and zero-size arrays
    with mx.np_shape(True):
        path = PARAMS_DIR / "np_shape_v3.params"
        nd.save(str(path), {"scalar": nd.array(np.array(4.5)), "empty": nd.zeros((0, 3)),
                            "m": nd.ones((2, 1))})
        loaded = nd.load(str(path))
        described["np_shape_v3.params"] = {"kind": "dict", "arrays": {k: encode(x) for k, x in loaded.items()},
                                           "order": list(loaded)}
    return described


def main() -> None:
    setup_ns: dict = {"mx": mx, "nd": nd, "np": np}
    exec(SETUP, setup_ns)  # noqa: S102
    cases = [{"name": n, "code": c, "expr": e, "mxnet": run_case(setup_ns, c, e)} for n, c, e in CASES]
    out = {
        "mxnet_version": mx.__version__,
        "setup": SETUP,
        "cases": cases,
        "params": record_params(),
    }
    (HERE / "mxnet_nd_reference.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"recorded {len(cases)} cases and {len(out['params'])} .params files")


if __name__ == "__main__":
    main()
