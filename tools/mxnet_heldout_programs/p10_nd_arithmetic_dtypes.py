"""nd arithmetic as users write it: scalar and reverse operators on every dtype, in-place
operators, comparisons, broadcasting operators, clip, where, reductions with axis / keepdims /
exclude, argmax / argmin / topk."""
import numpy as np
import mxnet as mx

nd = mx.nd


def show(tag, x):
    if isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            show("%s[%d]" % (tag, i), v)
        return
    print(tag, x.dtype.__name__ if hasattr(x.dtype, "__name__") else x.dtype, x.shape, x.asnumpy().tolist())


base = (np.arange(12).reshape(3, 4) - 5) * 0.75
for dt in ("float32", "float64", "float16", "int32", "int64", "uint8", "int8"):
    src = np.abs(base) if dt == "uint8" else base
    a = nd.array(src, dtype=dt)
    b = nd.array(np.arange(1, 13).reshape(3, 4) % 5 + 1, dtype=dt)
    show(dt + " a", a)
    show(dt + " a+2", a + 2)
    show(dt + " 2-a", 2 - a)
    show(dt + " a*1.5", a * 1.5)
    show(dt + " 3/b", 3 / b)
    show(dt + " a/b", a / b)
    show(dt + " a%b", a % b)
    show(dt + " 7%b", 7 % b)
    show(dt + " b**2", b ** 2)
    show(dt + " 2**b", 2 ** b)
    show(dt + " -a", -a)
    show(dt + " abs", abs(a))
    show(dt + " a>b", a > b)
    show(dt + " a==1", a == 1)
    show(dt + " 1<=a", 1 <= a)
    show(dt + " a!=b", a != b)
    show(dt + " max", nd.maximum(a, 1))
    show(dt + " min", nd.minimum(a, b))
    c = a.copy()
    c += b
    c *= 2
    c -= 1
    show(dt + " inplace", c)
    c /= 3
    show(dt + " idiv", c)
    show(dt + " clip", nd.clip(a, -1, 2))
    show(dt + " sum", nd.sum(a))
    show(dt + " sum0", nd.sum(a, axis=0))
    show(dt + " sum1k", nd.sum(a, axis=1, keepdims=True))
    show(dt + " mean", a.mean(axis=0))
    show(dt + " prod", nd.prod(b, axis=1))
    show(dt + " max ex", nd.max(a, axis=1, exclude=True))
    show(dt + " min -1", a.min(axis=-1))
    show(dt + " argmax", nd.argmax(a, axis=1))
    show(dt + " argmin", nd.argmin(b, axis=0))
    show(dt + " topk", nd.topk(b, k=2))
    show(dt + " topk both", nd.topk(b, axis=0, k=2, ret_typ="both"))
    show(dt + " topk value", nd.topk(a, k=3, ret_typ="value", is_ascend=True))
    show(dt + " topk mask", nd.topk(a, k=1, ret_typ="mask"))
    show(dt + " where", nd.where(a > 0, a, b))
    show(dt + " bcast", nd.broadcast_mul(a, nd.array([[1], [2], [3]], dtype=dt)))
    show(dt + " bcast sub", nd.broadcast_sub(nd.array([1, 2, 3, 4], dtype=dt).reshape((1, 4)), b))
    show(dt + " bcast pow", nd.broadcast_power(b, nd.array([[2], [1], [0]], dtype=dt)))
    show(dt + " bcast max", nd.broadcast_maximum(a, nd.array([0, 1, 2, 3], dtype=dt)))
    show(dt + " bcast mod", nd.broadcast_mod(a, nd.array([[2], [3], [4]], dtype=dt)))
    show(dt + " bcast eq", nd.broadcast_equal(b, nd.array([2, 3, 4, 5], dtype=dt).reshape((1, 4))))
    show(dt + " astype", a.astype("float32") / 7)
    print(dt, "asscalar", nd.sum(a).asscalar(), type(nd.sum(a).asscalar()).__name__)

# float scalars with float16 and float64
h = nd.array([0.1, 0.2, 1 / 3.0, 1e-4, 65000], dtype="float16")
d = nd.array([0.1, 0.2, 1 / 3.0, 1e-4, 65000], dtype="float64")
for tag, x in (("f16", h), ("f64", d)):
    show(tag + " +0.1", x + 0.1)
    show(tag + " *3.3", x * 3.3)
    show(tag + " 1/x", 1 / x)
    show(tag + " x**0.5", x ** 0.5)
    show(tag + " sqrt", nd.sqrt(x))
    show(tag + " exp", nd.exp(x / 10000))
    show(tag + " log", nd.log(x))
    show(tag + " sum", x.sum())
    show(tag + " mean", x.mean())
    show(tag + " norm", x.norm())

# dot and reductions of larger arrays
x = nd.array((np.arange(60).reshape(5, 12) % 7 - 3) / 3.0)
show("norm axis", nd.norm(x, axis=1))
show("norm keep", nd.norm(x, ord=1, axis=0, keepdims=True))
show("mean big", nd.mean(nd.array(np.linspace(0, 1, 999)), axis=0))
show("sum exclude", nd.sum(x.reshape((5, 3, 4)), axis=(0, 2), exclude=True))
show("sum tuple", nd.sum(x.reshape((5, 3, 4)), axis=(0, 2)))
show("nansum", nd.nansum(nd.array([1.0, float("nan"), 2.5])))
show("dot", nd.dot(nd.array([[1, 2], [3, 4]]), nd.array([[0.5], [0.25]])))
show("dot tA", nd.dot(nd.array([[1, 2], [3, 4]]), nd.array([[1, 2], [3, 4]]), transpose_a=True))
show("dot tB", nd.dot(nd.array([[1, 2], [3, 4]]), nd.array([[1, 2], [3, 4]]), transpose_b=True))
show("dot vec", nd.dot(nd.array([1, 2, 3]), nd.array([4, 5, 6])))

# edge values: wrapping integers, float16 range, NaN, halves, scalars on both sides
print("u8 wrap", (nd.array([1, 2], dtype="uint8") - 3).asnumpy().tolist(), (-nd.array([1, 2], dtype="uint8")).asnumpy().tolist())
print("i8 wrap", (nd.array([100, -100], dtype="int8") * 2).asnumpy().tolist(),
      nd.sum(nd.array([200, 100], dtype="uint8")).asnumpy().tolist())
print("i32 big scalar", (nd.array([1], dtype="int32") * 0.9).asnumpy().tolist(),
      (nd.array([7], dtype="int32") + 2.9).asnumpy().tolist())
print("f16 range", (nd.array([60000], dtype="float16") * 2).asnumpy().tolist(),
      (nd.array([1], dtype="float16") + 1e-4).asnumpy().tolist())
print("int div", (nd.array([5, -5], dtype="int32") / -2).asnumpy().tolist(),
      (nd.array([5, -5], dtype="int32") % -2).asnumpy().tolist())
print("float mod", (nd.array([5.5, -5.5]) % -2).asnumpy().tolist(), nd.modulo(nd.array([-7.5]), nd.array([2])).asnumpy().tolist())
print("pow", (nd.array([2.0, 0.0]) ** -1).asnumpy().tolist(), (nd.array([2, 1], dtype="int32") ** -1).asnumpy().tolist(),
      nd.power(2, nd.array([0.5, 2])).asnumpy().tolist())
print("round", nd.round(nd.array([0.5, 1.5, 2.5, -0.5, -2.5])).asnumpy().tolist(),
      nd.rint(nd.array([0.5, 1.5, 2.5, -0.5, -2.5])).asnumpy().tolist(), nd.fix(nd.array([1.7, -1.7])).asnumpy().tolist())
print("nan", nd.maximum(nd.array([float("nan"), 1]), nd.array([1, float("nan")])).asnumpy().tolist(),
      nd.max(nd.array([1, float("nan"), 3])).asnumpy().tolist(),
      nd.argmax(nd.array([1, float("nan"), 3]), axis=0).asnumpy().tolist(),
      nd.sign(nd.array([-0.0, 2, -3, float("nan")])).asnumpy().tolist())
print("argmax ties", nd.argmax(nd.array([3, 1, 3]), axis=0).asnumpy().tolist(),
      nd.argmax(nd.array([[3, 1], [5, 0]])).asnumpy().tolist(),
      nd.argmin(nd.array([[3, 1], [5, 0]], dtype="int32"), axis=1).asnumpy().tolist())
print("topk edge", [t.asnumpy().tolist() for t in nd.topk(nd.array([3, 1, 3, 2], dtype="int32"), k=2, ret_typ="both")],
      nd.topk(nd.array([3, 1, 3, 2]), k=2, dtype="int32").asnumpy().tolist(),
      nd.topk(nd.array([[3, 1], [3, 2]]), axis=None, k=3).asnumpy().tolist())
print("int maths", nd.sqrt(nd.array([2, 4], dtype="int32")).asnumpy().tolist(),
      nd.exp(nd.array([1, 2], dtype="int32")).asnumpy().tolist(),
      nd.reciprocal(nd.array([2, 1], dtype="int32")).asnumpy().tolist(),
      nd.abs(nd.array([-128], dtype="int8")).asnumpy().tolist())
print("special", nd.gamma(nd.array([0.5, 5, -1.5])).asnumpy().tolist(), nd.gammaln(nd.array([0.5, 5, -1.5])).asnumpy().tolist(),
      nd.erf(nd.array([0.5, -2])).asnumpy().tolist(), nd.cbrt(nd.array([-8.0, 27.5])).asnumpy().tolist(),
      nd.rcbrt(nd.array([-8.0, 27.5])).asnumpy().tolist(), nd.degrees(nd.array([1.0])).asnumpy().tolist())
print("where bcast cond", nd.where(nd.array([1, 0]), nd.array([[1, 2], [3, 4]]), nd.array([[5, 6], [7, 8]])).asnumpy().tolist())
print("np scalars", (np.float32(0.5) * nd.array([3.0])).asnumpy().tolist(),
      (nd.array([3.0]) * np.float64(0.1)).asnumpy().tolist(),
      (np.int64(2) + nd.array([1.5])).asnumpy().tolist())
m = nd.maximum(2, 3)
print("scalar-scalar", m, type(m).__name__, nd.minimum(2.5, 1), nd.add(2, 3), nd.power(2, 3), nd.modulo(7, 3),
      nd.equal(2, 2), nd.lesser(3, 1), nd.subtract(1.5, 4), nd.divide(1, 4), nd.multiply(3, 0.5))

# a Python number is a double to MXNet: float16 gets it through float32, int64 loses low bits
v = 1 + 2 ** -11 + 2 ** -40
h16 = nd.zeros((2,), dtype="float16")
h16[0] = v
print("f16 scalar", (nd.zeros((1,), dtype="float16") + v).asnumpy().tolist(), h16.asnumpy().tolist(),
      nd.full((1,), v, dtype="float16").asnumpy().tolist(), (nd.ones((1,), dtype="float16") < v).asnumpy().tolist())
print("f64 to f16", nd.array([v], dtype="float64").astype("float16").asnumpy().tolist(),
      nd.array(np.array([v]), dtype="float16").asnumpy().tolist())
big = nd.zeros((2,), dtype="int64")
big[0] = 2 ** 62 + 1
print("i64 scalar", (nd.zeros((1,), dtype="int64") + (2 ** 62 + 1)).asnumpy().tolist(), big.asnumpy().tolist())
# test_utils' default tolerances follow the dtype
for x, y in ((nd.array([1.0]), nd.array([1.0005])), (nd.array([1.0], dtype="float64"), nd.array([1.00005], dtype="float64")),
             (nd.array([1.0], dtype="float16"), nd.array([1.005], dtype="float16"))):
    try:
        mx.test_utils.assert_almost_equal(x, y)
        print("assert_almost_equal", np.dtype(x.dtype).name, "passes")
    except AssertionError as e:
        print("assert_almost_equal", np.dtype(x.dtype).name, "fails", str(e).splitlines()[2])
