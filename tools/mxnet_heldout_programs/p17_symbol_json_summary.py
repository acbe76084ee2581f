"""Symbols as a user builds them to inspect a network: composition, list_arguments /
list_outputs / list_auxiliary_states, infer_shape (full and partial), infer_type, attributes,
get_internals, tojson / load_json round trips (the JSON text itself), save, and
mx.viz.print_summary of small nets.

list_attr() and attr_dict() give MXNet's dicts, but their keys in the order they were set:
MXNet's order is that of its C++ hash map (docs/mxnet-layer.md)."""
# DELIBERATE: attr order -- list_attr's key order is MXNet's C++ unordered_map's
import json
import os
import tempfile
import mxnet as mx

sym = mx.sym

data = sym.Variable("data")
fc1 = sym.FullyConnected(data=data, num_hidden=64, name="fc1")
act1 = sym.Activation(data=fc1, act_type="relu", name="relu1")
drop = sym.Dropout(data=act1, p=0.3, name="drop1")
fc2 = sym.FullyConnected(data=drop, num_hidden=10, name="fc2", no_bias=True)
net = sym.SoftmaxOutput(data=fc2, name="softmax")

print("args", net.list_arguments())
print("outputs", net.list_outputs())
print("aux", net.list_auxiliary_states())
print("inputs", net.list_inputs())
print("name", net.name, fc1.name, data.name)
arg_shapes, out_shapes, aux_shapes = net.infer_shape(data=(32, 100))
print("infer_shape", arg_shapes, out_shapes, aux_shapes)
print("infer_shape kw", net.infer_shape(data=(8, 3, 5)))
print("partial", net.infer_shape_partial(data=(0, 100)))
print("infer_type", net.infer_type(data="float16"))
print("infer_type default", fc1.infer_type())
internals = net.get_internals()
print("internals", internals.list_outputs())
feat = internals["relu1_output"]
print("feature", feat.list_arguments(), feat.infer_shape(data=(4, 7))[1])
print("children", net.get_children().list_outputs() if net.get_children() is not None else None)

# convolutional net with batch norm: aux states and shapes
img = sym.Variable("img")
c1 = sym.Convolution(data=img, kernel=(3, 3), num_filter=8, pad=(1, 1), stride=(2, 2), name="conv1")
bn = sym.BatchNorm(data=c1, fix_gamma=False, name="bn1")
a1 = sym.Activation(bn, act_type="tanh")
p1 = sym.Pooling(data=a1, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool1")
c2 = sym.Convolution(data=p1, kernel=(3, 3), num_filter=16, name="conv2", no_bias=True)
gp = sym.Pooling(data=c2, global_pool=True, pool_type="avg", kernel=(1, 1), name="gap")
fl = sym.Flatten(gp, name="flat")
out = sym.FullyConnected(fl, num_hidden=5, name="fc")
cnet = sym.SoftmaxOutput(out, name="sm")
print("cnn args", cnet.list_arguments())
print("cnn aux", cnet.list_auxiliary_states())
print("cnn shapes", cnet.infer_shape(img=(2, 3, 32, 32)))
print("cnn types", cnet.infer_type(img="float64"))
print("cnn attr", c1.attr("kernel"), c1.attr("num_filter"), sorted(c1.list_attr().items()), bn.attr_dict().get("bn1"))
print("attr order", c1.list_attr())

# arithmetic on symbols and groups
a = sym.Variable("a", shape=(3, 4))
b = sym.Variable("b")
c = (a * 2 + b) / (a - 1) ** 2
g = sym.Group([c, sym.sum(a, axis=1, keepdims=True), sym.broadcast_add(a, b)])
print("group outputs", g.list_outputs(), len(g))
print("group shapes", g.infer_shape(b=(3, 4)))
print("var attrs", a.attr("__shape__"), a.list_attr())
w = sym.Variable("w", shape=(5, 4), dtype="float64", lr_mult=2.0, init="zeros")
print("var w", sorted(w.list_attr().items()), sorted(w.attr_dict()["w"].items()))
r = sym.reshape(sym.Variable("x"), shape=(0, -1))
t = sym.transpose(r, axes=(1, 0))
print("reshape infer", t.infer_shape(x=(2, 3, 4)))
cc = sym.concat(sym.Variable("p"), sym.Variable("q"), dim=1, name="cat")
print("concat infer", cc.infer_shape(p=(2, 3), q=(2, 5)), cc.list_arguments())
sp = sym.split(sym.Variable("s"), num_outputs=3, axis=1, name="spl")
print("split outs", sp.list_outputs(), sp.infer_shape(s=(2, 6))[1])
emb = sym.Embedding(sym.Variable("ids"), input_dim=100, output_dim=16, name="emb")
print("emb", emb.list_arguments(), emb.infer_shape(ids=(4, 7)))

# json round trip
js = net.tojson()
back = sym.load_json(js)
print("roundtrip args", back.list_arguments() == net.list_arguments(), back.tojson() == js)
parsed = json.loads(js)
print("json keys", sorted(parsed.keys()), parsed["heads"], parsed["arg_nodes"], parsed["attrs"])
for node in parsed["nodes"]:
    print("node", node["op"], node["name"], node.get("attrs"), node["inputs"])
cjs = json.loads(cnet.tojson())
for node in cjs["nodes"]:
    print("cnode", node["op"], node["name"], node.get("attrs"), node["inputs"])
print("node_row_ptr", cjs["node_row_ptr"])
print(repr(net), str(fc1), repr(data))

# print_summary of both nets
mx.viz.print_summary(net, shape={"data": (32, 100)})
mx.viz.print_summary(cnet, shape={"img": (2, 3, 32, 32)}, line_length=100, positions=[.40, .60, .75, 1.])
mx.viz.print_summary(g, shape={"b": (3, 4)})

print(net.tojson())
print(cnet.tojson())
print(g.tojson())
path = os.path.join(tempfile.mkdtemp(), "net-symbol.json")
cnet.save(path)
with open(path, "rb") as f:
    raw = f.read()
print("saved", len(raw), repr(raw[-3:]), raw == cnet.tojson().encode())
odd = sym.Variable("x\u00e9\"q\\n", attr={"note": "tab\there"})
print(sym.Group([odd, sym.FullyConnected(odd, num_hidden=2, name="f\u00fc")]).tojson())
