"""Operator shape rules against MXNet 1.9.1: every expected value below was printed by
real MXNet (``sym.<op>(...).infer_shape(x=...)``), arguments in ``list_arguments`` order."""

from __future__ import annotations

from typing import Callable

import pytest

from kvcli.mx import sym
from kvcli.symbol.build import Symbol


def x() -> Symbol:
    return sym.Variable("x")


CASES: list[tuple[str, Callable[[], Symbol], tuple, list, list, list]] = [
    ('Reshape 0,-1', lambda: sym.Reshape(x(), shape=(0,-1)), (2, 3, 4, 5), [(2, 3, 4, 5)], [(2, 60)], []),
    ('Reshape -2', lambda: sym.Reshape(x(), shape=(-2,)), (2, 3, 4), [(2, 3, 4)], [(2, 3, 4)], []),
    ('Reshape 0,-2 keep', lambda: sym.Reshape(x(), shape=(2,-2)), (2, 3, 4), [(2, 3, 4)], [(2, 3, 4)], []),
    ('Reshape -3', lambda: sym.Reshape(x(), shape=(-3,4)), (2, 3, 4), [(2, 3, 4)], [(6, 4)], []),
    ('Reshape -3,-2', lambda: sym.Reshape(x(), shape=(-3,-2)), (2, 3, 4, 5), [(2, 3, 4, 5)], [(6, 4, 5)], []),
    ('Reshape -4', lambda: sym.Reshape(x(), shape=(-4,1,2,-2)), (2, 3, 4), [(2, 3, 4)], [(1, 2, 3, 4)], []),
    ('Reshape -4 -1', lambda: sym.Reshape(x(), shape=(2,-4,-1,3,-2)), (2, 6, 4), [(2, 6, 4)], [(2, 2, 3, 4)], []),
    ('Reshape reverse', lambda: sym.Reshape(x(), shape=(-1,0), reverse=True), (10, 5, 4), [(10, 5, 4)], [(50, 4)], []),
    ('Reshape 0,0,-1', lambda: sym.Reshape(x(), shape=(0,0,-1)), (2, 3, 4, 5), [(2, 3, 4, 5)], [(2, 3, 20)], []),
    ('Pool valid', lambda: sym.Pooling(x(), kernel=(3,3), stride=(2,2), pool_type='max'), (1, 8, 10, 10), [(1, 8, 10, 10)], [(1, 8, 4, 4)], []),
    ('Pool full', lambda: sym.Pooling(x(), kernel=(3,3), stride=(2,2), pool_type='max', pooling_convention='full'), (1, 8, 10, 10), [(1, 8, 10, 10)], [(1, 8, 5, 5)], []),
    ('Pool global', lambda: sym.Pooling(x(), kernel=(3,3), pool_type='avg', global_pool=True), (1, 8, 10, 10), [(1, 8, 10, 10)], [(1, 8, 1, 1)], []),
    ('Pool pad', lambda: sym.Pooling(x(), kernel=(3,3), stride=(2,2), pad=(1,1), pool_type='avg'), (1, 8, 11, 11), [(1, 8, 11, 11)], [(1, 8, 6, 6)], []),
    ('FC noflat', lambda: sym.FullyConnected(x(), num_hidden=7, flatten=False), (2, 3, 5), [(2, 3, 5), (7, 5), (7,)], [(2, 3, 7)], []),
    ('FC flat', lambda: sym.FullyConnected(x(), num_hidden=7), (2, 3, 5), [(2, 3, 5), (7, 15), (7,)], [(2, 7)], []),
    ('Deconv', lambda: sym.Deconvolution(x(), kernel=(4,4), stride=(2,2), pad=(1,1), num_filter=6), (1, 3, 8, 8), [(1, 3, 8, 8), (3, 6, 4, 4)], [(1, 6, 16, 16)], []),
    ('Deconv adj', lambda: sym.Deconvolution(x(), kernel=(3,3), stride=(2,2), pad=(1,1), adj=(1,1), num_filter=6, no_bias=False), (1, 3, 8, 8), [(1, 3, 8, 8), (3, 6, 3, 3), (6,)], [(1, 6, 16, 16)], []),
    ('Conv dil grp', lambda: sym.Convolution(x(), kernel=(3,3), dilate=(2,2), num_group=2, num_filter=8, pad=(1,1)), (1, 4, 9, 9), [(1, 4, 9, 9), (8, 2, 3, 3), (8,)], [(1, 8, 7, 7)], []),
    ('Conv1d', lambda: sym.Convolution(x(), kernel=(3,), num_filter=8, stride=(2,)), (1, 4, 9), [(1, 4, 9), (8, 4, 3), (8,)], [(1, 8, 4)], []),
    ('transpose', lambda: sym.transpose(x()), (2, 3, 4), [(2, 3, 4)], [(4, 3, 2)], []),
    ('transpose axes', lambda: sym.transpose(x(), axes=(0,2,1)), (2, 3, 4), [(2, 3, 4)], [(2, 4, 3)], []),
    ('sum keep', lambda: sym.sum(x(), axis=(1,2), keepdims=True), (2, 3, 4), [(2, 3, 4)], [(2, 1, 1)], []),
    ('mean all', lambda: sym.mean(x()), (2, 3, 4), [(2, 3, 4)], [(1,)], []),
    ('sum exclude', lambda: sym.sum(x(), axis=1, exclude=True), (2, 3, 4), [(2, 3, 4)], [(3,)], []),
    ('sum_axis', lambda: sym.sum_axis(x(), axis=-1), (2, 3, 4), [(2, 3, 4)], [(2, 3)], []),
    ('expand_dims', lambda: sym.expand_dims(x(), axis=-1), (2, 3), [(2, 3)], [(2, 3, 1)], []),
    ('squeeze', lambda: sym.squeeze(x()), (2, 1, 3, 1), [(2, 1, 3, 1)], [(2, 3)], []),
    ('squeeze axis', lambda: sym.squeeze(x(), axis=1), (2, 1, 3, 1), [(2, 1, 3, 1)], [(2, 3, 1)], []),
    ('split', lambda: sym.split(x(), num_outputs=3, axis=1), (2, 6, 4), [(2, 6, 4)], [(2, 2, 4), (2, 2, 4), (2, 2, 4)], []),
    ('split squeeze', lambda: sym.SliceChannel(x(), num_outputs=6, axis=1, squeeze_axis=True), (2, 6, 4), [(2, 6, 4)], [(2, 4), (2, 4), (2, 4), (2, 4), (2, 4), (2, 4)], []),
    ('RNN lstm bi', lambda: sym.RNN(x(), state_size=16, num_layers=2, mode='lstm', bidirectional=True), (5, 3, 8), [(5, 3, 8), (9728,), (4, 3, 16), (4, 3, 16)], [(5, 3, 32)], []),
    ('RNN gru', lambda: sym.RNN(x(), state_size=16, num_layers=3, mode='gru'), (5, 3, 8), [(5, 3, 8), (4512,), (3, 3, 16)], [(5, 3, 16)], []),
    ('RNN relu', lambda: sym.RNN(x(), state_size=16, num_layers=1, mode='rnn_relu'), (5, 3, 8), [(5, 3, 8), (416,), (1, 3, 16)], [(5, 3, 16)], []),
    ('Embedding', lambda: sym.Embedding(x(), input_dim=10, output_dim=4), (2, 3), [(2, 3), (10, 4)], [(2, 3, 4)], []),
    ('Flatten', lambda: sym.Flatten(x()), (2, 3, 4), [(2, 3, 4)], [(2, 12)], []),
    ('broadcast', lambda: sym.broadcast_mul(x(), sym.Variable('y', shape=(1,3,1))), (2, 3, 4), [(2, 3, 4), (1, 3, 1)], [(2, 3, 4)], []),
    ('BN axis', lambda: sym.BatchNorm(x(), axis=-1), (2, 3, 4), [(2, 3, 4), (4,), (4,)], [(2, 3, 4)], [(4,), (4,)]),
    ('prelu', lambda: sym.LeakyReLU(x(), act_type='prelu'), (2, 3, 4), [(2, 3, 4), (3,)], [(2, 3, 4)], []),
    ('Concat', lambda: sym.Concat(x(), sym.Variable('z', shape=(2,5,4)), dim=1), (2, 3, 4), [(2, 3, 4), (2, 5, 4)], [(2, 8, 4)], []),
    ('softmax', lambda: sym.log_softmax(x()), (2, 3), [(2, 3)], [(2, 3)], []),
    ('SoftmaxOutput multi', lambda: sym.SoftmaxOutput(x(), multi_output=True), (2, 3, 4), [(2, 3, 4), (2, 4)], [(2, 3, 4)], []),
]


@pytest.mark.parametrize("name,make,shape,args,outs,aux", CASES, ids=[c[0] for c in CASES])
def test_shape_rule_matches_mxnet(name: str, make: Callable[[], Symbol], shape: tuple, args: list,
                                  outs: list, aux: list) -> None:
    net = make()
    arg_shapes, out_shapes, aux_shapes = net.infer_shape(x=shape)
    assert arg_shapes == args
    assert out_shapes == outs
    assert aux_shapes == aux


def test_one_operator_table_carries_every_shape_rule() -> None:
    """Every op kvcli declares has its shape rule on its one table entry, every op the builder
    exposes is declared there, and every declared name is an op MXNet 1.9.1 registers (or an older spelling real files use)."""
    from kvcli.symbol import build, ops
    from kvcli.symbol.catalog import mxnet_operators

    assert [name for name, spec in ops.REGISTRY.items() if spec.shape_rule is None] == []
    assert [op for op in build.OPERATORS.values() if ops.spec(op) is None] == []
    # spellings of older MXNet versions and plugins that real symbol files use (sample_models)
    older = {"CuDNNBatchNorm", "_empty", "_sum", "WarpCTC", "MultiBoxPrior", "MultiBoxTarget",
             "MultiBoxDetection"}
    assert {name for name in ops.REGISTRY if name not in mxnet_operators()} == older
    assert ops.spec("SwapAxis").shape_rule is not ops.spec("transpose").shape_rule
    assert {name for name, spec in ops.REGISTRY.items() if spec.creation} == {
        "_zeros", "_ones", "_full", "_zeros_without_dtype", "_empty"}


def test_a_second_declaration_or_rule_is_refused() -> None:
    from kvcli.symbol import ops

    with pytest.raises(ValueError, match="registered twice"):
        ops._register(ops.OpSpec("LRN", lambda a: ["data"]))
    with pytest.raises(ValueError, match="two shape rules"):
        ops.attach_shape_rule(lambda a, i, o: None, "LRN")
    with pytest.raises(ValueError, match="does not declare"):
        ops.attach_shape_rule(lambda a, i, o: None, "NoSuchOp")
    assert ops.spec("LRN").kind == ops.OTHER  # MXNet paints LRN "other", not like BatchNorm
