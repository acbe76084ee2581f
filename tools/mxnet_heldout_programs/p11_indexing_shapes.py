"""Indexing, slicing and assignment; take, one_hot; reshape's special codes; expand_dims,
concat, stack, split, squeeze, transpose, slice_axis, broadcast_to, flatten.

Boolean masks: MXNet 1.9.1's nd does not support boolean indexing (its docs say so; an NDArray
mask raises) but reads a numpy or list mask as the indices 1 and 0; kvcli refuses every
boolean index (docs/mxnet-layer.md).
"""
# DELIBERATE: mask -- boolean indices are refused; MXNet reads a numpy/list mask as indices 1/0
import numpy as np
import mxnet as mx

nd = mx.nd


def show(tag, x):
    if isinstance(x, (list, tuple)):
        print(tag, "list", len(x))
        for i, v in enumerate(x):
            show("%s[%d]" % (tag, i), v)
        return
    print(tag, np.dtype(x.dtype).name, x.shape, x.asnumpy().tolist())


x = nd.arange(24).reshape((2, 3, 4))
show("x", x)
show("x[1]", x[1])
show("x[-1]", x[-1])
show("x[1,2]", x[1, 2])
show("x[1,2,3]", x[1, 2, 3])
show("x[:,1]", x[:, 1])
show("x[:,:,::2]", x[:, :, ::2])
show("x[::-1]", x[::-1])
show("x[0,::-1,1:3]", x[0, ::-1, 1:3])
show("x[1:,1:]", x[1:, 1:])
show("x[...,1]", x[..., 1])
show("x[None]", x[None].shape and x[None])
show("x[:,None,1]", x[:, None, 1])
show("x[[0,1,1]]", x[[0, 1, 1]])
show("x[nd idx]", x[nd.array([1, 0], dtype="int32")])
show("x[[0,1],[2,0]]", x[[0, 1], [2, 0]])
show("x[[1,0],:,[3,1]]", x[[1, 0], :, [3, 1]])
show("x[np idx]", x[np.array([1, 1, 0])])
show("x[1][2]", x[1][2])
show("x[0,1:2]", x[0, 1:2])
show("x[-2:, -1]", x[-2:, -1])

y = nd.zeros((4, 5))
y[1] = 1
y[2, 3] = 7.5
y[0, 1:4] = nd.array([1, 2, 3])
y[1:3, 0] = 9
y[:, 4] = nd.arange(4)
y[3] = nd.array([5, 6, 7, 8, 9])
y[1:3, 1:3] = nd.array([[0.5], [0.25]])
y[-1, -2] = -3
show("y", y)
y[:] = 2
show("y[:]=2", y)
y[:] = np.arange(20).reshape(4, 5)
show("y[:]=np", y)
y[2:] += 100
show("y[2:]+=", y)
y[[0, 2]] = 0.125
show("y fancy set", y)
z = nd.zeros((3,), dtype="int32")
z[1] = 3.9
z[2] = -2.5
show("z int set", z)
r = x[1]
r[0] = -1
show("x after view set", x[1])
s = x.reshape((6, 4))
s[0] = 99
show("x after reshape view", x[0])

# take and one_hot
table = nd.arange(15).reshape((5, 3)) / 4
show("take", nd.take(table, nd.array([4, 0, 2, 2])))
show("take 2d", nd.take(table, nd.array([[1, 3], [0, 0]])))
show("take clip", nd.take(table, nd.array([-1, 7])))
show("take wrap", nd.take(table, nd.array([-1, 7, 12]), mode="wrap"))
show("take axis1", nd.take(table, nd.array([2, 0]), axis=1))
show("take axis-1 wrap", nd.take(table, nd.array([4, -2]), axis=-1, mode="wrap"))
show("one_hot", nd.one_hot(nd.array([1, 0, 3, -1, 5]), 4))
show("one_hot on/off", nd.one_hot(nd.array([[1, 2], [0, 3]]), 4, on_value=5, off_value=-1, dtype="int32"))
show("one_hot f16", nd.one_hot(nd.array([2.7, 0.2]), 3, dtype="float16"))

# reshape special codes
a = nd.arange(120).reshape((2, 3, 4, 5))
for shp in [(0, -1), (-1, 0), (0, 0, -1), (-2,), (0, -2), (2, -2), (-3, -2), (0, -3, 0), (-3, -3),
            (-4, 1, 2, -2), (0, -4, -1, 1, 0, 0), (-4, 1, -1, -2), (6, -1, 5), (-1,), (1, 2, 3, 4, 5),
            (4, 0, -1)]:
    show("reshape %s" % (shp,), nd.reshape(a, shape=shp).shape and nd.reshape(a, shape=shp)[0].reshape((-1,))[:3])
    print("  shape", nd.reshape(a, shp).shape, a.reshape(shp).shape)
print("reverse", nd.reshape(a, shape=(-1, 0), reverse=True).shape, nd.reshape(a, shape=(0, -1, 0), reverse=True).shape)
print("method kw", a.reshape(-1, 10).shape, a.reshape(shape=(4, -1)).shape, a.reshape((0, 0, 20)).shape)

# expand_dims, concat, stack, split, squeeze
b = nd.array([[1, 2, 3], [4, 5, 6]])
show("expand0", nd.expand_dims(b, axis=0))
show("expand-1", b.expand_dims(-1))
show("expand1", nd.expand_dims(b, 1))
show("concat0", nd.concat(b, b * 10, dim=0))
show("concat1", nd.concat(b, b * 10, b + 1, dim=1))
show("concat default", nd.concat(b, b))
show("stack", nd.stack(b, b * 2))
show("stack1", nd.stack(b, b * 2, axis=1))
show("stack-1", nd.stack(b, b * 2, b * 3, axis=-1))
show("split", nd.split(nd.arange(12).reshape((2, 6)), num_outputs=3, axis=1))
show("split squeeze", nd.split(nd.arange(12).reshape((2, 6)), num_outputs=2, axis=0, squeeze_axis=True))
show("split method", nd.arange(12).reshape((6, 2)).split(num_outputs=3, axis=0))
show("split one", nd.split(nd.arange(4).reshape((4, 1)), num_outputs=1, axis=1))
show("squeeze", nd.squeeze(nd.zeros((1, 3, 1, 2))))
show("squeeze axis", nd.squeeze(nd.zeros((1, 3, 1, 2)), axis=2))
show("squeeze all1", nd.squeeze(nd.ones((1, 1))))
show("transpose", nd.transpose(a, axes=(3, 0, 2, 1))[0, 0])
show("T", b.T)
show("swap", a.transpose((1, 0, 2, 3)).shape and a.transpose((1, 0, 2, 3))[2, 1, 0])
show("slice_axis", nd.slice_axis(a, axis=2, begin=1, end=3)[1, 2])
show("slice_axis neg", nd.slice_axis(a, axis=-1, begin=-2, end=None)[0, 0])
show("slice", nd.slice(b, begin=(0, 1), end=(2, 3)))
show("slice step", nd.slice(nd.arange(10), begin=(8,), end=(1,), step=(-3,)))
show("slice none", nd.slice(b, begin=(None, 1), end=(None, None)))
show("broadcast_to", nd.broadcast_to(nd.array([[1], [2]]), shape=(2, 3)))
show("broadcast_to 0", nd.broadcast_to(nd.array([[1, 2, 3]]), shape=(2, 0)))
show("broadcast_axis", nd.broadcast_axis(nd.array([[1], [2]]), axis=1, size=4))
show("broadcast_like", nd.broadcast_like(nd.array([[7]]), b))
show("flatten", nd.flatten(a).shape and nd.flatten(a)[1, :5])
show("flatten 1d", nd.flatten(nd.arange(3)))
show("moveaxis", nd.moveaxis(a, 0, -1).shape and nd.moveaxis(a, 0, -1)[1, 1, 1])
show("tile-free repeat", nd.concat(*[b] * 3, dim=0))
print("size ndim", a.size, a.ndim, len(a), b.shape[::-1])
for row in b:
    show("iter", row)


def caught(error):
    kinds = (mx.base.MXNetError, ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError,
             AssertionError, OSError, Exception)
    return "caught=%s" % [k.__name__ for k in kinds if isinstance(error, k)]


def attempt(tag, fn):
    try:
        show(tag, fn())
    except Exception as e:
        print(tag, caught(e))


m = nd.array([[1.5, 2.5, -3], [4, 5, 6]])
attempt("mask np", lambda: m[np.array([True, False])])
attempt("mask list", lambda: m[[True, False]])
attempt("mask cols", lambda: m[:, np.array([True, False, True])])
# float indices, as from an nd array's asnumpy(), are truncated to integers
show("float np idx", m[np.array([1.7, 0.2])])
show("float list idx", m[[1.0, 0.0, 1.0]])
show("float nd idx", m[nd.array([1.9, -0.5])])
show("float idx cols", m[:, np.array([2.0, 0.0])])
show("int np scalar idx", m[np.int64(1), np.int32(-1)])
# scalars assigned to integer arrays are converted as C converts
u8 = nd.array([1, 2, 3], dtype="uint8")
u8[0] = -1
u8[1] = 300
u8[2] = 7.9
show("u8 set", u8)
i32 = nd.array([1, 2, 3], dtype="int32")
i32[0] = -2.7
i32[1:] = 3.5
show("i32 set", i32)
f16 = nd.zeros((2,), dtype="float16")
f16[0] = 1 / 3.0
f16[1] = 70000
show("f16 set", f16)
