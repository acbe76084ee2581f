"""Re-create the sample symbol graphs in this folder with kvcli's builder (``kvcli.mx.sym``).

    python sample_graphs/make_samples.py            # writes sample_graphs/*.json

Every input variable carries a ``__shape__`` hint (``sym.Variable(..., shape=...)``), so
``kvcli viz FILE`` and ``kvcli summary FILE`` need no ``--shape`` (``--shape`` overrides).
MXNet 1.9.1 loads each file and its ``infer_shape`` gives the totals in tests/symbol.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import kvcli.mx as mx
from kvcli.mx import sym
from kvcli.symbol.build import NameManager, Symbol

HERE = Path(__file__).resolve().parent


def matrix_factorization() -> Symbol:
    """The tutorial's (seed's) network, with batch-1 shape hints on its three inputs."""
    user = sym.Variable('user', shape=(1,))
    item = sym.Variable('item', shape=(1,))
    score = sym.Variable('score', shape=(1,))  # label for training
    k, max_user_id, max_item_id = 64, 1000, 500
    user_embedding = sym.Embedding(data=user, input_dim=max_user_id, output_dim=k, name='user_embedding')
    item_embedding = sym.Embedding(data=item, input_dim=max_item_id, output_dim=k, name='item_embedding')
    pred = user_embedding * item_embedding
    pred = sym.sum_axis(data=pred, axis=1, name='sum_ reducción')
    pred = sym.Flatten(data=pred, name='flatten_output')
    return sym.LinearRegressionOutput(data=pred, label=score, name='lro')


def mlp() -> Symbol:
    """MNIST multilayer perceptron: 784 → 128 → 64 → 10 (MXNet's classic example)."""
    data = sym.Variable('data', shape=(1, 784))
    net = sym.FullyConnected(data=data, name='fc1', num_hidden=128)
    net = sym.Activation(data=net, name='relu1', act_type='relu')
    net = sym.FullyConnected(data=net, name='fc2', num_hidden=64)
    net = sym.Activation(data=net, name='relu2', act_type='relu')
    net = sym.Dropout(data=net, p=0.5)
    net = sym.FullyConnected(data=net, name='fc3', num_hidden=10)
    return sym.SoftmaxOutput(data=net, name='softmax')


def lenet() -> Symbol:
    """LeNet-5 with BatchNorm (so the summary has auxiliary states)."""
    data = sym.Variable('data', shape=(1, 1, 28, 28))
    net = sym.Convolution(data=data, kernel=(5, 5), num_filter=20, name='conv1')
    net = sym.Activation(data=net, act_type='tanh')
    net = sym.Pooling(data=net, pool_type='max', kernel=(2, 2), stride=(2, 2))
    net = sym.Convolution(data=net, kernel=(5, 5), num_filter=50, name='conv2')
    net = sym.BatchNorm(data=net, fix_gamma=False, name='bn2')
    net = sym.Activation(data=net, act_type='tanh')
    net = sym.Pooling(data=net, pool_type='max', kernel=(2, 2), stride=(2, 2))
    net = sym.Flatten(data=net)
    net = sym.FullyConnected(data=net, num_hidden=500, name='fc1')
    net = sym.Activation(data=net, act_type='tanh')
    net = sym.FullyConnected(data=net, num_hidden=10, name='fc2')
    return sym.SoftmaxOutput(data=net, name='softmax')


def mini_resnet() -> Symbol:
    """Two residual blocks, a strided projection and global average pooling."""
    data = sym.Variable('data', shape=(1, 3, 32, 32))

    def conv_bn(x: Symbol, name: str, filters: int, stride: int = 1, kernel: int = 3) -> Symbol:
        pad = kernel // 2
        x = sym.Convolution(data=x, num_filter=filters, kernel=(kernel, kernel), stride=(stride, stride),
                            pad=(pad, pad), no_bias=True, name=f'{name}_conv')
        return sym.BatchNorm(data=x, fix_gamma=False, eps=2e-5, name=f'{name}_bn')

    net = sym.Activation(conv_bn(data, 'stem', 16), act_type='relu', name='stem_relu')
    for i, (filters, stride) in enumerate([(16, 1), (32, 2)]):
        body = sym.Activation(conv_bn(net, f'b{i}a', filters, stride), act_type='relu', name=f'b{i}a_relu')
        body = conv_bn(body, f'b{i}b', filters)
        shortcut = net if stride == 1 else conv_bn(net, f'b{i}proj', filters, stride, kernel=1)
        net = sym.Activation(body + shortcut, act_type='relu', name=f'b{i}_relu')
    net = sym.Pooling(data=net, global_pool=True, pool_type='avg', kernel=(1, 1), name='gap')
    net = sym.Flatten(data=net)
    net = sym.FullyConnected(data=net, num_hidden=10, name='fc')
    return sym.SoftmaxOutput(data=net, name='softmax')


def lstm_unrolled(steps: int = 4, layers: int = 2, hidden: int = 32, vocab: int = 50,
                  embed: int = 16) -> Symbol:
    """A char-RNN like MXNet's old lstm.py: Embedding, LSTM cells unrolled, shared weights."""
    batch = 1
    embed_weight = sym.Variable('embed_weight')
    cls_weight, cls_bias = sym.Variable('cls_weight'), sym.Variable('cls_bias')
    params = [dict(i2h_w=sym.Variable(f'l{l}_i2h_weight'), i2h_b=sym.Variable(f'l{l}_i2h_bias'),
                   h2h_w=sym.Variable(f'l{l}_h2h_weight'), h2h_b=sym.Variable(f'l{l}_h2h_bias'))
              for l in range(layers)]
    states = [(sym.Variable(f'l{l}_init_h', shape=(batch, hidden)),
               sym.Variable(f'l{l}_init_c', shape=(batch, hidden))) for l in range(layers)]
    outputs = []
    for t in range(steps):
        x = sym.Variable(f'data/{t}', shape=(batch,))
        h = sym.Embedding(data=x, weight=embed_weight, input_dim=vocab, output_dim=embed, name=f't{t}_embed')
        for l in range(layers):
            p, (prev_h, prev_c) = params[l], states[l]
            gates = (sym.FullyConnected(data=h, weight=p['i2h_w'], bias=p['i2h_b'], num_hidden=4 * hidden,
                                        name=f't{t}_l{l}_i2h')
                     + sym.FullyConnected(data=prev_h, weight=p['h2h_w'], bias=p['h2h_b'],
                                          num_hidden=4 * hidden, name=f't{t}_l{l}_h2h'))
            g = sym.SliceChannel(gates, num_outputs=4, name=f't{t}_l{l}_slice')
            in_gate, forget_gate = sym.sigmoid(g[0]), sym.sigmoid(g[1])
            in_transform, out_gate = sym.tanh(g[2]), sym.sigmoid(g[3])
            c = forget_gate * prev_c + in_gate * in_transform
            h = out_gate * sym.tanh(c)
            states[l] = (h, c)
        logits = sym.FullyConnected(data=h, weight=cls_weight, bias=cls_bias, num_hidden=vocab,
                                    name=f't{t}_cls')
        label = sym.Variable(f'label/{t}', shape=(batch,))
        outputs.append(sym.SoftmaxOutput(data=logits, label=label, name=f't{t}_sm'))
    return sym.Group(outputs)


def rnn_fused() -> Symbol:
    """A bidirectional 2-layer fused LSTM (``sym.RNN``) language model, sequence-major (TNC)."""
    data = sym.Variable('data', shape=(10, 1))  # (time, batch) of token ids
    net = sym.Embedding(data=data, input_dim=100, output_dim=32, name='embed')
    net = sym.RNN(data=net, state_size=64, num_layers=2, mode='lstm', bidirectional=True,
                  name='lstm')
    net = sym.Reshape(data=net, shape=(-3, -2), name='merge_time_batch')
    net = sym.FullyConnected(data=net, num_hidden=100, name='decoder')
    return sym.SoftmaxOutput(data=net, name='softmax')


SAMPLES: dict[str, Callable[[], Symbol]] = {
    "matrix_factorization": matrix_factorization,
    "mlp": mlp,
    "lenet": lenet,
    "mini_resnet": mini_resnet,
    "lstm_unrolled": lstm_unrolled,
    "rnn_fused": rnn_fused,
}


def main() -> None:
    for name, make in SAMPLES.items():
        NameManager.reset()  # MXNet-style auto names start at 0 in every file
        path = HERE / f"{name}.json"
        make().save(path)
        print(f"wrote {path.relative_to(HERE.parent)}")


if __name__ == "__main__":
    assert mx.sym is sym  # the samples are built with the MXNet-style shim
    main()
