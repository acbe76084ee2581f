"""2-bit gradient compression: replays of runs recorded from MXNet 1.9.1 must give the
same float32 bits, on ``device`` (MXNet's own store for them) and bad parameters must be
one clear error that changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

import kvcli
import kvcli.mx as mx
from kvcli.errors import DTypeMismatchError, UnsupportedError, CompressionError
from kvcli.mx import nd
from kvcli.store.compression import (
    GradientCompression,
    dequantize,
    packed_size,
    parse_compression,
    quantize,
)

RUNS = ["single_push", "multi_device", "multi_device_updater", "default_threshold", "two_devices"]


def replay(kv, run) -> list[np.ndarray]:
    """Push the recorded gradients into ``kv`` as MXNet did; the pulls after each step."""
    kv.set_gradient_compression(run["params"])
    shape = tuple(run["shape"])
    kv.init("w", nd.array(np.array(run["init"], np.float32)))
    if run["updater"] == "add":
        kv._set_updater(lambda k, recv, local: local.__iadd__(recv))
    pulled = []
    for step in run["grads"]:
        grads = [nd.array(np.array(g, np.float32), ctx=mx.cpu(i)) for i, g in enumerate(step)]
        kv.push("w", grads if run["devices"] > 1 else grads[0])
        out = nd.zeros(shape)
        kv.pull("w", out=out)
        pulled.append(out.asnumpy())
    return pulled


@pytest.mark.parametrize("run_name", RUNS)
def test_device_store_matches_mxnet_bit_for_bit(make_kv, ref, run_name) -> None:
    run = ref["compression"][run_name]
    pulled = replay(make_kv(run["store"]), run)
    for step, (got, want) in enumerate(zip(pulled, run["pulled"])):
        want = np.array(want, np.float32)
        assert got.dtype == np.float32
        assert got.tobytes() == want.tobytes(), f"step {step}: {got} != {want}"


def test_compression_really_changes_the_result(ref) -> None:
    """The recorded values are not those of an uncompressed push (the test can fail)."""
    run = ref["compression"]["multi_device"]
    plain = np.array(run["init"], np.float32) * 0 + sum(np.array(g, np.float32) for g in run["grads"][0])
    assert not np.array_equal(plain, np.array(run["pulled"][0], np.float32))
    assert set(np.unique(np.array(run["pulled"][0]) / 0.5).round(6)) <= {-4, -3, -2, -1, 0, 1, 2, 3, 4}


def test_kernel_packs_codes_as_mxnet_does() -> None:
    grad = np.array([0.6, -0.6, 0.1, 0.5, -0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.7], np.float32)
    residual = np.zeros(grad.size, np.float32)
    packed = quantize(grad, residual, np.float32(0.5))
    assert packed.size == packed_size(17) == 8  # two 32-bit words
    # element 0: 11 (high bits of byte 0), 1: 10, 2: 00, 3: 11 (at threshold); 4: 10 ...
    assert packed.tolist() == [0b11100011, 0b10000000, 0, 0, 0b11000000, 0, 0, 0]
    np.testing.assert_array_equal(residual[:5], np.float32([0.6, -0.6, 0.1, 0.5, -0.5]) - np.float32([0.5, -0.5, 0, 0.5, -0.5]))
    decoded = dequantize(packed, 17, np.float32(0.5))
    assert decoded.tolist() == [0.5, -0.5, 0, 0.5, -0.5] + [0] * 11 + [0.5]


def test_residual_carries_the_rest_to_the_next_push() -> None:
    compression = GradientCompression(parse_compression({"type": "2bit", "threshold": 0.5}))
    first = compression.round_trip("w", 0, np.full(3, 0.3, np.float32))
    second = compression.round_trip("w", 0, np.full(3, 0.3, np.float32))
    assert first.tolist() == [0, 0, 0] and second.tolist() == [0.5, 0.5, 0.5]
    compression.reset("w")
    assert compression.residuals == {}


def test_residual_resets_when_the_key_is_initialised_again(make_kv) -> None:
    kv = make_kv("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init(0, nd.zeros((3,)))
    kv.push(0, nd.ones((3,)) * 0.3)  # residual 0.3: sends 0
    kv.init(0, nd.zeros((3,)))
    kv.push(0, nd.ones((3,)) * 0.3)  # without the reset this would send 0.5
    out = nd.ones((3,))
    kv.pull(0, out=out)
    assert out.asnumpy().tolist() == [0, 0, 0]


@pytest.mark.parametrize("params, message", [
    ({"type": "1bit"}, "unknown gradient compression type '1bit': use one of 2bit"),
    ({"type": "2bit", "threshold": 0}, "threshold must be a finite number greater than 0"),
    ({"type": "2bit", "threshold": -1}, "threshold must be a finite number greater than 0"),
    ({"type": "2bit", "threshold": float("nan")}, "threshold must be a finite number greater than 0"),
    ({"type": "2bit", "threshold": "abc"}, "threshold 'abc' is not a number"),
    ({"type": "2bit", "threshold": True}, "threshold True is not a number"),
    ({"type": "2bit", "thresold": 0.5}, "has no parameter 'thresold'"),
    ({"threshold": 0.5}, "needs 'type'"),
    ("2bit:threshold", "needs a value"),
    (["2bit"], "takes a dict"),
])
def test_bad_parameters_are_one_clear_error_and_change_nothing(make_kv, ref, params, message) -> None:
    for label in ("unknown_type", "zero_threshold", "negative_threshold"):
        assert ref["compression"]["errors"][label] == "MXNetError"
    kv = make_kv("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.25})
    with pytest.raises(CompressionError, match=message):
        kv.set_gradient_compression(params)
    assert kv.gradient_compression.params() == {"type": "2bit", "threshold": 0.25}


def test_local_store_refuses_compression_as_mxnet_does(make_kv, ref) -> None:
    assert ref["compression"]["errors"]["local"] == "Exception"
    for name in ("local", "local_allreduce_cpu"):
        kv = make_kv(name)
        with pytest.raises(UnsupportedError, match=f"not supported by the '{name}' store .*'device'"):
            kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
        assert kv.gradient_compression is None


def test_only_float32_values_are_compressed(make_kv) -> None:
    kv = make_kv("device")
    kv.set_gradient_compression("2bit:threshold=0.5")
    kv.init(1, np.zeros(4, np.float64))
    with pytest.raises(DTypeMismatchError, match="float32 values only, this key holds float64"):
        kv.push(1, np.ones(4))
    out = nd.ones((4,), dtype="float64")
    kv.pull(1, out=out)
    assert out.asnumpy().tolist() == [0, 0, 0, 0]


def test_spec_strings_and_turning_it_off() -> None:
    assert parse_compression("2bit").params() == {"type": "2bit", "threshold": 0.5}
    spec = parse_compression("2BIT:threshold=0.3")
    assert spec.spec == f"2bit:threshold={float(np.float32(0.3))!r}"
    assert parse_compression(spec.spec) == spec
    assert parse_compression("none") is None and parse_compression({"type": "none"}) is None
    with kvcli.create("device", num_devices=2) as kv:
        kv.set_gradient_compression(spec.params())
        kv.set_gradient_compression(None)
        kv.init(0, np.zeros(2, np.float32))
        kv.push(0, np.full(2, 0.1, np.float32))
        assert kv.pull(0).tolist() == [np.float32(0.1)] * 2  # uncompressed again
