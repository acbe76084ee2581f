"""mx.random.seed and nd.random as training scripts use them: what is reproducible (the same
seed gives the same numbers, per device or for one context), the shapes and dtypes of draws
with scalar and array parameters, out=, and shuffle keeping the elements. The numbers
themselves are not compared (kvcli's generator is not MXNet's; docs/mxnet-layer.md)."""
import numpy as np
import mxnet as mx

nd = mx.nd


def draw_all(ctx=None):
    kw = {} if ctx is None else {"ctx": ctx}
    return [nd.random.uniform(-1, 1, shape=(3, 4), **kw), nd.random.normal(0, 2, shape=(5,), **kw),
            nd.random.randint(0, 10, shape=(2, 3), **kw), nd.random.poisson(3.0, shape=(4,), **kw),
            nd.random.exponential(2.0, shape=(2, 2), **kw), nd.random.gamma(2.0, 1.5, shape=(3,), **kw),
            nd.random.randn(2, 3, **kw), mx.random.uniform(0, 1, shape=(2,), **kw)]


def same(xs, ys):
    return [bool((x.asnumpy() == y.asnumpy()).all()) for x, y in zip(xs, ys)]


mx.random.seed(7)
a = draw_all()
mx.random.seed(7)
b = draw_all()
print("same seed same numbers", same(a, b))
mx.random.seed(8)
c = draw_all()
print("other seed differs", [not s for s in same(a, c)][:2])
print("shapes", [x.shape for x in a])
print("dtypes", [np.dtype(x.dtype).name for x in a])
print("ctx", [str(x.context) for x in a])
print("ranges", bool((a[0] >= -1).min().asscalar()), bool((a[0] < 1).min().asscalar()),
      bool((a[2] >= 0).min().asscalar()), bool((a[2] < 10).min().asscalar()),
      bool((a[3] >= 0).min().asscalar()), a[2].asnumpy().dtype.kind)
print("int-valued", bool((a[3] == nd.round(a[3])).min().asscalar()), a[2].asnumpy().dtype.name)

# per-device streams: seed(s) seeds every device; seed(s, ctx) one device
mx.random.seed(11)
d0 = draw_all(mx.cpu(0))
d1 = draw_all(mx.cpu(1))
mx.random.seed(11)
e1 = draw_all(mx.cpu(1))
e0 = draw_all(mx.cpu(0))
print("per-device reproducible", same(d0, e0), same(d1, e1))
mx.random.seed(5, ctx=mx.cpu(2))
f = draw_all(mx.cpu(2))
mx.random.seed(5, ctx=mx.cpu(2))
g = draw_all(mx.cpu(2))
print("ctx seed reproducible", same(f, g), [str(x.context) for x in f][:2])

# dtypes and parameters as arrays
print("dtype f64", nd.random.uniform(0, 1, shape=(2,), dtype="float64").dtype,
      nd.random.normal(shape=(2,), dtype="float16").dtype, nd.random.randint(-5, 5, shape=(3,), dtype="int64").dtype)
low = nd.array([0.0, 10.0, 100.0])
high = nd.array([1.0, 11.0, 101.0])
u = nd.random.uniform(low, high)
print("array params", u.shape, bool(((u >= low) * (u < high)).min().asscalar()))
u2 = nd.random.uniform(low, high, shape=(4,))
print("array params shape", u2.shape, bool((u2[1] >= 10).min().asscalar()), bool((u2[2] >= 100).min().asscalar()))
n2 = nd.random.normal(nd.array([0.0, 50.0]), nd.array([1.0, 0.001]), shape=2)
print("normal array", n2.shape, bool((nd.abs(n2[1] - 50) < 0.1).min().asscalar()))
print("default shapes", nd.random.uniform().shape, nd.random.normal(shape=3).shape, mx.random.randint(0, 2).shape)
out = nd.zeros((2, 5))
r = nd.random.uniform(2, 3, out=out)
print("out=", r is out, out.shape, bool((out >= 2).min().asscalar()))
rn = mx.random.normal(0, 1, shape=(3, 3), out=nd.zeros((3, 3), dtype="float64"))
print("out f64", rn.dtype, rn.shape)

# shuffle: a permutation of the rows
mx.random.seed(3)
x = nd.arange(20).reshape((10, 2))
s = nd.random.shuffle(x)
print("shuffle rows kept", sorted(s.asnumpy().tolist()) == x.asnumpy().tolist(), s.shape, x[0].asnumpy().tolist())
mx.random.seed(3)
s2 = mx.random.shuffle(x)
print("shuffle reproducible", bool((s == s2).min().asscalar()))
mx.random.seed(123)
v1 = nd.random.uniform(shape=(1000,)).mean().asscalar()
print("mean near 0.5", abs(v1 - 0.5) < 0.05)


# which draws share a stream: every CPU context draws from one stream in MXNet
def u(ctx):
    return nd.random.uniform(shape=(3,), ctx=ctx).asnumpy().tolist()


mx.random.seed(11)
a = u(mx.cpu(0))
mx.random.seed(11)
b = u(mx.cpu(1))
print("cpu0 first == cpu1 first after seed", a == b)
mx.random.seed(11)
a0, a1 = u(mx.cpu(0)), u(mx.cpu(1))
mx.random.seed(11)
b0, b1 = u(mx.cpu(0)), u(mx.cpu(0))
print("cpu1 after cpu0 == second cpu0 draw", a1 == b1)
mx.random.seed(5, ctx=mx.cpu(2))
c = u(mx.cpu(2))
mx.random.seed(5, ctx=mx.cpu(0))
d = u(mx.cpu(0))
mx.random.seed(5)
e = u(mx.cpu(0))
print("seed(s, ctx) same on any cpu", c == d, "seed(s) == seed(s, cpu)", e == d)
mx.random.seed(5, ctx=mx.cpu(2))
print("seed of cpu(2) reseeds cpu(0)", u(mx.cpu(0)) == d)
with mx.cpu(1):
    mx.random.seed(9)
    i1 = nd.random.uniform(shape=(2,)).asnumpy().tolist()
mx.random.seed(9)
print("with cpu(1) block", i1 == nd.random.uniform(shape=(2,)).asnumpy().tolist())
