"""A hand-written linear regression in mx.nd as users write it: dot, broadcasting, clip,
norm, sqrt, in-place +=, slice assignment, astype; global-norm gradient clipping.

The loop with nd.dot drifts from MXNet's in the last bits: kvcli's dot sums through numpy's
BLAS (docs/mxnet-layer.md); the same loop with broadcasting and sums instead of dot is compared
bit for bit ("bcast-epoch").
"""
# DELIBERATE: dot-epoch -- nd.dot's BLAS order (docs/mxnet-layer.md)
# DELIBERATE: dot-w -- nd.dot's BLAS order (docs/mxnet-layer.md)
import numpy as np
import mxnet as mx

nd = mx.nd

n, d = 12, 4
X = nd.array((np.arange(n * d).reshape(n, d) % 7 - 3) / 5.0)
true_w = nd.array([[0.5], [-1.25], [2.0], [0.75]])
def matmul(a, b, use_dot):
    """a (m x k) times b (k x p) with nd.dot, or by broadcasting and summing."""
    if use_dot:
        return nd.dot(a, b)
    return nd.sum(nd.expand_dims(a, 2) * nd.expand_dims(b, 0), axis=1)


y = matmul(X, true_w, False) + 0.3
for tag, use_dot in (("dot", True), ("bcast", False)):
    w = nd.zeros((d, 1))
    b = nd.zeros((1,))
    m_w, v_w = nd.zeros_like(w), nd.zeros_like(w)
    lr, beta1, beta2, eps = 0.05, 0.9, 0.999, 1e-8
    for epoch in range(15):
        for start in range(0, n, 4):
            xb, yb = X[start:start + 4], y[start:start + 4]
            pred = matmul(xb, w, use_dot) + b
            err = pred - yb
            gw = matmul(xb.T, err, use_dot) / xb.shape[0]
            gb = nd.sum(err, axis=0) / xb.shape[0]
            # clip by global norm
            total = nd.sqrt(nd.sum(gw * gw) + nd.sum(gb * gb)).asscalar()
            if total > 1.0:
                gw *= 1.0 / total
                gb = gb / total
            gw = nd.clip(gw, -0.5, 0.5)
            m_w[:] = beta1 * m_w + (1 - beta1) * gw
            v_w[:] = beta2 * v_w + (1 - beta2) * nd.square(gw)
            t = epoch * 3 + start // 4 + 1
            mhat = m_w / (1 - beta1 ** t)
            vhat = v_w / (1 - beta2 ** t)
            w -= lr * mhat / (nd.sqrt(vhat) + eps)
            b += -lr * gb
        loss = nd.mean(nd.square(matmul(X, w, use_dot) + b - y))
        print(tag + "-epoch", epoch, repr(float(loss.asscalar())), repr(float(nd.norm(w).asscalar())))
    print(tag + "-w", w.asnumpy().tolist(), "b", b.asnumpy().tolist())

# broadcasting, slicing and dtype conversions seen in data pipelines
a = nd.arange(12).reshape((3, 4))
a[1] = 7
a[:, 2] = nd.array([0.5, 1.5, 2.5])
a[2, 1:3] += 10
print("a", a.asnumpy().tolist(), a.dtype)
c = (a - a.mean(axis=1, keepdims=True)) / (a.max(axis=0) - a.min(axis=0) + 1)
print("c", c.asnumpy().tolist())
print("astype", a.astype("int32").asnumpy().tolist(), (a.astype("int32") / 2).asnumpy().tolist())
print("f16", (a.astype("float16") * 0.1).asnumpy().tolist())
print("argmax", nd.argmax(c, axis=1).asnumpy().tolist(), nd.topk(c, k=2, axis=1).asnumpy().tolist())
print("onehot", nd.one_hot(nd.array([2, 0, 1]), 4).asnumpy().tolist())
print("norm", repr(float(nd.norm(c).asscalar())), nd.norm(c, ord=1, axis=0).asnumpy().tolist())
print("sm-ish", (nd.exp(c) / nd.sum(nd.exp(c), axis=1, keepdims=True)).asnumpy().tolist())
print("where", nd.where(c > 0, c, nd.zeros_like(c)).asnumpy().tolist())
print("bcast", nd.broadcast_mul(nd.ones((2, 1, 3)), nd.arange(4).reshape((1, 4, 1))).shape,
      nd.broadcast_add(a[0:1], a[:, 0:1]).asnumpy().tolist())
# random numbers: shapes and ranges only (values differ on purpose)
mx.random.seed(42)
r = nd.random.uniform(-1, 1, shape=(3, 4))
print("random", r.shape, r.dtype, bool((r.abs() <= 1).min().asscalar()),
      nd.random.normal(0, 1, shape=(2,)).shape, nd.random.randint(0, 5, shape=(4,)).dtype)
