"""Record what MXNet 1.9.1's element-wise maths gives on a dense probe of each dtype's values.

Run with a Python that has mxnet 1.9.1 (from the repository root):

    $MXNET_PYTHON tests/data/make_mxnet_nd_math_reference.py

Writes tests/data/mxnet_nd_math_probe.npz: for every function of :data:`UNARY` (and
``power``) and every float dtype, MXNet's results on the probe below, stored compactly as
one 8-byte hash per chunk of :data:`CHUNK` consecutive probe values (NaN made canonical
first, so that any NaN matches any NaN) plus the first :data:`HEAD` results in full. A test
recomputes kvcli's results on the same probe and compares chunk by chunk
(``tests/nd/test_math_probe.py``): equal hashes mean bit-equal results.

The probe (one definition, imported by the test):
  float32: every 1024th bit pattern, each with random low bits (4,194,304 values, in an
           order that spreads every chunk over all exponents), 1,048,576 uniform values in
           [-16, 16), 262,144 in [-1, 1), 262,144 random bit patterns, after 64 special
           values (0, -0, +-inf, NaN, subnormals, +-1, the largest float ...);
  float64: every 2^46th bit pattern with random low bits (262,144), 131,072 uniform in
           [-16, 16), 65,536 in [-1, 1), after the same specials;
  float16: all 65,536 bit patterns.
The random values come from splitmix64 written out below, so every numpy version draws the
same ones. ``power`` pairs the probe with exponents (uniform, small integers, specials).

This module imports mxnet only in :func:`main`: the test imports it for the probe.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "mxnet_nd_math_probe.npz"
CHUNK = 4096
HEAD = 64
#: MXNet's element-wise maths functions of ``nd`` recorded here.
UNARY = (
    "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "tanh", "sinh", "cosh",
    "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "erf", "cbrt", "gamma", "gammaln",
    "sigmoid", "softsign", "sqrt", "rsqrt", "rcbrt", "reciprocal", "square", "degrees", "radians",
    "abs", "negative", "sign", "relu", "floor", "ceil", "trunc", "round", "rint", "fix",
)
DTYPES = ("float32", "float64", "float16")

_SPECIALS = [
    0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-45, -1e-45, 1e-40, -1e-40,
    1.1754942e-38, 1.1754944e-38, 3.4028235e38, -3.4028235e38, 1e30, -1e30, 88.72283, 88.72284, -87.33654,
    -103.97208, -103.2789, 0.1, -0.1, 1e-8, -1e-8, 3.1415927, -3.1415927, 1.5707964, 0.7853982, 6.2831855,
    120.0, -120.0, 1e5, 1e10, -1e10, 0.99999994, 1.0000001, -0.99999994, -1.0000001, 20.0, 22.0, 9.0, 0.25,
    0.75, 1.25, 1.5, 2.5, -2.5, 3.5, -3.5, 35.0, 36.0, -42.0, -2.7, 8.5e37, 65504.0, 65520.0, 6e-8,
]


def _splitmix64(index: np.ndarray) -> np.ndarray:
    """splitmix64 of each uint64 index: a fixed stream of random 64-bit words."""
    with np.errstate(over="ignore"):
        z = index.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x632BE59BD9B4E019)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _uniform(stream: int, count: int, low: float, high: float) -> np.ndarray:
    words = _splitmix64(np.arange(count, dtype=np.uint64) + np.uint64(stream << 40))
    return low + (words >> np.uint64(11)).astype(np.float64) * (high - low) / 2.0**53


def probe(dtype: str) -> np.ndarray:
    """The probe's input values for ``dtype`` (see the module's docstring)."""
    if dtype == "float16":
        return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    with np.errstate(over="ignore"):
        specials = np.array(_SPECIALS, dtype=dtype)
    if dtype == "float32":
        k = (np.arange(1 << 22, dtype=np.uint64) * np.uint64(2654435761)) & np.uint64((1 << 22) - 1)
        low = _splitmix64(k) & np.uint64(1023)
        grid = (k * np.uint64(1024) + low).astype(np.uint32).view(np.float32)
        raw = (_splitmix64(np.arange(1 << 18, dtype=np.uint64) + np.uint64(3 << 40)) >> np.uint64(32))
        parts = [specials, grid, _uniform(1, 1 << 20, -16, 16), _uniform(2, 1 << 18, -1, 1),
                 raw.astype(np.uint32).view(np.float32)]
    else:
        k = (np.arange(1 << 18, dtype=np.uint64) * np.uint64(2654435761)) & np.uint64((1 << 18) - 1)
        grid = ((k << np.uint64(46)) | (_splitmix64(k) & np.uint64((1 << 46) - 1))).view(np.float64)
        parts = [specials, grid, _uniform(1, 1 << 17, -16, 16), _uniform(2, 1 << 16, -1, 1)]
    return np.concatenate([np.asarray(p).astype(dtype) for p in parts])


def power_probe(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Bases and exponents for ``power``: a quarter of the probe against uniform exponents in
    [-8, 8), small integer exponents (negative bases included) and the specials."""
    base = probe(dtype)
    n = base.size
    exponent = _uniform(4, n, -8, 8)
    exponent[1::4] = np.floor(_uniform(5, n, -6, 7))[1::4]
    with np.errstate(over="ignore", invalid="ignore"):  # signalling NaNs of the probe turn quiet
        exponent[2::4] = base[::-1][2::4]
        exponent[3::4] = np.array(_SPECIALS * (n // len(_SPECIALS) + 1))[: n][3::4]
        return base, exponent.astype(dtype)


def canonical_bits(values: np.ndarray) -> np.ndarray:
    """The results' bit patterns with every NaN made the same (its sign and payload vary)."""
    out = np.array(values, copy=True)
    out[np.isnan(out)] = np.nan
    word = {2: np.uint16, 4: np.uint32, 8: np.uint64}[out.dtype.itemsize]
    return out.view(word)


def chunk_hashes(values: np.ndarray) -> np.ndarray:
    """One 8-byte blake2b hash (as uint64) per :data:`CHUNK` consecutive results."""
    data = canonical_bits(values)
    digests = [hashlib.blake2b(data[i: i + CHUNK].tobytes(), digest_size=8).digest()
               for i in range(0, data.size, CHUNK)]
    return np.frombuffer(b"".join(digests), dtype="<u8")


def main() -> None:
    import mxnet as mx

    arrays: dict[str, np.ndarray] = {}
    for dtype in DTYPES:
        x = mx.nd.array(probe(dtype), dtype=dtype)
        for name in UNARY:
            result = getattr(mx.nd, name)(x).asnumpy()
            arrays[f"{name}.{dtype}"] = chunk_hashes(result)
            arrays[f"{name}.{dtype}.head"] = result[:HEAD]
        base, exponent = power_probe(dtype)
        result = mx.nd.power(mx.nd.array(base, dtype=dtype), mx.nd.array(exponent, dtype=dtype)).asnumpy()
        arrays[f"power.{dtype}"] = chunk_hashes(result)
        arrays[f"power.{dtype}.head"] = result[:HEAD]
    arrays["mxnet_version"] = np.array(mx.__version__)
    np.savez_compressed(OUTPUT, **arrays)
    print(f"recorded {len(UNARY) + 1} functions x {len(DTYPES)} dtypes into {OUTPUT.name} "
          f"({OUTPUT.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
