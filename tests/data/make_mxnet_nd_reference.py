"""Record what MXNet 1.9.1's ``mx.nd`` does, for kvcli's own tests of ``kvcli.mx.ndarray``.

Run with a Python that has mxnet 1.9.1 (from the repository root):

    $MXNET_PYTHON tests/data/make_mxnet_nd_reference.py

Writes
  tests/data/mxnet_nd_reference.json  -- each case: the code, MXNet's result (dtype, shape,
                                         values) or the exception class it raised
  tests/data/mxnet_nd_random_reference.json -- the same for the generated differential cases
                                         (:func:`random_cases`): every dense ``nd`` function
                                         and NDArray operator on seeded random arrays of
                                         several shapes and dtypes with edge values
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
x = nd.arange(24).reshape((2, 3, 4))
f = nd.array([[0.5, 1.5, 2.5], [-0.5, -1.5, -2.7]])
q = nd.ones((1, 3, 1))
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
    # creation with out= (MXNet writes into out and returns it; ones/zeros check shape and dtype)
    ("ones_out", "o = nd.zeros((2, 2))\nnd.ones((2, 2), out=o)", "o"),
    ("ones_out_is_out", "o = nd.zeros((2, 2))", "nd.ones((2, 2), out=o) is o"),
    ("zeros_out", "o = nd.ones((2, 2))\nnd.zeros((2, 2), out=o)", "o"),
    ("zeros_out_int", "o = nd.ones((2, 2), dtype='int32')\nnd.zeros((2, 2), dtype='int32', out=o)", "o"),
    ("ones_out_wrong_shape", "o = nd.zeros((2, 2))\nnd.ones((3, 3), out=o)", "o"),
    ("ones_out_wrong_dtype", "o = nd.zeros((2, 2), dtype='int32')\nnd.ones((2, 2), out=o)", "o"),
    ("ones_dtype_out_mismatch", "o = nd.zeros((2, 2))\nnd.ones((2, 2), dtype='int32', out=o)", "o"),
    ("full_out", "o = nd.zeros((2, 2))\nnd.full((2, 2), 2, out=o)", "o"),
    ("full_out_keeps_out_shape", "o = nd.zeros((2, 2))\nnd.full((3, 3), 5, out=o)", "o"),
    ("full_out_int_casts", "o = nd.zeros((2, 2), dtype='int32')\nnd.full((2, 2), 2.5, out=o)", "o"),
    ("full_out_is_out", "o = nd.zeros((2, 2))", "nd.full((2, 2), 2, out=o) is o"),
    ("ones_like_out", "o = nd.zeros((2, 3))\nnd.ones_like(a, out=o)", "o"),
    ("zeros_like_out_wrong_shape", "o = nd.ones((2, 2))\nnd.zeros_like(a, out=o)", "o"),
    ("ones_int_shape", "", "nd.ones(3)"),
    ("eye", "", "nd.eye(3, 4, 1)"), ("eye_square_int", "", "nd.eye(2, dtype='int32')"),
    ("eye_neg_k", "", "nd.eye(3, k=-1)"),
    ("arange_repeat", "", "nd.arange(0, 3, 1, repeat=2)"), ("arange_int", "", "nd.arange(0, 10, 3, dtype='int32')"),
    ("arange_out_refused", "o = nd.zeros((3,))\nnd.arange(3, out=o)", "o"),
    # unknown keyword arguments (kvcli: always a TypeError; MXNet: MXNetError or TypeError here)
    ("unknown_kwarg_zeros", "", "nd.zeros((2, 2), foo=1)"), ("unknown_kwarg_ones", "", "nd.ones((2, 2), foo=1)"),
    ("unknown_kwarg_full", "", "nd.full((2, 2), 1, foo=1)"), ("unknown_kwarg_sum", "", "nd.sum(a, foo=1)"),
    ("unknown_kwarg_sum_method", "", "a.sum(foo=1)"), ("unknown_kwarg_reshape", "", "a.reshape((3, 2), foo=1)"),
    ("unknown_kwarg_transpose", "", "nd.transpose(a, foo=1)"), ("unknown_kwarg_clip", "", "nd.clip(a, 0, 1, foo=1)"),
    ("unknown_kwarg_dot", "", "nd.dot(a, a.T, foo=1)"), ("unknown_kwarg_concat", "", "nd.concat(a, a, foo=1)"),
    ("unknown_kwarg_random", "", "nd.random.uniform(0, 1, shape=(2,), foo=3)"),
    ("unknown_kwarg_random_uniform", "", "nd.random_uniform(shape=(2,), foo=3)"),
    # reshape: MXNet's special values 0, -1, -2, -3, -4 and reverse; the method gives a view
    ("reshape_0_m1", "", "x.reshape((0, -1))"), ("reshape_m1", "", "x.reshape((-1,))"),
    ("reshape_m2", "", "x.reshape((-2,))"), ("reshape_m3_m1", "", "x.reshape((-3, -1))"),
    ("reshape_m3_m2_args", "", "x.reshape(-3, -2)"), ("reshape_m4", "", "x.reshape((-4, 1, 2, -2))"),
    ("reshape_0_m4_m1", "", "x.reshape((0, -4, -1, 3, -2))"), ("reshape_2_m4_m1_3_0", "", "x.reshape((2, -4, -1, 3, 0))"),
    ("reshape_m2_ones", "", "x.reshape((-2, 1, 1))"), ("reshape_6_1_m1", "", "x.reshape((6, 1, -1))"),
    ("reshape_4_0_2", "", "x.reshape((4, 0, 2))"), ("reshape_0_m3", "", "x.reshape((0, -3))"),
    ("reshape_m1_0", "", "x.reshape((-1, 0))"), ("reshape_m1_0_reverse", "", "x.reshape((-1, 0), reverse=True)"),
    ("reshape_shape_kw", "", "x.reshape(shape=(6, 4))"), ("reshape_fn_reverse", "", "nd.reshape(x, shape=(-1, 0), reverse=True)"),
    ("reshape_fn_positional", "", "nd.reshape(x, (4, 6))"), ("reshape_fn_special", "", "nd.reshape(x, shape=(0, -1))"),
    ("reshape_smaller_valueerror", "", "x.reshape((2, 3))"), ("reshape_larger", "", "x.reshape((5, 5))"),
    ("reshape_two_m1", "", "x.reshape((-1, -1))"), ("reshape_empty", "", "x.reshape(())"),
    ("reshape_is_view", "y = x.copy()\nz = y.reshape((0, -1))\nz[:] = 1", "y"),
    ("reshape_int", "", "i.reshape((-1,))"),
    ("reshape_fn_out", "o = nd.zeros((3, 2))\nnd.reshape(a, shape=(3, 2), out=o)", "o"),
    # reductions with axis / keepdims / exclude, method and function forms
    ("sum_fn_axis1", "", "nd.sum(a, axis=1)"), ("sum_method_axis1", "", "a.sum(axis=1)"),
    ("sum_axis_neg_keepdims", "", "nd.sum(a, axis=-1, keepdims=True)"),
    ("sum_exclude", "", "nd.sum(a, axis=1, exclude=True)"), ("sum_axis_empty_tuple", "", "nd.sum(a, axis=())"),
    ("sum_axis_none", "", "nd.sum(a, axis=None)"), ("sum_axis_tuple", "", "a.sum(axis=(0, 1))"),
    ("sum_3d_axes", "", "nd.sum(x, axis=(0, 2))"), ("sum_3d_axes_keepdims", "", "x.sum(axis=(0, 2), keepdims=True)"),
    ("sum_exclude_all", "", "nd.sum(a, axis=(0, 1), exclude=True)"), ("sum_axis_out_of_range", "", "nd.sum(x, axis=3)"),
    ("sum_axis_neg_out_of_range", "", "nd.ones((2, 2)).sum(axis=-3)"),
    ("sum_int", "", "nd.sum(i, axis=0)"), ("sum_uint8_wraps", "", "nd.sum(nd.array([200, 100], dtype='uint8'))"),
    ("sum_f16", "", "nd.sum(h)"), ("sum_f64", "", "nd.sum(d, axis=1)"),
    ("sum_out", "o = nd.zeros((2, 4))\nnd.sum(x, axis=1, out=o)", "o"),
    ("mean_all_fn", "", "nd.mean(a)"), ("mean_axis0", "", "nd.mean(a, axis=0)"),
    ("mean_keepdims_all", "", "nd.mean(a, axis=(0, 1), keepdims=True)"), ("mean_int", "", "nd.mean(i)"),
    ("mean_int_axis", "", "nd.mean(i, axis=1)"), ("mean_uint8", "", "nd.mean(nd.array([1, 2], dtype='uint8'))"),
    ("mean_exclude", "", "x.mean(axis=1, exclude=True)"),
    ("max_fn", "", "nd.max(a)"), ("max_exclude", "", "nd.max(a, axis=0, exclude=True)"),
    ("max_int_keepdims", "", "nd.max(i, axis=1, keepdims=True)"), ("max_method_neg", "", "x.max(axis=-2)"),
    ("min_fn_axis", "", "nd.min(a, axis=1)"), ("min_method", "", "a.min()"), ("min_int", "", "i.min(axis=0)"),
    ("prod_fn", "", "nd.prod(a)"), ("prod_axis_exclude", "", "nd.prod(a, axis=0, exclude=True)"),
    ("prod_int", "", "nd.prod(j, axis=1)"), ("prod_method_keepdims", "", "a.prod(axis=1, keepdims=True)"),
    ("nansum", "", "nd.nansum(nd.array([[1, np.nan], [2, 3]]), axis=0)"),
    ("nanprod", "", "nd.nanprod(nd.array([[2, np.nan], [2, 3]]))"),
    ("sum_nan", "", "nd.sum(nd.array([[1, np.nan], [2, 3]]), axis=0)"),
    ("max_nan", "", "nd.max(nd.array([[1, np.nan], [2, 3]]), axis=1)"),
    ("norm_axis_tuple", "", "nd.norm(a, axis=(0, 1))"), ("norm_method_axis_neg", "", "x.norm(axis=-1)"),
    ("norm_out", "o = nd.zeros((2, 1))\nnd.norm(a, ord=2, axis=1, keepdims=True, out=o)", "o"),
    ("norm_3d_axes_keepdims", "", "nd.norm(x, ord=1, axis=(1, 2), keepdims=True)"),
    ("argmax_all", "", "nd.argmax(a)"), ("argmax_axis", "", "nd.argmax(a, axis=1)"),
    ("argmax_keepdims", "", "nd.argmax(a, axis=1, keepdims=True)"), ("argmin_int", "", "nd.argmin(i, axis=0)"),
    ("argmin_method", "", "a.argmin(axis=0)"),
    # element-wise maths (integer inputs are computed, then cast back: exp(7) -> 1096)
    ("exp", "", "nd.exp(a)"), ("exp_method", "", "a.exp()"), ("exp_int", "", "nd.exp(i)"),
    ("exp_f16", "", "nd.exp(h)"), ("exp_f64", "", "nd.exp(d)"), ("exp_overflow", "", "nd.exp(nd.array([100.0]))"),
    ("log", "", "nd.log(nd.abs(a))"), ("log_negative", "", "nd.log(a)"), ("log_int", "", "nd.log(i)"),
    ("log_method", "", "nd.abs(a).log()"),
    ("relu", "", "nd.relu(a)"), ("relu_int", "", "nd.relu(i)"), ("relu_method", "", "a.relu()"),
    ("relu_nan", "", "nd.relu(nd.array([np.nan, -1, 2]))"),
    ("sigmoid", "", "nd.sigmoid(a)"), ("sigmoid_int", "", "nd.sigmoid(i)"),
    ("sigmoid_large", "", "nd.sigmoid(nd.array([-100.0, 100.0]))"),
    ("sigmoid_method", "", "a.sigmoid()"),
    ("tanh", "", "nd.tanh(a)"), ("tanh_int", "", "nd.tanh(i)"), ("tanh_method", "", "a.tanh()"),
    ("floor", "", "nd.floor(f)"), ("floor_int", "", "nd.floor(i)"), ("floor_method", "", "f.floor()"),
    ("ceil", "", "nd.ceil(f)"), ("ceil_half", "", "nd.ceil(nd.array([-0.5, 0.5]))"), ("ceil_int", "", "nd.ceil(i)"),
    ("round_half_away", "", "nd.round(nd.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.49999997]))"),
    ("round", "", "nd.round(f)"), ("round_int_large", "", "nd.array([50000001], dtype='int32').round()"),
    ("rint_half_even", "", "nd.rint(nd.array([0.5, 1.5, 2.5, -0.5, -1.5]))"),
    ("trunc", "", "nd.trunc(f)"), ("fix", "", "nd.fix(f)"), ("trunc_int_method", "", "i.trunc()"),
    ("exp_out", "o = nd.zeros((2, 3))\nnd.exp(a, out=o)", "o"),
    ("relu_out_wrong_shape", "o = a.copy()\nnd.relu(a, out=o[0])", "o"),
    ("relu_name_accepted", "", "nd.relu(a, name='r')"),
    # shape functions
    ("concatenate", "", "nd.concatenate([a, b])"), ("concatenate_axis1", "", "nd.concatenate([a, b], axis=1)"),
    ("concatenate_no_copy", "", "nd.concatenate([a, b], axis=1, always_copy=False)"),
    ("concatenate_one", "", "nd.concatenate([a])"),
    ("concatenate_one_no_copy_is_self", "", "nd.concatenate([a], always_copy=False) is a"),
    ("concatenate_empty", "", "nd.concatenate([])"), ("concatenate_dtypes", "", "nd.concatenate([a, i])"),
    ("concatenate_shapes", "", "nd.concatenate([a, x])"),
    ("expand_dims", "", "nd.expand_dims(x, axis=1)"), ("expand_dims_neg", "", "nd.expand_dims(x, axis=-1)"),
    ("expand_dims_end", "", "nd.expand_dims(x, axis=3)"), ("expand_dims_bad", "", "nd.expand_dims(x, axis=4)"),
    ("expand_dims_bad_neg", "", "nd.expand_dims(x, axis=-5)"), ("expand_dims_method", "", "a.expand_dims(0)"),
    ("expand_dims_copy", "y = a.copy()\nz = y.expand_dims(0)\nz[:] = 7", "y"),
    ("expand_dims_inplace_view", "y = a.copy()\nz = y.expand_dims(0, inplace=True)\nz[:] = 7", "y"),
    ("flatten", "", "nd.flatten(x)"), ("flatten_method", "", "x.flatten()"), ("flatten_1d", "", "nd.flatten(v)"),
    ("flatten_inplace_view", "y = x.copy()\nz = y.flatten(inplace=True)\nz[:] = 1", "y"),
    ("flatten_copy", "y = x.copy()\nz = y.flatten()\nz[:] = 1", "y"),
    ("squeeze", "", "nd.squeeze(q)"), ("squeeze_all_ones", "", "nd.squeeze(nd.ones((1, 1)))"),
    ("squeeze_axis", "", "nd.squeeze(q, axis=0)"), ("squeeze_axis_not_one", "", "nd.squeeze(q, axis=1)"),
    ("squeeze_axes_neg", "", "nd.squeeze(q, axis=(0, -1))"),
    ("squeeze_all_axes_given", "", "nd.squeeze(nd.ones((1, 1)), axis=(0, 1))"),
    ("squeeze_method", "", "q.squeeze(axis=2)"), ("squeeze_nothing", "", "a.squeeze()"),
    ("squeeze_inplace_view", "y = q.copy()\nz = y.squeeze(inplace=True)\nz[:] = 3", "y"),
    ("split", "", "nd.split(x, num_outputs=2, axis=2)[1]"), ("split_len", "", "len(nd.split(x, num_outputs=3, axis=1))"),
    ("split_squeeze", "", "nd.split(x, num_outputs=3, axis=1, squeeze_axis=True)[2]"),
    ("split_one_is_array", "", "nd.split(x, num_outputs=1, axis=0)"), ("split_uneven", "", "nd.split(x, num_outputs=5, axis=1)"),
    ("split_default_axis", "", "nd.split(x, num_outputs=3)[0]"),
    ("split_method_neg_axis", "", "x.split(num_outputs=2, axis=-1)[0]"),
    ("split_squeeze_not_one", "", "nd.split(x, num_outputs=2, axis=2, squeeze_axis=True)"),
    ("slice_axis", "", "nd.slice_axis(x, axis=2, begin=1, end=3)"),
    ("slice_axis_neg", "", "nd.slice_axis(x, axis=-1, begin=-3, end=None)"),
    ("slice_axis_empty", "", "nd.slice_axis(x, axis=1, begin=2, end=1)"),
    ("slice_axis_positional", "", "nd.slice_axis(x, 1, 0, 2)"), ("slice_axis_method", "", "a.slice_axis(axis=0, begin=1, end=2)"),
    ("slice_axis_end_neg", "", "nd.slice_axis(x, axis=1, begin=0, end=-1)"),
    ("slice_axis_out_of_range", "", "nd.slice_axis(x, axis=1, begin=0, end=4)"),
    ("broadcast_to", "", "nd.broadcast_to(nd.array([[1], [2]]), shape=(2, 3))"),
    ("broadcast_to_zero_keeps", "", "nd.broadcast_to(nd.array([[1], [2]]), shape=(0, 3))"),
    ("broadcast_to_bad", "", "nd.broadcast_to(nd.array([[1, 2]]), shape=(2, 3))"),
    ("broadcast_to_fn_more_dims", "", "nd.broadcast_to(a, shape=(2, 3, 3))"),
    ("broadcast_to_method_more_dims", "", "nd.array([1, 2]).broadcast_to((3, 2))"),
    ("broadcast_to_method", "", "a.broadcast_to((2, 2, 3))"),
    ("broadcast_to_method_fewer_dims", "", "a.broadcast_to((3,))"),
    ("broadcast_to_int", "", "nd.broadcast_to(nd.array([[7], [-3]], dtype='int32'), shape=(2, 2))"),
    ("where", "", "nd.where(a > 0, a, nd.zeros_like(a))"), ("where_row_condition", "", "nd.where(nd.array([1, 0]), a, -a)"),
    ("where_row_condition_bad", "", "nd.where(nd.array([1, 0, 1]), a, -a)"),
    ("where_int_values", "", "nd.where(a > 0, i, j)"), ("where_float_cond_int", "", "nd.where(i > 0, a, b)"),
    ("where_dtype_mismatch", "", "nd.where(a > 0, a, i)"),
    ("where_nonzero_cond", "", "nd.where(nd.array([[0.5, 0, -2], [0, 0, 1]]), a, b)"),
    ("one_hot", "", "nd.one_hot(nd.array([1, 0, 2, 5]), 3)"),
    ("one_hot_values", "", "nd.one_hot(nd.array([1, -1]), 3, on_value=5, off_value=-1, dtype='int32')"),
    ("one_hot_2d", "", "nd.one_hot(nd.array([[1, 0]]), depth=3)"),
    ("one_hot_float_index", "", "nd.one_hot(nd.array([1.7, 2.2]), 3)"),
    ("one_hot_method", "", "nd.array([2, 0]).one_hot(3)"), ("one_hot_depth0", "", "nd.one_hot(nd.array([1, 2]), 0)"),
    ("one_hot_f64", "", "nd.one_hot(nd.array([1]), 2, dtype='float64')"),
    ("take", "", "nd.take(a, nd.array([1, 0, 1]))"), ("take_clip", "", "nd.take(a, nd.array([5, -1]))"),
    ("take_wrap", "", "nd.take(a, nd.array([5, -1, -4]), mode='wrap')"),
    ("take_axis1", "", "nd.take(a, nd.array([[2, 0]]), axis=1)"),
    ("take_axis_neg", "", "nd.take(x, nd.array([3, 0]), axis=-1)"),
    ("take_raise_in_range", "", "nd.take(a, nd.array([1]), mode='raise')"),
    ("take_float_indices", "", "nd.take(a, nd.array([0.7, 1.6]))"), ("take_int", "", "nd.take(i, nd.array([1], dtype='int32'))"),
    ("take_method", "", "a.take(nd.array([1]))"), ("take_2d_indices", "", "nd.take(x, nd.array([[1, 0], [0, 1]]))"),
    ("take_bad_mode", "", "nd.take(a, nd.array([1]), mode='nearest')"),
    ("add_n", "", "nd.add_n(a, b, a)"), ("elementwisesum_int", "", "nd.ElementWiseSum(i, j)"),
    ("add_n_dtypes", "", "nd.add_n(a, i)"),
    # the old names of the random samplers (the values are random: shape, dtype, context only)
    ("random_uniform_shape", "", "nd.random_uniform(low=0, high=1, shape=(2, 3)).shape"),
    ("random_uniform_dtype", "", "nd.random_uniform(0, 1, shape=(2,), dtype='float64').dtype"),
    ("random_uniform_range", "r = nd.random_uniform(2, 3, shape=(50,))",
     "bool(((r >= 2) * (r < 3)).min() == 1)"),
    ("random_normal_shape", "", "nd.random_normal(loc=0, scale=1, shape=(4,)).shape"),
    ("random_normal_ctx", "", "str(nd.random_normal(shape=(2,), ctx=mx.cpu(1)).context)"),
    ("random_uniform_out", "o = nd.zeros((3,))", "nd.random_uniform(5, 6, shape=(3,), out=o) is o"),
    # element assignment from a one-element numpy array, lists and arrays with extra leading 1s
    ("setitem_one_element_numpy", "y = nd.zeros(1)\ny[0] = np.array([47.844944], dtype=np.float32)", "y"),
    ("setitem_elem_numpy1", "y = a.copy()\ny[1, 2] = np.array([5.0])", "y"),
    ("setitem_row_leading_one", "y = a.copy()\ny[1] = np.array([[1, 2, 3]])", "y"),
    ("setitem_all_leading_ones", "y = a.copy()\ny[:] = np.array([[[1, 2, 3]]])", "y"),
    ("setitem_row_list", "y = a.copy()\ny[0] = [1, 2, 3]", "y"),
    ("setitem_row_nd_leading_one", "y = a.copy()\ny[0] = nd.array([[1, 2, 3]])", "y"),
    ("setitem_row_bad_shape", "y = a.copy()\ny[0] = np.array([[1, 2]])", "y"),
    ("setitem_large_int", "y = nd.zeros((4, 1), dtype='int32')\ny[1, 0] = 16800001", "y"),
    # arange (count in float64, values start + i * step in the dtype), linspace
    ("arange_float_steps", "", "nd.arange(0.3, 5.1, 0.7)"), ("arange_stop_only_int", "", "nd.arange(1.5, dtype='int32')"),
    ("arange_reversed", "", "nd.arange(5, 1)"), ("arange_tenths_len", "", "nd.arange(0, 1, 0.1).shape"),
    ("arange_keywords_repeat", "", "nd.arange(2, stop=8, step=2, repeat=3)"),
    ("arange_negative_step", "", "nd.arange(3, 0, -1)"),
    ("arange_large_int", "", "nd.arange(0, 10000 ** 2, 10001, dtype='int32')[-2:]"),
    ("linspace", "", "nd.linspace(0, 1, 5)"), ("linspace_no_endpoint", "", "nd.linspace(0, 1, 5, endpoint=False)"),
    ("linspace_int", "", "nd.linspace(0.5, 7.3, 4, dtype='int32')"), ("linspace_empty", "", "nd.linspace(3, 1, 0)"),
    ("linspace_one", "", "nd.linspace(0, 1, 1)"),
    ("moveaxis", "", "nd.moveaxis(a, 0, 1)"), ("moveaxis_3d", "", "nd.moveaxis(x, [0, 1], [2, 0])"),
    ("moveaxis_bad_axis", "", "nd.moveaxis(a, 0, 5)"), ("moveaxis_repeated", "", "nd.moveaxis(a, [0, 0], [0, 1])"),
    ("broadcast_like", "", "nd.broadcast_like(nd.array([[1], [2]]), a)"),
    ("broadcast_like_axes", "",
     "nd.broadcast_like(nd.ones((1, 2, 1, 3)), nd.ones((5, 6, 7, 8)), lhs_axes=(0, 2), rhs_axes=(1, 3))"),
    ("broadcast_like_axes_neg", "",
     "nd.broadcast_like(nd.ones((1, 7, 9, 1, 1)), nd.ones((9, 1)), lhs_axes=(-2, -1), rhs_axes=(-2, -1))"),
    ("broadcast_like_empty_axes", "", "nd.broadcast_like(a, a, lhs_axes=(), rhs_axes=())"),
    ("broadcast_like_method", "", "nd.array([[1], [2]]).broadcast_like(a)"),
    # MXNet's old row-wise ops
    ("choose_element_0index", "", "nd.choose_element_0index(a, nd.array([2, 0]))"),
    ("choose_element_0index_clipped", "", "nd.choose_element_0index(a, nd.array([5, -1]))"),
    ("fill_element_0index", "", "nd.fill_element_0index(a, nd.array([9, 8]), nd.array([1, 2]))"),
    ("onehot_encode", "o = nd.ones((2, 3))\nnd.onehot_encode(nd.array([2, 0]), o)", "o"),
    # pickling: MXNet pickles {'handle': the array's .params record}
    ("pickle_state_f32", "", "bytes(a.__getstate__()['handle']).hex()"),
    ("pickle_state_int", "", "bytes(i.__getstate__()['handle']).hex()"),
    ("pickle_state_ctx", "", "bytes(nd.array([1.0, 2.0], ctx=mx.cpu(2)).__getstate__()['handle']).hex()"),
    ("pickle_roundtrip", "import pickle", "pickle.loads(pickle.dumps(i))"),
    ("pickle_roundtrip_ctx", "import pickle", "str(pickle.loads(pickle.dumps(nd.ones((1,), ctx=mx.cpu(2)))).context)"),
    # from_numpy: zero copy shares the memory and makes numpy's side read-only
    ("from_numpy_f64", "", "nd.from_numpy(np.ones((2, 2)))"),
    ("from_numpy_shares", "n = np.zeros((2, 2), dtype=np.float32)\ny = nd.from_numpy(n)\ny[1, 1] = 7", "nd.array(n)"),
    ("from_numpy_readonly", "n = np.zeros((2,))\ny = nd.from_numpy(n)", "n.flags.writeable"),
    ("from_numpy_copy_writable", "n = np.zeros((2,))\ny = nd.from_numpy(n, zero_copy=False)", "n.flags.writeable"),
    ("from_numpy_not_contiguous", "", "nd.from_numpy(np.ones((2, 3)).T)"),
    # broadcast_* / elemwise_* operators and the capitalised names
    ("broadcast_add", "", "nd.broadcast_add(a, v)"), ("broadcast_plus", "", "nd.broadcast_plus(a, v)"),
    ("broadcast_minus", "", "nd.broadcast_minus(a, v)"), ("broadcast_sub_col", "", "nd.broadcast_sub(a, nd.array([[1], [2]]))"),
    ("broadcast_mul", "", "nd.broadcast_mul(a, v)"), ("broadcast_div_int", "", "nd.broadcast_div(i, j)"),
    ("broadcast_mod", "", "nd.broadcast_mod(a, v)"), ("broadcast_power", "", "nd.broadcast_power(a, v)"),
    ("broadcast_maximum", "", "nd.broadcast_maximum(a, v)"), ("broadcast_minimum", "", "nd.broadcast_minimum(a, v)"),
    ("broadcast_equal", "", "nd.broadcast_equal(a, v)"), ("broadcast_greater", "", "nd.broadcast_greater(a, v)"),
    ("broadcast_lesser_equal_int", "", "nd.broadcast_lesser_equal(i, j)"),
    ("broadcast_add_dtypes", "", "nd.broadcast_add(a, i)"), ("broadcast_add_shapes", "", "nd.broadcast_add(a, nd.ones((2,)))"),
    ("broadcast_add_out", "o = nd.zeros((2, 3))\nnd.broadcast_add(a, v, out=o)", "o"),
    ("elemwise_add", "", "nd.elemwise_add(a, b)"), ("elemwise_add_shapes", "", "nd.elemwise_add(a, v)"),
    ("elemwise_sub", "", "nd.elemwise_sub(a, b)"), ("elemwise_mul_int", "", "nd.elemwise_mul(i, j)"),
    ("elemwise_div", "", "nd.elemwise_div(a, b)"),
    ("broadcast_axis", "", "nd.broadcast_axis(nd.ones((1, 3)), axis=0, size=2)"),
    ("broadcast_axes_two", "", "nd.broadcast_axes(nd.array([[[5]]]), axis=(0, 2), size=(2, 3))"),
    ("broadcast_axis_not_one", "", "nd.broadcast_axis(a, axis=0, size=3)"),
    ("broadcast_axes_method", "", "nd.ones((2, 1)).broadcast_axes(axis=1, size=4)"),
    ("capitalised_reshape", "", "nd.Reshape(a, shape=(3, 2))"), ("capitalised_flatten", "", "nd.Flatten(x)"),
    ("capitalised_concat", "", "nd.Concat(a, b, dim=0)"),
    ("capitalised_slicechannel", "", "nd.SliceChannel(a, num_outputs=3)[0]"),
    # a number given to an op is a double in MXNet: float16 gets it through float32 (rounded
    # twice), int64 loses the bits beyond 2**53, integers take it as C converts
    ("f16_scalar_add_twice_rounded", "", "nd.zeros((2,), dtype='float16') + (1 + 2**-11 + 2**-40)"),
    ("f16_scalar_rsub_twice_rounded", "", "(1 + 2**-11 + 2**-40) - nd.zeros((2,), dtype='float16')"),
    ("f16_scalar_mul_twice_rounded", "", "nd.ones((2,), dtype='float16') * (1 + 2**-11 + 2**-40)"),
    ("f16_scalar_maximum_twice_rounded", "", "nd.maximum(nd.zeros((1,), dtype='float16'), 1 + 2**-11 + 2**-40)"),
    ("f16_scalar_eq_twice_rounded", "", "nd.ones((1,), dtype='float16') == (1 + 2**-11 + 2**-40)"),
    ("f16_scalar_lt_twice_rounded", "", "nd.ones((1,), dtype='float16') < (1 + 2**-11 + 2**-40)"),
    ("f16_full_twice_rounded", "", "nd.full((2,), 1 + 2**-11 + 2**-40, dtype='float16')"),
    ("f16_setitem_twice_rounded", "y = nd.zeros((3,), dtype='float16')\ny[0] = 1 + 2**-11 + 2**-40\n"
     "y[1:] = 2049 + 2**-30", "y"),
    ("f16_setitem_numpy_once_rounded", "y = nd.zeros((2,), dtype='float16')\ny[:] = np.array([1 + 2**-11 + 2**-40] * 2)",
     "y"),
    ("i64_scalar_add_through_double", "", "nd.zeros((1,), dtype='int64') + (2**62 + 1)"),
    ("i64_full_through_double", "", "nd.full((1,), 2**62 + 1, dtype='int64')"),
    ("i64_setitem_through_double", "y = nd.zeros((2,), dtype='int64')\ny[0] = 2**62 + 1\ny[1] = -(2**55) - 3", "y"),
    ("u8_setitem_out_of_range", "y = nd.zeros((4,), dtype='uint8')\ny[0] = -1\ny[1] = 300\ny[2] = 7.9\ny[3] = -0.5",
     "y"),
    ("i32_setitem_floats", "y = nd.zeros((3,), dtype='int32')\ny[0] = -2.7\ny[1:] = 3.5", "y"),
    ("i8_setitem_wraps", "y = nd.zeros((2,), dtype='int8')\ny[0] = 200\ny[1] = -129.5", "y"),
    # MXNet's Cast makes a float16 of a float64 through float32 (astype, copyto, nd.array of
    # an NDArray, an NDArray assigned); numpy's conversion (nd.array of numpy data) rounds once
    ("cast_f64_f16_twice_rounded", "", "nd.array([1 + 2**-11 + 2**-40, 2049 + 2**-30], dtype='float64').astype('float16')"),
    ("array_of_nd_f64_to_f16", "", "nd.array(nd.array([1 + 2**-11 + 2**-40], dtype='float64'), dtype='float16')"),
    ("array_of_numpy_f64_to_f16", "", "nd.array(np.array([1 + 2**-11 + 2**-40]), dtype='float16')"),
    ("copyto_f64_to_f16", "y = nd.zeros((1,), dtype='float16')\nnd.array([1 + 2**-11 + 2**-40], dtype='float64').copyto(y)",
     "y"),
    ("copyto_f32_to_u8", "y = nd.zeros((3,), dtype='uint8')\nnd.array([-1.0, 300.5, 7.9]).copyto(y)", "y"),
    ("setitem_nd_f64_into_f16", "y = nd.zeros((2,), dtype='float16')\ny[:] = nd.array([1 + 2**-11 + 2**-40] * 2, "
     "dtype='float64')", "y"),
    ("setitem_nd_f32_into_i32", "y = nd.zeros((2,), dtype='int32')\ny[:] = nd.array([-2.7, 3e9])", "y"),
    # float index arrays (an nd array's asnumpy(), a list of floats) are truncated to integers
    ("index_numpy_floats", "", "a[np.array([1.7, 0.2])]"),
    ("index_list_floats", "", "a[[1.0, 0.0, 1.0]]"),
    ("index_nd_floats_negative", "", "a[nd.array([1.9, -0.5])]"),
    ("index_numpy_floats_columns", "", "a[:, np.array([2.0, 0.0])]"),
    ("index_numpy_int_scalars", "", "a[np.int64(1), np.int32(-1)]"),
    ("setitem_numpy_float_index", "y = a.copy()\ny[np.array([1.2])] = 5", "y"),
    # boolean indices: MXNet reads a numpy or list mask as the indices 1 and 0 (kvcli refuses)
    ("bool_index_numpy_mask", "", "a[np.array([True, False])]"),
    ("bool_index_list_mask", "", "a[[True, False]]"),
    ("bool_index_numpy_mask_columns", "", "a[:, np.array([True, False, True])]"),
    ("bool_index_python_true", "", "a[True]"),
    ("bool_index_setitem_mask", "y = a.copy()\ny[np.array([False, True])] = 5", "y"),
    # both operands numbers: MXNet computes in Python
    ("numbers_divide", "", "nd.divide(1, 4)"), ("numbers_maximum", "", "nd.maximum(2, 3)"),
    ("numbers_minimum_mixed", "", "nd.minimum(2.5, 1)"), ("numbers_modulo", "", "nd.modulo(7, 3)"),
    ("numbers_modulo_negative", "", "nd.modulo(-7.5, 2)"), ("numbers_power", "", "nd.power(2, 3)"),
    ("numbers_equal", "", "nd.equal(2, 2.0)"), ("numbers_lesser", "", "nd.lesser(3, 1)"),
    ("numbers_greater_equal", "", "nd.greater_equal(1.5, 1.5)"), ("numbers_subtract", "", "nd.subtract(1.5, 4)"),
    ("numbers_multiply", "", "nd.multiply(3, 0.5)"), ("numbers_not_equal", "", "nd.not_equal(1, 2)"),
]


# ---------------------------------------------------------------------- generated differential cases
#: Executed before the generated cases: ``R(seed, shape, dtype)`` makes a seeded array with
#: edge values (0, -0, +-1, NaN, +-inf for floats; 0, -1, the type's limits for integers)
#: from splitmix64 written out, so MXNet's numpy and kvcli's draw the same values.
RANDOM_SETUP = """
def _mix(i):
    z = np.asarray(i, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x632BE59BD9B4E019)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))

_FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, float('nan'), float('inf'), float('-inf'), 0.5, -2.5, 3.0]

def R(seed, shape, dtype='float32', edges=True, low=-4.0, high=4.0):
    n = int(np.prod(shape))
    words = _mix(np.arange(n, dtype=np.uint64) + np.uint64(seed * 1000003 + 7))
    edge_at = (words & np.uint64(7)) == np.uint64(0) if edges else np.zeros(n, dtype=bool)
    pick = ((words >> np.uint64(3)) % np.uint64(64)).astype(np.int64)
    if np.dtype(dtype).kind == 'f':
        values = low + (words >> np.uint64(11)).astype(np.float64) * ((high - low) / 2.0 ** 53)
        edge_values = np.array(_FLOAT_EDGES)[pick % len(_FLOAT_EDGES)]
    else:
        info = np.iinfo(dtype)
        lo, hi = max(int(low) * 5, int(info.min)), min(int(high) * 5, int(info.max))
        values = lo + (words % np.uint64(hi - lo + 1)).astype(np.int64)
        edge_values = np.array([0, info.min, info.max, 1, -1 if info.min < 0 else 2], dtype=np.int64)[pick % 5]
    values = np.where(edge_at, edge_values, values)
    return nd.array(values.reshape(shape).astype(dtype), dtype=dtype)

def P(seed, shape, dtype='float32'):
    # positive values without edges (logarithms, divisors, powers)
    return R(seed, shape, dtype, edges=False, low=0.25, high=4.0)
"""

FLOATS = ("float32", "float64", "float16")
INTS = ("int32", "int64", "uint8", "int8")
#: MXNet's element-wise maths functions (also in tests/data/make_mxnet_nd_math_reference.py).
UNARY_FUNCTIONS = (
    "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "tanh", "sinh", "cosh",
    "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "erf", "cbrt", "gamma", "gammaln",
    "sigmoid", "softsign", "sqrt", "rsqrt", "rcbrt", "reciprocal", "square", "degrees", "radians",
    "abs", "negative", "sign", "relu", "floor", "ceil", "trunc", "round", "rint", "fix",
)
_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%", "pow": "**",
              "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_FUNCTIONS = ("add", "subtract", "multiply", "divide", "modulo", "power", "maximum", "minimum", "equal",
              "not_equal", "greater", "greater_equal", "lesser", "lesser_equal")
_BROADCAST = ("add", "sub", "mul", "div", "mod", "power", "maximum", "minimum", "equal", "not_equal",
              "greater", "greater_equal", "lesser", "lesser_equal", "plus", "minus")
_REDUCTIONS = ("sum", "mean", "max", "min", "prod", "nansum", "nanprod")


#: Shape functions on seeded arrays: (case name, expression with one ``{}`` per array, shapes).
_SHAPE_FUNCTIONS: tuple[tuple[str, str, tuple[tuple[int, ...], ...]], ...] = (
    ("transpose", "nd.transpose({}, axes=(1, 0, 2))", ((2, 3, 4),)),
    ("T", "{}.T", ((2, 3),)),
    ("reshape", "{}.reshape((0, -1))", ((2, 3, 4),)),
    ("concat", "nd.concat({}, {}, dim=1)", ((2, 3), (2, 2))),
    ("stack", "nd.stack({}, {}, axis=2)", ((2, 3), (2, 3))),
    ("where", "nd.where({}, {}, {})", ((2, 3), (2, 3), (2, 3))),
    ("split", "nd.split({}, num_outputs=3, axis=1)[1]", ((2, 6),)),
    ("slice_axis", "nd.slice_axis({}, axis=1, begin=1, end=-1)", ((3, 4),)),
    ("expand_dims", "nd.expand_dims({}, axis=1)", ((2, 3),)),
    ("squeeze", "nd.squeeze({})", ((2, 1, 3),)),
    ("flatten", "nd.flatten({})", ((2, 3, 2),)),
    ("broadcast_to", "nd.broadcast_to({}, shape=(2, 4))", ((2, 1),)),
    ("broadcast_like", "nd.broadcast_like({}, nd.zeros((4, 3)))", ((1, 3),)),
    ("broadcast_axis", "nd.broadcast_axis({}, axis=1, size=3)", ((2, 1),)),
    ("add_n", "nd.add_n({}, {}, {})", ((2, 3), (2, 3), (2, 3))),
    ("add_n_five", "nd.add_n({}, {}, {}, {}, {})", ((2, 3),) * 5),
    ("getitem", "{}[1:, 2]", ((3, 4),)),
    ("moveaxis", "nd.moveaxis({}, 0, 2)", ((2, 3, 4),)),
    ("zeros_like", "nd.zeros_like({})", ((2, 3),)),
    ("ones_like", "nd.ones_like({})", ((2, 3),)),
)


def random_cases() -> list[tuple[str, str, str]]:
    """Every dense ``nd`` function and NDArray operator kvcli provides, on seeded arrays.

    Integers are never divided by zero (MXNet's process would die of SIGFPE)."""
    cases: list[tuple[str, str, str]] = []
    seed = iter(range(1, 1_000_000))

    def add(name: str, expr: str, code: str = "") -> None:
        cases.append((name, code, expr))

    for f in UNARY_FUNCTIONS:
        for dtype in FLOATS + INTS:
            add(f"{f}_{dtype}", f"nd.{f}(R({next(seed)}, (2, 3), '{dtype}'))")
        add(f"{f}_method", f"R({next(seed)}, (4,)).{f}()")
        add(f"{f}_empty", f"nd.{f}(nd.zeros((2, 0)))")
    for dtype in FLOATS + INTS:
        nonzero = "R({s}, {shape}, '{d}')" if dtype in FLOATS else "(P({s}, {shape}, '{d}') + 1)"
        for op, symbol in _OPERATORS.items():
            rhs_same = nonzero.format(s=next(seed), shape=(2, 3), d=dtype)
            rhs_row = nonzero.format(s=next(seed), shape=(3,), d=dtype)
            add(f"op_{op}_{dtype}", f"R({next(seed)}, (2, 3), '{dtype}') {symbol} {rhs_same}")
            add(f"op_{op}_{dtype}_broadcast", f"R({next(seed)}, (2, 3), '{dtype}') {symbol} {rhs_row}")
            add(f"op_{op}_{dtype}_column", f"R({next(seed)}, (2, 1), '{dtype}') {symbol} "
                                           + nonzero.format(s=next(seed), shape=(1, 3), d=dtype))
            for k, number in enumerate(("2.5", "-3", "7", "0.5")):
                if number == "0.5" and dtype in INTS and op in ("div", "mod"):
                    continue  # the scalar is cast to the integer type first: 0
                add(f"op_{op}_{dtype}_scalar{k}", f"R({next(seed)}, (2, 3), '{dtype}') {symbol} {number}")
                if dtype in FLOATS or op not in ("div", "mod"):
                    add(f"op_r{op}_{dtype}_scalar{k}", f"{number} {symbol} R({next(seed)}, (2, 3), '{dtype}')")
        for op in ("add", "sub", "mul", "div", "mod", "pow"):
            symbol = _OPERATORS[op]
            rhs = "R({s}, (2, 3), '{d}')" if dtype in FLOATS else "(P({s}, (2, 3), '{d}') + 1)"
            add(f"iop_{op}_{dtype}", "x", f"x = R({next(seed)}, (2, 3), '{dtype}')\nx {symbol}= "
                + rhs.format(s=next(seed), d=dtype))
            add(f"iop_{op}_{dtype}_scalar", "x", f"x = R({next(seed)}, (2, 3), '{dtype}')\nx {symbol}= 3")
        add(f"neg_{dtype}", f"-R({next(seed)}, (2, 3), '{dtype}')")
        add(f"abs_builtin_{dtype}", f"abs(R({next(seed)}, (2, 3), '{dtype}'))")
    for f in _FUNCTIONS:
        for dtype in ("float32", "float16", "int32"):
            second = "R({s}, (3,), '{d}')" if dtype != "int32" else "(P({s}, (3,), '{d}') + 1)"
            add(f"fn_{f}_{dtype}", f"nd.{f}(R({next(seed)}, (2, 3), '{dtype}'), " + second.format(s=next(seed), d=dtype) + ")")
            add(f"fn_{f}_{dtype}_scalar", f"nd.{f}(R({next(seed)}, (2, 3), '{dtype}'), 2)")
            add(f"fn_{f}_{dtype}_scalar_first", f"nd.{f}(3, R({next(seed)}, (2, 3), '{dtype}'))")
    for f in _BROADCAST:
        for dtype in ("float32", "float64", "int32", "uint8"):
            second = "R({s}, (1, 3), '{d}')" if dtype in FLOATS else "(P({s}, (1, 3), '{d}') + 1)"
            add(f"broadcast_{f}_{dtype}", f"nd.broadcast_{f}(R({next(seed)}, (2, 1), '{dtype}'), "
                + second.format(s=next(seed), d=dtype) + ")")
    for f in ("add", "sub", "mul", "div"):
        for dtype in ("float32", "float16", "int64"):
            second = "R({s}, (2, 3), '{d}')" if dtype in FLOATS else "(P({s}, (2, 3), '{d}') + 1)"
            add(f"elemwise_{f}_{dtype}", f"nd.elemwise_{f}(R({next(seed)}, (2, 3), '{dtype}'), "
                + second.format(s=next(seed), d=dtype) + ")")
    for name in _REDUCTIONS:
        for dtype in FLOATS + ("int32", "int64", "uint8"):
            for axis in ("None", "0", "1", "-1", "(0, 2)"):
                for keepdims in (False, True):
                    add(f"{name}_{dtype}_axis{axis}_keep{int(keepdims)}".replace(" ", ""),
                        f"nd.{name}(R({next(seed)}, (3, 4, 5), '{dtype}'), axis={axis}, keepdims={keepdims})")
            add(f"{name}_{dtype}_exclude", f"R({next(seed)}, (3, 4, 5), '{dtype}').{name}(axis=1, exclude=True)")
            add(f"{name}_{dtype}_no_edges_long", f"nd.{name}(R({next(seed)}, (3, 700), '{dtype}', edges=False), axis=1)")
            add(f"{name}_{dtype}_empty", f"nd.{name}(nd.zeros((2, 0), dtype='{dtype}'), axis=1)")
    for dtype in FLOATS:
        for low, high in ((0.0, 1.0), (-1.0, 1.0), (1000.0, 1001.0)):
            for count in (100, 3000, 5000, 20000):
                add(f"sum_{dtype}_{count}_{low:g}", f"nd.sum(R({next(seed)}, ({count},), '{dtype}', edges=False, "
                                                    f"low={low}, high={high}))")
                add(f"mean_{dtype}_{count}_{low:g}", f"nd.mean(R({next(seed)}, (2, {count}), '{dtype}', edges=False, "
                                                     f"low={low}, high={high}), axis=1)")
        for order in (1, 2):
            for axis in ("None", "0", "1", "(0, 1)"):
                for keepdims in (False, True):
                    add(f"norm{order}_{dtype}_axis{axis}_keep{int(keepdims)}".replace(" ", ""),
                        f"nd.norm(R({next(seed)}, (4, 6), '{dtype}'), ord={order}, axis={axis}, keepdims={keepdims})")
            for count in (50, 3000, 5000):
                add(f"norm{order}_{dtype}_{count}", f"nd.norm(R({next(seed)}, ({count},), '{dtype}', edges=False), ord={order})")
    for dtype in INTS[:2]:
        add(f"norm_{dtype}", f"nd.norm(R({next(seed)}, (4, 6), '{dtype}'))")
    for name in ("argmax", "argmin"):
        for dtype in FLOATS + ("int32", "uint8"):
            for axis in ("None", "0", "1", "-1"):
                add(f"{name}_{dtype}_axis{axis}", f"nd.{name}(R({next(seed)}, (4, 5), '{dtype}'), axis={axis})")
            add(f"{name}_{dtype}_keepdims", f"nd.{name}(R({next(seed)}, (4, 5), '{dtype}'), axis=1, keepdims=True)")
            add(f"{name}_{dtype}_method", f"R({next(seed)}, (4, 5), '{dtype}').{name}(axis=0)")
    for dtype in FLOATS + INTS:
        for k, (lo, hi) in enumerate(((-1, 2), (-2.5, 3.5), (0, 0), (-100, 100))):
            add(f"clip_{dtype}_{k}", f"nd.clip(R({next(seed)}, (2, 5), '{dtype}'), {lo}, {hi})")
        add(f"clip_{dtype}_method", f"R({next(seed)}, (2, 5), '{dtype}').clip(-1, 1)")
        add(f"clip_{dtype}_reversed_bounds", f"nd.clip(R({next(seed)}, (2, 5), '{dtype}'), 2, -1)")
        for target in FLOATS + INTS:
            add(f"astype_{dtype}_{target}", f"R({next(seed)}, (2, 5), '{dtype}', low=-300, high=300).astype('{target}')")
    for dtype in FLOATS + ("int32",):
        for k, (a, b, flags) in enumerate((((2, 3), (3, 4), ""), ((3,), (3,), ""), ((2, 3), (3,), ""),
                                           ((3, 2), (3, 4), ", transpose_a=True"), ((2, 3), (4, 3), ", transpose_b=True"),
                                           ((2, 2, 3), (3, 4), ""), ((5, 40), (40, 3), ""))):
            add(f"dot_{dtype}_{k}", f"nd.dot(R({next(seed)}, {a}, '{dtype}', edges=False), "
                                    f"R({next(seed)}, {b}, '{dtype}', edges=False){flags})")
        add(f"one_hot_{dtype}", f"nd.one_hot(R({next(seed)}, (5,), '{dtype}', low=-1, high=5), 4, dtype='{dtype}')")
        add(f"take_{dtype}", f"nd.take(R({next(seed)}, (4, 3), '{dtype}'), R({next(seed)}, (2, 2), edges=False, low=-2, high=6))")
        add(f"take_wrap_{dtype}", f"nd.take(R({next(seed)}, (4, 3), '{dtype}'), nd.array([-5, 7, 2]), mode='wrap')")
        for name, template, shapes in _SHAPE_FUNCTIONS:
            add(f"{name}_{dtype}", template.format(*(f"R({next(seed)}, {shape}, '{dtype}')" for shape in shapes)))
    for dtype in FLOATS + INTS:
        add(f"full_{dtype}", f"nd.full((2, 2), 2.7, dtype='{dtype}')")
        add(f"arange_{dtype}", f"nd.arange(-3, 7, 1.5, dtype='{dtype}')")
        add(f"linspace_{dtype}", f"nd.linspace(-1, 5, 7, dtype='{dtype}')")
        add(f"eye_{dtype}", f"nd.eye(3, 4, 1, dtype='{dtype}')")
        add(f"array_list_{dtype}", f"nd.array([[1.7, -2.2], [3.5, 1e3]], dtype='{dtype}')")
    for op in ("add", "mul", "eq", "gt"):
        add(f"mixed_{op}_float32_int32", f"R({next(seed)}, (2, 3)) {_OPERATORS[op]} R({next(seed)}, (2, 3), 'int32')")
        add(f"mixed_{op}_float16_float32", f"R({next(seed)}, (2, 3), 'float16') {_OPERATORS[op]} R({next(seed)}, (2, 3))")
    for f in ("exp", "sum", "abs", "relu", "sigmoid"):
        add(f"empty_{f}_vector", f"nd.{f}(nd.zeros((0,)))")
    add("empty_add", "nd.zeros((2, 0)) + nd.ones((2, 0))")
    add("empty_dot", "nd.dot(nd.zeros((2, 0)), nd.zeros((0, 3)))")
    add("empty_concat", "nd.concat(nd.zeros((2, 0)), nd.ones((2, 3)), dim=1)")
    return cases


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
    random_ns: dict = {"mx": mx, "nd": nd, "np": np}
    exec(RANDOM_SETUP, random_ns)  # noqa: S102
    generated = [{"name": n, "code": c, "expr": e, "mxnet": run_case(random_ns, c, e)} for n, c, e in random_cases()]
    names = [c["name"] for c in generated]
    assert len(set(names)) == len(names), "generated case names must be unique"
    record = {"mxnet_version": mx.__version__, "setup": RANDOM_SETUP, "cases": generated}
    (HERE / "mxnet_nd_random_reference.json").write_text(json.dumps(record, separators=(",", ":")) + "\n")
    print(f"recorded {len(generated)} generated cases")


if __name__ == "__main__":
    main()
