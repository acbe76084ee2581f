"""Printing arrays and saving them: str / repr of NDArrays of several dtypes, shapes and devices,
nd.save / nd.load of a dict, a list and one array (dense, row_sparse, csr), load_frombuffer."""
import hashlib
import os
import tempfile
import numpy as np
import mxnet as mx

nd = mx.nd

for x in [nd.array([1, 2, 3]), nd.array([[1.5, -2.25], [1e-8, 3e7]]), nd.zeros((2, 3), dtype="int32"),
          nd.ones((2, 2, 2), dtype="float16") / 3, nd.array([0.1, 0.2], dtype="float64"),
          nd.arange(2000).reshape((40, 50)), nd.array([7]), nd.array([np.nan, np.inf, -np.inf]),
          nd.ones((3,), ctx=mx.cpu(2)), nd.array([True, False], dtype="uint8"), nd.arange(6, dtype="int64") - 3,
          nd.ones((1, 1, 1, 1)) * 123456789, nd.array([1e-10, 1, 1e10])]:
    print(x)
    print(repr(x))
    print("shape", x.shape, "size", x.size, "ctx", x.context, "dtype", x.dtype, "stype", x.stype)

rs = nd.sparse.row_sparse_array((np.array([[1, 2], [3, 4]], dtype=np.float32), np.array([1, 3])), shape=(5, 2))
cs = nd.sparse.csr_matrix((np.array([1.5, 2.5, 3.5]), np.array([0, 2, 1]), np.array([0, 2, 2, 3])), shape=(3, 3))
print(rs)
print(repr(cs))
print(cs.indptr, cs.indices, cs.data)
print(rs.indices, rs.data.dtype, rs.indices.dtype)
print(nd.array([1, 2]).context, mx.cpu(1), mx.gpu(0), repr(mx.cpu(3)), mx.current_context())
print(str(nd.array([[1, 2]]).T), nd.array([3.25]).asscalar(), nd.array([2.5]).asscalar(), int(nd.array([2.9]).asscalar()))
print("bool", bool(nd.array([0])), bool(nd.array([2])))
print("len", len(nd.zeros((4, 2))), nd.zeros((4, 2)).shape)

tmp = tempfile.mkdtemp()
d = {"arg:fc1_weight": nd.array(np.arange(6).reshape(2, 3) / 7), "aux:bn_mean": nd.zeros((3,), dtype="float64"),
     "arg:emb": rs, "arg:csr": cs, "half": nd.ones((2,), dtype="float16") / 3, "ints": nd.arange(5, dtype="int32"),
     "u8": nd.array([1, 255], dtype="uint8"), "i64": nd.array([2 ** 40, -5], dtype="int64")}
f = os.path.join(tmp, "d.params")
nd.save(f, d)
back = nd.load(f)
print("dict keys", sorted(back.keys()))
for k in sorted(back):
    v = back[k]
    print(k, v.stype, v.dtype, v.shape, v.context, v.asnumpy().tolist())
nd.save(f, [nd.ones((2,)), rs, nd.array([[1, 2]], dtype="float64")])
lst = nd.load(f)
print("list", type(lst).__name__, [(v.stype, v.dtype, v.shape) for v in lst])
nd.save(f, nd.array([4, 5]))
one = nd.load(f)
print("single", type(one).__name__, [v.asnumpy().tolist() for v in one])
with open(f, "rb") as fh:
    raw = fh.read()
print("bytes", len(raw), raw[:16].hex())
fb = nd.load_frombuffer(raw)
print("frombuffer", type(fb).__name__, fb[0].asnumpy().tolist())
nd.save(f, d)
with open(f, "rb") as fh:
    raw = fh.read()
print("dict bytes", len(raw))
print("sha", hashlib.sha256(raw).hexdigest())
nd.save(f, {})
print("empty", nd.load(f))
nd.save(f, [])
print("empty list", nd.load(f))
