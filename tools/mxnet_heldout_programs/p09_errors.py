"""The errors a program catches, as the classes a try/except would see."""
import mxnet as mx


def caught(error):
    kinds = (mx.base.MXNetError, ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError,
             AssertionError, OSError, Exception)
    return "caught=%s" % [k.__name__ for k in kinds if isinstance(error, k)]


def attempt(tag, fn):
    try:
        out = fn()
        mx.nd.waitall()
        print(tag, "ok", out.asnumpy().tolist() if hasattr(out, "asnumpy") else out)
    except Exception as e:
        print(tag, caught(e))


kv = mx.kv.create("local")
kv.init(3, mx.nd.ones((2, 2)))
out = mx.nd.zeros((2, 2))
attempt("pull unknown key", lambda: kv.pull(99, out=out))
attempt("push unknown key", lambda: kv.push(98, mx.nd.ones((2, 2))))
attempt("str key in int store", lambda: kv.init("w", mx.nd.ones((2, 2))))
attempt("pull no out", lambda: kv.pull(3))
attempt("row_sparse_pull dense key", lambda: kv.row_sparse_pull(
    3, out=mx.nd.sparse.zeros("row_sparse", (2, 2)), row_ids=mx.nd.array([0], dtype="int64")))
attempt("init list length", lambda: kv.init([4, 5], [mx.nd.ones((2,))]))
attempt("unknown optimizer", lambda: mx.optimizer.create("sgdx"))
attempt("optimizer bad kw", lambda: mx.optimizer.create("sgd", learning_rat=0.1))
attempt("factor > 1", lambda: mx.lr_scheduler.FactorScheduler(step=2, factor=1.5))
attempt("factor step 0", lambda: mx.lr_scheduler.FactorScheduler(step=0))
attempt("multi not increasing", lambda: mx.lr_scheduler.MultiFactorScheduler(step=[3, 2]))
attempt("multi step 0", lambda: mx.lr_scheduler.MultiFactorScheduler(step=[0, 2]))
attempt("poly max_update 0", lambda: mx.lr_scheduler.PolyScheduler(max_update=0))
attempt("cosine max_update 0", lambda: mx.lr_scheduler.CosineScheduler(max_update=0))
attempt("warmup mode", lambda: mx.lr_scheduler.FactorScheduler(step=2, warmup_mode="cubic"))
attempt("warmup lr above base", lambda: mx.lr_scheduler.PolyScheduler(
    max_update=10, base_lr=0.1, warmup_steps=2, warmup_begin_lr=0.5))
attempt("dot shapes", lambda: mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((2, 3))))
attempt("add shapes", lambda: mx.nd.ones((2, 3)) + mx.nd.ones((3, 2)))
attempt("broadcast_add shapes", lambda: mx.nd.broadcast_add(mx.nd.ones((2, 3)), mx.nd.ones((4, 1))))
attempt("reshape count", lambda: mx.nd.ones((2, 3)).reshape((4, 2)))
attempt("index out of range", lambda: mx.nd.ones((2, 3))[5])
attempt("slice assign shape", lambda: mx.nd.ones((2, 3)).__setitem__(slice(None), mx.nd.ones((3, 2))))
attempt("asscalar of many", lambda: mx.nd.ones((2,)).asscalar())
attempt("astype bad", lambda: mx.nd.ones((2,)).astype("floatx"))
attempt("array of str", lambda: mx.nd.array(["a", "b"]))
attempt("clip a_min > a_max", lambda: mx.nd.clip(mx.nd.arange(4), 3, 1))
attempt("set_optimizer twice", lambda: (kv.set_optimizer(mx.optimizer.SGD()), kv.set_optimizer(mx.optimizer.Adam()))[1])
kv2 = mx.kv.create("device")
kv2.init(1, mx.nd.ones((3,)))
attempt("pushpull list out mismatch", lambda: kv2.pushpull(1, [mx.nd.ones((3,))] * 2, out=[mx.nd.zeros((3,))] * 3))
attempt("load missing states", lambda: kv2.load_optimizer_states("/nonexistent/states"))
upd = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))
attempt("set_states garbage", lambda: upd.set_states(b"not a state"))
attempt("updater shape mismatch", lambda: upd(0, mx.nd.ones((3,)), mx.nd.ones((2,))))
